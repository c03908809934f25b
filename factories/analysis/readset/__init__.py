"""Which instance attributes a method sequence reads before it writes them.

This is the one analysis everything else consumes: factories check their stub specs against it
before building an object, contracts pin the hand-off between builder and impl with it, and
``tools/audit_stubs.py`` audits vLLM's own ``object.__new__`` stubs with it.

The walk is a small abstract interpretation over a method's AST.  Its state is the set of
attributes *definitely* written on every path so far; ``if`` branches meet by intersection, loop
bodies may run zero times, ``return``/``raise`` end a path.  A ``self.X`` load outside that set
which the class body does not define is a *required read*: an ``object.__new__`` stub must set X.
A read on any branch counts (the analysis cannot know which branch a test takes; the audit
report marks that class of finding), except where literal values decide it: stub fields set to
literals, literal arguments and defaults prune ``if`` branches, conditional expressions and the
operands of ``and``/``or`` that short-circuit skips.  ``hasattr(self, "x")`` guards narrow the
branch they protect, an assertion's message (evaluated only when the test already fails) is not a
read, and the attributes every object has (``__dict__``, ``__class__``) are never missing.
``self.m(...)`` is followed into ``m`` through the MRO, ``super().m(...)`` past the defining
class, properties into their getters and setters.

Where the test's values do not decide a branch, its set-up can still say which way it goes: a
block that alone reads fields the test set is one it prepared (``provisioned``), and a
condition that reads a field the stub lacks is a guard written after the test (``both_arms``).
Reads record the undecided blocks they sit in for the first. Where the test asserts the call's
result (``CallContext.returns``), an arm that only returns another known value is not its
path (``return None`` where it asserts the result ``is not None``); where it asserts a field of
the result (``CallContext.result_fields``), a literal local the returned dataclass was handed
for that field holds the asserted value while that call's arguments run; an arm of an
undecided ``if`` that surely reaches an ``assert`` the test's values make false (``verify =
md.dcp_verify; assert verify is not None`` of ``dcp_verify=None``) fails the test, so the
other arm is its path (``Walker.surely_fails``); where it asserts a field of an item of
a list field of the result true (``CallContext.result_items``: ``req = meta.requests[0];
assert req.can_save``) and the call returns the object a local of it holds, a method of
``self`` handed that local, past which nothing can change the list's items or that field,
finds ``[r for r in meta.requests if r.can_save]`` not empty (``HELD_ITEMS``,
``StatementHandlers.ruled_out_empty``). Where the stand-in audit asks
(``CallContext.stated_locals``), what the test states decides more: locals bound to such
conditions, a stated literal's membership in the code's own display of literals (``backend not
in ("ray", "mp")``), ``isinstance`` of objects the test built, ``x in self.ids`` of an empty
container the test wrote in place for the namespace made ``self`` (``ids=set()``: false, until
code may have filled it: ``Decisions.forget_empty``), loops over items the test states (their
body runs), a list of stand-ins past ``if not layers: raise`` (it holds an item:
``Statements.narrow_filled``), and a read past an undecided ``if`` whose arms that may leave
all make it before they may (``if cache: n = md.n; ... return``, then ``md.n``) is on every
path (``Walker.uncover``); a method taking only ``*args``/``**kwargs`` that hands them on
unchanged (``super().__init__(*args, **kwargs)``) binds its callee to the test's call, stated
values included (``CALL_SHAPE``).  Keywords of the test's call that no named parameter takes
are the items of the callee's ``**kwargs`` with their stated values, where it only reads that
dict by key (``_syntax.gathered_keywords``: ``kwargs["vllm_config"]``); a function the test
replaced with one that takes any arguments and gives a literal (``lambda *a, **k: None``,
``Unheard.silent``) never raises what ``pytest.raises`` expects, so calling it leaves them
known.

What the test arranged around the call (methods and functions it patched, which of them raise,
which arguments their replacements never read, ``pytest.raises``, a task it may cancel) is a
``CallContext`` passed into ``analyze``; nothing is set on the analyzer from outside, so a
call's report does not depend on earlier calls.  A lambda handed to a parameter the test's
replacement never reads (the layer factory a ``make_layers`` replaced by ``lambda *_, **kw:
...`` is handed) is never called: its body is not walked (``CallContext.unheard``).

Besides ``self``, a call reads the stand-ins a test hands it as arguments
(``SimpleNamespace(prefill=...)``) and nested objects it set on the stub (``stub.mla_dims =
SimpleNamespace(...)``): ``MethodReport.chain_reads`` lists each attribute chain read from them
(``metadata.prefill.query_start_loc``, ``self.mla_dims.v_head_dim``), placed as ``self`` reads
are, followed through fields of ``self`` that store one (``self.cfg = vllm_config``, then
``self.cfg.x``), into methods, module functions, static and class methods and constructors of
the tree they are passed to; a block is prepared for them only by the links the stand-ins hold
(``provided_chains``), not by the stub field they hang on.  ``ReadSetAnalyzer.param_classes``
names the class each parameter's annotation names, and ``declares`` whether that class declares
a name (drift) or not (duck typing).

Where things are (the ``_`` modules are private):

- ``_model``: the values (``AttributeAccess``, ``ParamAccess``, ``ChainRead``, ``CallSite``,
  ``MethodReport``, ``FunctionReport``, ``CallContext``), the ``Recorder`` of one walk and its
  result ``Walked``, the chain marks a state may hold;
- ``_analyzer``: ``ReadSetAnalyzer`` (``analyze``, ``analyze_sequence``, ``analyze_function``,
  the memo, replaced methods, ``MAX_CALL_DEPTH``);
- ``_walker``: ``Walker``, one walk of one body, and the control flow its handlers share;
- ``_statements``, ``_expressions``, ``_calls``, ``_decisions``: the walker's handlers, a
  method per AST node kind (``stmt_If``, ``expr_BoolOp``), calls, and known values;
- ``_chains``: reads from the stand-ins a call is handed (parameters, nested objects on
  ``self``, fields of ``self`` that store one), their guards, and the module functions,
  static and class methods and constructors a stand-in is passed to (``MAX_FUNCTION_DEPTH``);
- ``_declared``: the in-tree class a parameter's annotation names, and the names a class
  declares (``declares``: drift or duck typing);
- ``_paths``: undecided blocks (``BlockIds``), ``provisioned``, a chain's links
  (``chain_links``), one access per name;
- ``_handovers``: where a walked body hands a stand-in on whole (``Recorder.escapes``) and
  every chain its text reads of one (``Recorder.touched``), for stale namespace fields;
  whether a callee runs as written (``plain_function``, ``plainly_built``);
- ``_returned``: the call whose object the analysed call returns, and the locals it hands
  the fields the test asserts (``CallContext.result_fields``, ``returned_build``), where a
  dataclass stores them as given (``stores_as_given``); the local it returns
  (``returned_local``), whether code keeps the items of its list (``keeps_items``) and a
  list filtered out of it (``filtered_items``);
- ``_syntax``: small questions about a node's shape, and the handler dispatch.
"""

from __future__ import annotations

from factories.analysis.readset._analyzer import MAX_CALL_DEPTH, ReadSetAnalyzer
from factories.analysis.readset._chains import MAX_FUNCTION_DEPTH
from factories.analysis.readset._declared import annotation_class, declares
from factories.analysis.readset._handovers import plain_function, plainly_built
from factories.analysis.readset._model import (
    AttributeAccess,
    CallContext,
    CallSite,
    ChainRead,
    FunctionReport,
    MethodReport,
    ParamAccess,
)

__all__ = [
    "MAX_CALL_DEPTH",
    "MAX_FUNCTION_DEPTH",
    "AttributeAccess",
    "CallContext",
    "CallSite",
    "ChainRead",
    "FunctionReport",
    "MethodReport",
    "ParamAccess",
    "ReadSetAnalyzer",
    "annotation_class",
    "declares",
    "plain_function",
    "plainly_built",
]
