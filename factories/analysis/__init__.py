"""The AST analyzer: what vLLM's methods read, and what a test's ``object.__new__`` stub sets.

Text only: nothing here imports torch or vllm (the audit runs in pre-commit on any Python 3.10+
with attrs). One job per module:

- ``source_tree``: parses a tree that holds ``vllm/`` (lazily, once), with an overlay for a base
  version's text.
- ``classes``: resolves names through imports to classes, their MROs and members;
  ``class_refs``: the structured class a stub names (``ClassRef``), which ``classes`` resolves.
- ``readset/``: walks a method body for the attributes it reads on each path, following
  ``self.m()``, ``super().m()`` and properties through the MRO, under the ``CallContext`` the
  test states (patches, ``pytest.raises``, detached tasks).
- ``values``: what a test states about a value (constructed objects, mocks, enum members,
  lengths, arrays) and how such values compare, so they can decide branches; ``asserted``: what
  a test module states about a call's result and arguments for the stand-in audit (an
  ``assert`` on the call or on the local bound to its result, arithmetic over names bound
  once); ``called_mocks``: the ``if`` arm of a stub's method that alone can run a mock the
  test put on the stub and asserts, after the call, was called (the test's path).
- ``binding``: parameter lists from the AST and the binding of a call's shape to one.
- ``_walk``: the hot tree walks (``ast.walk``'s nodes in its order without its generators,
  parent links in one pass, statements only), shared by ``readset/``, ``extraction/`` and the
  audit.
- ``extraction/``: finds the stubs in a test module and follows each one through aliases,
  helpers, callers and parametrize cases.
- ``audit``: ``StubAuditor``, from files to stubs to findings; ``class_audit``: one stub
  against its class (``ClassAuditor``); ``report``: stale fields, finding builders, merging and
  order; ``allowlist``: known findings to silence; ``findings``: the frozen result values;
  ``standin_audit``: with ``--standins``, the links a ``SimpleNamespace`` stand-in lacks where
  the code reads them (on a stub's field, passed to a stub's method or to a function, static
  or class method the test imports, or made ``self`` by any spelling); ``mock_specs``: what a
  mock with a spec answers (``dir`` of its spec class), for the same audit.
- ``file_audit``: one test file's part of an audit as plain values (its stubs' verdicts, its
  stand-ins' findings), before the run merges them; ``result_cache``: those values kept across
  runs, keyed by the content of the file, of every module its audit consulted and of this
  package's code (in ``audit-results`` of the project's cache, ``factories.locations``);
  ``workers``: the same values computed in forked worker processes (``--jobs``), each file in
  analysis objects of its own, so a report never depends on how the files were shared out.
- ``release_summary``: a whole ``tests/`` tree audited (stubs, then the stand-ins) and told as
  counts: stand-ins by kind, findings by level and kind (``audit-stubs --release-summary``).
- ``trigger``, ``since`` and ``baseline`` serve pre-commit: the stubs a ``vllm/`` change
  affects, the reads a change added, the findings already known.

The command line is ``factories.cli``; how well all of this does is measured by
``factories.evaluation``.
"""
