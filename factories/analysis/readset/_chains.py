"""Reads from the stand-ins a call is handed (``ChainRead``): attribute chains on the analysed
method's parameters and on objects stored on ``self``, what guards them, and the module
functions of the tree a stand-in is passed on to.

A chain is placed as a ``self`` read is (the walker's ``certain`` and ``chain``), so the rules
of the walk hold for it unchanged: branches the test's values decide, loops, handlers, early
returns, ``Walker.both_arms``.  What is known about a chain along a path lives in the walk's
state as marks (``WRITTEN_MARK``, ``GUARDED_MARK``), so paths meet for it as for ``self``
attributes, and a called method or function sees what its caller established.
"""

from __future__ import annotations

import ast

import attrs

from factories.analysis._walk import child_nodes, walk
from factories.analysis.classes import ClassInfo, FunctionRef, Member, MemberKind
from factories.analysis.readset._handovers import plain_function, plainly_built
from factories.analysis.readset._model import (
    GUARDED_MARK,
    PROBED_MARK,
    WRITTEN_MARK,
    ChainRead,
    alias_mark,
    aliased,
    placed_after,
    unaliased,
)
from factories.analysis.readset._syntax import getattr_probe, literal_name
from factories.errors import SourceError

#: How many module functions deep a stand-in is followed (``f(metadata)`` calling
#: ``g(metadata.prefill)``...); deeper functions are assumed to read nothing from it.  A hop
#: is a callee it is passed on to (``passed_frames``): a function or another object's
#: constructor, not ``super().__init__(...)`` of the object being built.
MAX_FUNCTION_DEPTH = 3

#: The prefix of a function's entry in a walk's call stack (methods have none).
FUNCTION_FRAME = "fn:"

#: The prefix of the entry of a constructor's ``__init__`` a stand-in was passed on to
#: (``Other(cfg)``, ``PassedCallee.built``), in a walk's call stack: a hop to another object,
#: unlike the ``super().__init__(...)`` frames of the object's own constructor chain.
BUILT_FRAME = "new:"

#: The prefix of an alias key that names an element of a variadic parameter (``element_key``).
STAR_ELEMENT = "*"

#: The chain link of an element of a container (``layers[0]``, ``caches[i]``, whatever the
#: index): a read through a subscript takes it, and it reaches the items of a container
#: display a test sets as a field (``StandInField.items``).
ELEMENT = "[]"

Chain = tuple[str, tuple[str, ...]]


def slot_link(index: int) -> str:
    """The chain link of item ``index`` of a tuple the test wrote out (``stub.pair = (ns,
    blocks)``, ``stub.reqs["r"] = (ns, blocks)``), where the text names the position
    (``self.pair[0]``, ``self.reqs.get(k)[0]``, ``req, blocks = self.pair``, ``for k, (req,
    blocks) in self.reqs.items()``): its items are known by position only.  Anywhere else
    a position is an element (``ELEMENT``): ``slotted`` decides."""
    return f"[{index}]"


def slotted(root: str, path: tuple[str, ...], tuples: frozenset[str]) -> tuple[str, ...]:
    """``path`` from ``root`` with each ``slot_link`` made an element unless the chain up to
    it is one where the test's objects hold a tuple it wrote out (``CallContext.tuples``):
    ``self.layers[0]`` reads an element of ``layers`` whatever it holds."""
    out: list[str] = []
    for link in path:
        if link[:1] == "[" and link != ELEMENT and ".".join((root, *out)) not in tuples:
            link = ELEMENT
        out.append(link)
    return tuple(out)


@attrs.frozen
class PassedCallee:
    """What a call that hands a stand-in on runs: ``function``, whose first ``skip``
    parameters the call does not pass (a classmethod's ``cls``, ``__init__``'s ``self``);
    ``built``: a constructor's class and its ``__init__``, walked on the new object;
    ``klass``: the class a class method is called on."""

    function: FunctionRef
    skip: int = 0
    built: tuple[ClassInfo, Member] | None = None
    # A class method's class (its ``cls``), walked as a function: ``cls(cfg)`` builds one.
    klass: ClassInfo | None = None


def passed_frames(stack: tuple[str, ...]) -> int:
    """How many frames of the call stack are callees a stand-in was passed on to (a function,
    a constructor built with it, or the analysed call when it is a constructor): what
    ``MAX_FUNCTION_DEPTH`` bounds.  A method the walk followed on the same object is no hop:
    ``super().__init__(...)`` down a constructor chain runs on the object the first
    ``__init__`` builds, so a builder whose ``__init__`` hands its config to its base's spends
    none of the depth on that (``GDN.__init__`` passing ``vllm_config`` on to
    ``_resolve_gdn_prefill_backend``, which hands it to a check that reads it)."""
    entry = 1 if stack and ".__init__:" in stack[0] and not _prefixed(stack[0]) else 0
    return entry + sum(1 for frame in stack if _prefixed(frame))


def _prefixed(frame: str) -> bool:
    return frame.startswith((FUNCTION_FRAME, BUILT_FRAME))


def _outer(state: frozenset[str]) -> frozenset[str]:
    """Marks that hold across a constructor call: not those about a ``self`` chain, which
    name another object on each side."""
    return frozenset(m for m in state if not m[1:].startswith("self."))


def marks(state: frozenset[str]) -> frozenset[str]:
    """The chain marks of a state (what a called function needs of it, and gives back)."""
    return frozenset(n for n in state if n[:1] in (WRITTEN_MARK, GUARDED_MARK, PROBED_MARK))


class ChainHandlers:
    """The stand-in half of ``Walker`` (its state lives there)."""

    def chain_of(self, node: ast.AST | None, state: frozenset[str] = frozenset()) -> Chain | None:
        """``(root, path)`` when ``node`` is an attribute chain on a stand-in: a parameter of the
        analysed call (directly, or through a local alias or a parameter of a called method
        or function it was passed to), a field of ``self`` that ``state`` says holds a chain
        on one (``self.model_config = vllm_config.model_config``, ``alias_mark``), or a name
        on ``self`` that the class does not define as a method or property (a field a test
        may set to a nested stand-in).  A bare parameter gives an empty path; a bare ``self``
        gives None, and so does every node unless the context asks for chains
        (``CallContext.chains``)."""
        found = self.chain_through(node, state)
        return None if found is None else found[0]

    def chain_through(
        self, node: ast.AST | None, state: frozenset[str] = frozenset()
    ) -> tuple[Chain, int] | None:
        """``chain_of``, with how many of the chain's first links are not written at
        ``node`` but stood for by the local, parameter or field of ``self`` it starts from
        (``x.m`` with ``x = getattr(p, "n", None)``: one, ``n``)."""
        if not self.context.chains:
            return None
        parts: list[str] = []
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
                return None  # a slice is a new container, not an element
            parts.append(node.attr if isinstance(node, ast.Attribute) else _link(node))
            node = node.value
        if not isinstance(node, (ast.Name, ast.Call)):
            return None
        path = tuple(reversed(parts))
        if isinstance(node, ast.Call):
            got = _got(node)
            if got is not None:  # ``self.reqs.get(k)[0].x``: an element of ``self.reqs``
                inner = self.chain_through(got, state)
                if inner is None:
                    return None
                (root, head), through = inner
                return (root, self.slotted(root, (*head, ELEMENT, *path))), through
            root = self.returned_itself(node)  # ``get_config().model_config``
            return None if root is None else ((root, self.slotted(root, path)), 0)
        found = self._chain_through_name(node, path, state)
        if found is None:
            return None
        (root, full), through = found
        return (root, self.slotted(root, full)), through

    def slotted(self, root: str, path: tuple[str, ...]) -> tuple[str, ...]:
        """``slotted`` under this call's ``CallContext.tuples``."""
        return slotted(root, path, self.context.tuples)

    def _chain_through_name(
        self, node: ast.Name, path: tuple[str, ...], state: frozenset[str]
    ) -> tuple[Chain, int] | None:
        """``chain_through`` from a name: ``self``, a local alias, a parameter."""
        if node.id == self.self_name:
            if not path:
                return None
            held = aliased(state, path[0]) if state else None
            if held is not None:
                root, *head = held.split(".")
                return (root, (*head, *path[1:])), len(head)
            member = self.index.lookup(self.cls, path[0])
            if member is not None and member.kind is not MemberKind.ATTRIBUTE:
                return None
            return ("self", path), 0
        if node.id in self.aliases:
            root, *head = self.aliases[node.id].split(".")
            return (root, tuple(head) + path), len(head)
        if self.entry and node.id in self.params and node.id not in self.shadowed:
            return (node.id, path), 0
        if self.installed(node.id):
            return (installed_root(node.id), path), 0
        return None

    def installed(self, name: str) -> bool:
        """Whether ``name`` read here is the module global the test set to a stand-in
        (``CallContext.installed``): no parameter, local or import of the function binds it."""
        return (
            bool(self.context.installed)
            and (self.module.name, name) in self.context.installed
            and name not in self.params
            and name != self.self_name
            and name not in self.locals
            and name not in self.local_imports
        )

    def maybe_chain(self, node: ast.AST | None) -> tuple[Chain, int] | None:
        """``chain_through`` for a chain on a name that holds a stand-in chain on some paths
        only (``Walker.maybe_roots``)."""
        if not self.context.chains:
            return None
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in self.maybe_roots:
            return None
        root, *head = self.maybe_roots[node.id].split(".")
        return (root, (*head, *reversed(parts))), len(head)

    def maybe_attribute(self, node: ast.Attribute, state: frozenset[str]) -> bool:
        """An attribute load on a name that holds a stand-in chain on some paths only
        (``maybe_chain``): recorded as a read that may happen; whether it was one."""
        if not self.maybe_roots:
            return False
        found = self.chain_through(node, state) is None and self.maybe_chain(node)
        if not found or not found[0][1]:
            return False
        self.chain_read(found[0], node, state, through=found[1], possible=True)
        return True

    def chain_read(
        self,
        chain: Chain,
        node: ast.AST,
        state: frozenset[str],
        guarded: bool = False,
        through: int = 0,
        possible: bool = False,
    ) -> None:
        """Record a read of ``chain`` here, unless the walk itself wrote a link of it on every
        path so far (then the object read is the walk's, not the stand-in's).  A link the code
        allows to be missing there (``GUARDED_MARK``) guards the read where it is the last;
        before it, the read judges only the links past it (``ChainRead.optional``).  A link a
        ``getattr`` with a default stood for (``PROBED_MARK``) is allowed to be missing only
        where the read reaches it through what that ``getattr`` gave (its first ``through``
        links come from the local or parameter read): written out again (``p.n.m`` after
        ``getattr(p, "n", None)``), it raises where ``p`` lacks ``n``."""
        root, path = chain
        text = root
        optional = 0
        for length, name in enumerate(path, 1):
            text += "." + name
            if WRITTEN_MARK + text in state:
                return
            if GUARDED_MARK + text in state or (length <= through and PROBED_MARK + text in state):
                if length == len(path):
                    guarded = True
                else:
                    optional = length
        certain, blocks = (False, None) if possible else (self.certain, self.chain)
        self.rec.chains.append(
            ChainRead(root, path, self.loc(node), certain, guarded, blocks, optional)
        )

    def chain_attribute(self, node: ast.Attribute, state: frozenset[str]) -> bool:
        """An attribute load on a stand-in: recorded as a chain; whether it was one.  Below
        ``self``, a chain of one name is the ``self`` read itself, not a chain; not in a
        method walked as a function (``Cls.m(mock)``), whose ``self`` is a parameter like
        any other, handed the stand-in."""
        found = self.chain_through(node, state)
        if found is None:
            return False
        chain, through = found
        if not chain[1] or (
            chain[0] == "self" and self.self_name is not None and len(chain[1]) < 2
        ):
            return False
        self.chain_read(chain, node, state, through=through)
        self.typed_member(chain, state)
        return True

    def typed_class(
        self, chain: Chain, state: frozenset[str], name: str | None = None
    ) -> ClassInfo | None:
        """The class of the ``object.__new__`` stub the call's namespaces hold at ``chain``
        (``CallContext.typed``), unless the walk wrote a link of it (then the object is the
        walk's), or the test set ``name`` on the stub (then ``stub.name`` is the test's)."""
        if not self.context.typed:
            return None
        root, path = chain
        text = root
        for link in path:
            text += "." + link
            if WRITTEN_MARK + text in state:
                return None
        found = next((t for t in self.context.typed if t[0] == text), None)
        if found is None or name in found[2]:
            return None
        dotted = found[1]
        try:
            return self.index.resolve_absolute(dotted)
        except SourceError:
            return None

    def typed_member(
        self, chain: Chain, state: frozenset[str], call: ast.Call | None = None
    ) -> frozenset[str]:
        """``stub.prop`` (``call`` None) or ``stub.m(...)`` (``call``) where the chain before
        the last link holds a stub of a class of the tree (``typed_class``) that defines it
        as a property or a plain method the test did not replace: its ``def`` walked as a
        function whose first parameter is that chain (and, for a call, whose parameters the
        call's stand-in chains bind), its chain reads placed here as ``pass_on`` places a
        callee's.  What it stores on ``self`` marks the chain written, as a store through
        the chain would."""
        root, path = chain
        if not path:
            return state
        cls = self.typed_class((root, path[:-1]), state, path[-1])
        if cls is None:
            return state
        kind = MemberKind.METHOD if call is not None else MemberKind.PROPERTY
        found = self._member_def(cls, path[-1], (kind,))
        if found is None:
            return state
        member, node = found
        positional = [a.arg for a in list(node.args.posonlyargs) + list(node.args.args)]
        if not positional:
            return state
        aliases = {positional[0]: ".".join((root, *path[:-1]))}
        params: dict[str, object] = {}
        if call is not None:
            for index, arg in enumerate(call.args):
                if isinstance(arg, ast.Starred):
                    break
                held = self.chain_of(arg, state)
                if held is not None and index + 1 < len(positional) and self.handed(held):
                    aliases[positional[index + 1]] = ".".join((held[0], *held[1]))
            names = set(positional) | {a.arg for a in node.args.kwonlyargs}
            for keyword in call.keywords:
                held = self.chain_of(keyword.value, state) if keyword.arg in names else None
                if held is not None and self.handed(held):
                    aliases[keyword.arg] = ".".join((held[0], *held[1]))
            params = self.literal_shape(call).bind_literals(node, bound=True)
        walked = self.analyzer.walk_function(
            self.context,
            FunctionRef(member.owner.module, node),
            marks(state),
            aliases,
            self.stack,
            params,
        )
        for read in walked.recorder.chains:
            read = placed_after(read, self.chain)
            if self.certain and not (self.context.expect_raise and self.raised):
                self.rec.chains.append(read)
            else:
                blocks = read.blocks if self.chain is not None else None
                self.rec.chains.append(attrs.evolve(read, certain=False, blocks=blocks))
        for handed in ("touched", "escapes", "filled"):
            getattr(self.rec, handed).update(getattr(walked.recorder, handed))
        if call is not None and walked.chain is not None:
            self.call_chains[id(call)] = walked.chain  # ``return self.caches[i]``
        if walked.state is None:
            return state
        return state | _outer(marks(walked.state))

    def chain_written(self, target: ast.expr, state: frozenset[str]) -> frozenset[str]:
        """``metadata.x = ...``: reads under ``metadata.x`` are no longer the stand-in's."""
        chain = self.chain_of(target, state)
        if chain is None or not chain[1]:
            return state
        return state | {WRITTEN_MARK + ".".join((chain[0], *chain[1]))}

    def field_stored(
        self, target: ast.Attribute, value: ast.expr | None, state: frozenset[str]
    ) -> frozenset[str]:
        """``self.<name> = value``: what ``self.<name>`` held is gone (and what is read under
        it is not a nested stand-in of the stub); where ``value`` is a chain on a stand-in
        the call was handed (not one on ``self``), ``self.<name>.x`` reads that stand-in
        from here on (``alias_mark``), in this method and in the ones it calls."""
        name = target.attr
        chain = self.chain_of(value, state) if value is not None else None
        state = self.chain_written(target, unaliased(state, name))
        if chain is None or chain[0] == "self":
            return state
        return state | {alias_mark(name, ".".join((chain[0], *chain[1])))}

    def held_path(self, node: ast.AST | None, state: frozenset[str]) -> str | None:
        """``param_path``, or the chain a field of ``self`` holds (``self.vllm_config`` after
        ``self.vllm_config = vllm_config``), or the field itself (``runner = self.runner``,
        where the test may have set a namespace): what a local alias or a called method's
        parameter then stands for.  ``getattr(p, "n")`` and ``getattr(p, "n", default)``
        stand for ``p.n`` (with a default, ``chain_probe`` marks ``p.n`` as one the code
        allows to be missing)."""
        itself = self.returned_itself(node) if self.context.chains else None
        if itself is not None:
            return itself  # ``config = get_config()``: what the test's replacement returns
        probed = getattr_probe(node) if self.context.chains else None
        if probed is not None:
            inner = self.held_path(probed[0], state)
            return None if inner is None else f"{inner}.{probed[1]}"
        element = self.element_held(node)
        if element is not None:
            return element
        if isinstance(node, ast.Call) and id(node) in self.call_chains:
            return self.call_chains[id(node)]  # ``cache = self.cache(i)``
        if isinstance(node, ast.Subscript) or (isinstance(node, ast.Call) and _got(node)):
            # ``layer = self.model.layers[0]``: an element of a container on a stand-in;
            # ``req = self.reqs.get(k)``, the value under a key of one.
            chain = self.chain_of(node, state)
            return None if chain is None else ".".join((chain[0], *chain[1]))
        path = self.param_path(node)
        if path is not None or not self.is_self_attr(_root_attribute(node)):
            return path
        chain = self.chain_of(node, state)
        return None if chain is None else ".".join((chain[0], *chain[1]))

    def element_held(self, node: ast.AST | None) -> str | None:
        """``kwargs["cfg"]`` (or ``args[1]``) of this function's own ``**kwargs``/``*args``
        with a literal key: the stand-in the caller bound to that element (``forwarded``),
        as ``run(*args, **kwargs)`` takes ``vllm_config = kwargs["vllm_config"]``."""
        if not (
            self.context.chains
            and isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, (str, int))
            and not isinstance(node.slice.value, bool)
        ):
            return None
        name, key = node.value.id, node.slice.value
        if name in self.shadowed or name in self.locals:
            return None
        return self.aliases.get(element_key(name, key))

    def chain_probe(self, call: ast.Call, state: frozenset[str]) -> frozenset[str]:
        """``getattr``/``hasattr``/``setattr`` with a literal name on a stand-in or a chain on
        one.  ``getattr`` without a default is a read; with one, and ``hasattr``, a read that
        tolerates a missing name (with a default, from here on: ``GUARDED_MARK``);
        ``setattr`` a write."""
        func = call.func
        if not (
            isinstance(func, ast.Name)
            and func.id in ("getattr", "hasattr", "setattr")
            and len(call.args) >= 2
        ):
            return state
        literal = literal_name(call.args[1])
        found = self.chain_through(call.args[0], state)
        possible = found is None
        if possible:
            found = self.maybe_chain(call.args[0])
        if literal is None or found is None:
            return state
        chain, through = found
        full = (chain[0], chain[1] + (literal,))
        text = ".".join((full[0], *full[1]))
        if func.id == "setattr":
            return state | {WRITTEN_MARK + text}
        defaulted = func.id == "getattr" and len(call.args) > 2
        guarded = func.id == "hasattr" or defaulted
        self.chain_read(full, call, state, guarded=guarded, through=through, possible=possible)
        # What the default stands in for may be what the code reads on (through a local,
        # ``held_path``): from here on, a read through it allows that link to be missing.
        return state | {PROBED_MARK + text} if defaulted else state

    def chain_guard(self, test: ast.Call, state: frozenset[str]) -> frozenset[str]:
        """The mark ``hasattr(<stand-in chain>, "n")`` establishes where it holds."""
        literal = literal_name(test.args[1])
        chain = self.chain_of(test.args[0], state)
        if literal is None or chain is None:
            return frozenset()
        return frozenset({GUARDED_MARK + ".".join((chain[0], *chain[1], literal))})

    def pass_on(self, call: ast.Call, state: frozenset[str]) -> frozenset[str]:
        """A call handing a stand-in the test passed (``CallContext.standins``), or a chain
        on one, to code of the tree (``passed_to``: a module function, a static or class
        method, a constructor): it is walked with the stand-in bound to its parameter, and
        its chain reads count here as placed here.  Only chains come back (and the marks it
        leaves): the callee's other accesses are not the instance's, and what a constructor
        reads of the object it builds is not the stand-in's.  Of the objects on ``self``
        (nearly every call passes one) only the namespaces the test set on a stub's fields
        are followed (``CallContext.nested``), into functions, not constructors."""
        if not self.context.standins and not self.context.nested:
            return state
        bound: list[ast.expr] = []
        for arg in call.args:
            if isinstance(arg, ast.Starred):
                break  # where the rest lands is not known from the text
            bound.append(arg)
        passed: list[tuple[int | str, Chain | None]] = [
            (i, self.chain_of(a, state)) for i, a in enumerate(bound)
        ]
        passed += [(k.arg, self.chain_of(k.value, state)) for k in call.keywords if k.arg]
        passed = [(where, chain) for where, chain in passed if chain and self.handed(chain)]
        spread = [
            (where, _split(text)) for where, text in self.spread(call) if self.handed(_split(text))
        ]
        if not passed and not spread:
            return state
        if passed_frames(self.stack) >= MAX_FUNCTION_DEPTH:
            return state
        func = call.func
        if not isinstance(func, (ast.Name, ast.Attribute)):
            return state
        target = self.passed_to(ast.unparse(func))
        if target is None:
            return state
        if target.built is not None:  # its ``self`` is the object it builds
            passed = [(where, chain) for where, chain in passed if chain[0] != "self"]
        node = target.function.node
        args = node.args
        positional = [a.arg for a in list(args.posonlyargs) + list(args.args)][target.skip :]
        known = set(positional) | {a.arg for a in args.kwonlyargs}
        aliases: dict[str, str] = {}
        bound_at: list[int | str] = []
        for where, chain in passed:
            if isinstance(where, int) and where >= len(positional):
                continue  # into ``*args``
            name = positional[where] if isinstance(where, int) else where
            if name in known:
                aliases[name] = ".".join((chain[0], *chain[1]))
                bound_at.append(where)
        if target.built is not None:
            spread = [(where, chain) for where, chain in spread if chain[0] != "self"]
        for where, chain in spread:
            name = bound_name(node, target.skip, where)
            if name is not None:
                aliases.setdefault(name, ".".join((chain[0], *chain[1])))
        if not aliases:
            return state
        params = self.literal_shape(call).bind_literals(node, bound=target.skip > 0)
        if target.built is not None:
            cls, member = target.built
            walked = self.analyzer.walk(
                attrs.evolve(self.context, real_self=True, bare_self=False),
                cls,
                member,
                _outer(marks(state)),
                aliases,
                self.stack,
                params=params,
                frame=BUILT_FRAME,
            )
        else:
            walked = self.analyzer.walk_function(
                self.context,
                target.function,
                marks(state),
                aliases,
                self.stack,
                params,
                klass=target.klass,
            )
        plain = plain_function(node) and (
            target.built is None or plainly_built(self.index, target.built[0])
        )
        if not walked.skipped and plain:
            self.followed.update((id(call), where) for where in bound_at)
        if walked.value and target.built is None:
            self.call_values[id(call)] = walked.value  # what the call evaluates to
        # A coroutine function's body runs only where its coroutine is awaited (or handed to
        # a loop the test may have patched out): called otherwise, its reads may not happen.
        runs = not isinstance(node, ast.AsyncFunctionDef) or self.awaited(call)
        # Under ``pytest.raises``, past something that may raise (``raised``, kept across the
        # loops and branches that restore ``certain``), the test's path may have ended.
        reached = runs and not (self.context.expect_raise and self.raised)
        for handed in ("touched", "escapes", "filled"):
            getattr(self.rec, handed).update(
                chain
                for chain in getattr(walked.recorder, handed)
                if chain[0] != "self" or target.built is None
            )
        for read in walked.recorder.chains:
            if read.root == "self" and target.built is not None:
                continue  # the object a constructor builds
            read = placed_after(read, self.chain)
            if self.certain and reached:
                self.rec.chains.append(read)
            else:
                # Off this call's straight line (``self.chain`` None: a handler, past a
                # ``return``), or in a call that may not run: in no block a test prepares.
                blocks = read.blocks if reached and self.chain is not None else None
                self.rec.chains.append(attrs.evolve(read, certain=False, blocks=blocks))
        if not runs or walked.state is None:
            return state
        return state | _outer(marks(walked.state))

    def spread(self, call: ast.Call) -> list[tuple[int | str, str]]:
        """What ``f(a, *args, **kwargs)`` hands on of the stand-ins this function's own
        ``*args`` and ``**kwargs`` hold (``forwarded``): each as ``(where, chain)``, where
        is the position in the call (the arguments written before the star counted) or the
        keyword.  A wrapper's ``super().__init__(*args, **kwargs)`` passes the caller's
        arguments on unchanged, so they bind to the parameters of the code it calls."""
        out: list[tuple[int | str, str]] = []
        for index, arg in enumerate(call.args):
            if isinstance(arg, ast.Starred):
                if isinstance(arg.value, ast.Name):
                    for element, text in self.forwarded(arg.value.id):
                        if isinstance(element, int):
                            out.append((index + element, text))
                break  # where the arguments after a star land is not known
        for keyword in call.keywords:
            if keyword.arg is None and isinstance(keyword.value, ast.Name):
                for element, text in self.forwarded(keyword.value.id):
                    if isinstance(element, str):
                        out.append((element, text))
        return out

    def forwarded(self, name: str) -> list[tuple[int | str, str]]:
        """The stand-ins the variadic parameter ``name`` holds (``args``, ``kwargs``): its
        elements the caller bound (``STAR_ELEMENT`` aliases: position or keyword, chain),
        unless the function rebound the name."""
        if name in self.shadowed or name in self.locals:
            return []
        prefix = f"{STAR_ELEMENT}{name}["
        out: list[tuple[int | str, str]] = []
        for key, text in self.aliases.items():
            if key.startswith(prefix) and key.endswith("]"):
                inner = key[len(prefix) : -1]
                out.append((int(inner), text) if inner.isdigit() else (inner.strip("'"), text))
        return out

    def handed(self, chain: Chain) -> bool:
        """Whether a chain passed to a call is on a stand-in the call is handed
        (``CallContext.standins``) or on a namespace the test set on a stub's field
        (``CallContext.nested``)."""
        root, path = chain
        if root == "self":
            return bool(path) and path[0] in self.context.nested
        return root in self.context.standins

    def passed_to(self, text: str) -> PassedCallee | None:
        """What a call spelled ``text`` that hands a stand-in on runs, where the tree shows
        it and the test did not replace it: a module function; a static or class method
        (``Cls.make(cfg)``, ``self.make(cfg)``, ``cls.make(cfg)``), walked as the function its
        ``def`` is; a constructor (``Cls(cfg)``, ``cls(cfg)`` in a class method): its
        ``__init__`` (``ClassIndex.constructor``)."""
        head, _, rest = text.partition(".")
        if head == self.self_name:
            return self.class_function(self.cls, rest) if self.cls and "." not in rest else None
        if self.klass is not None and head == self.cls_name and head not in self.shadowed:
            if not rest:
                return self.constructed(self.klass, text)
            return self.class_function(self.klass, rest) if "." not in rest else None
        if head in (*self.params, *self.aliases):
            return None
        if rest and "." not in rest:
            built = self.instance_class(head)
            if built is not None:
                return self.instance_method(built, rest)
        try:
            target = self.index.resolve(self.module, text, self.local_imports)
            owner, _, name = text.rpartition(".")
            if target is None and owner:
                cls = self.index.resolve(self.module, owner, self.local_imports)
                if not isinstance(cls, ClassInfo):
                    return None
                if self.patched(f"{cls.module.name}.{cls.name}", owner):
                    return None  # the test replaced the class
                return self.class_function(cls, name)
            if isinstance(target, FunctionRef):
                if self.patched(f"{target.module.name}.{target.node.name}", text):
                    return None
                return PassedCallee(target)
            if not isinstance(target, ClassInfo):
                return None
            return self.constructed(target, text)
        except SourceError:
            return None  # the module's own users report it

    def instance_class(self, name: str) -> ClassInfo | None:
        """The class of the object ``name`` holds where the text settles it: the one binding
        of a local of this function, or else of a module-level name, is a constructor call
        of a class of the tree (``spec = DecodeConfig(...)``, ``DECODE = DecodeConfig()``),
        or ``dataclasses.replace``/``copy.copy`` of such an object
        (``spec = replace(DECODE, last_layer=n)``), which keeps its class."""
        seen: set[str] = set()
        scopes: list[tuple[ast.AST, bool]] = [(self.func, True), (self.module.tree, False)]
        while name not in seen:
            seen.add(name)
            value = None
            for scope, local in scopes:
                if local and name not in self.locals:
                    continue
                found = self.analyzer.bindings(scope).get(name, ())
                if len(found) == 1 and found[0].plain:
                    value = found[0].value
                break
            if not isinstance(value, ast.Call) or not isinstance(
                value.func, (ast.Name, ast.Attribute)
            ):
                return None
            callee = ast.unparse(value.func)
            if callee.rpartition(".")[2] in ("replace", "copy") and value.args:
                source = value.args[0]
                if not isinstance(source, ast.Name):
                    return None
                name = source.id
                continue
            try:
                cls = self.index.resolve(self.module, callee, self.local_imports)
            except SourceError:
                return None
            if not isinstance(cls, ClassInfo) or self.patched(
                f"{cls.module.name}.{cls.name}", callee
            ):
                return None
            return cls
        return None

    def instance_method(self, cls: ClassInfo, name: str) -> PassedCallee | None:
        """``obj.name(...)`` on an object of ``cls`` (``instance_class``): the method's
        ``def``, walked as a function past its ``self``; what it reads of ``self`` is the
        real object's.  Not a method the test replaced."""
        found = self._member_def(cls, name, (MemberKind.METHOD,))
        if found is None:
            return None
        member, node = found
        return PassedCallee(FunctionRef(member.owner.module, node), 1)

    def constructed(self, target: ClassInfo, text: str) -> PassedCallee | None:
        """``Cls(cfg)`` spelled ``text``: the ``__init__`` it runs, unless the test replaced
        the class."""
        try:
            member = self.index.constructor(target)
        except SourceError:
            return None  # the module's own users report it
        if member is None or self.patched(f"{target.module.name}.{target.name}", text):
            return None
        node = member.node
        assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        return PassedCallee(FunctionRef(member.owner.module, node), 1, (target, member))

    def class_function(self, cls: ClassInfo, name: str) -> PassedCallee | None:
        """A static or class method ``name`` of ``cls`` the test did not replace."""
        found = self._member_def(cls, name, (MemberKind.STATICMETHOD, MemberKind.CLASSMETHOD))
        if found is None:
            return None
        member, node = found
        if member.kind is MemberKind.CLASSMETHOD:
            return PassedCallee(FunctionRef(member.owner.module, node), 1, klass=cls)
        return PassedCallee(FunctionRef(member.owner.module, node))

    def _member_def(
        self, cls: ClassInfo, name: str, kinds: tuple[MemberKind, ...]
    ) -> tuple[Member, ast.FunctionDef | ast.AsyncFunctionDef] | None:
        """The member ``name`` of ``cls`` (as an instance finds it) and its ``def``, where it
        is one of ``kinds`` and the test did not replace it."""
        member = self.index.lookup(cls, name)
        if member is None or member.kind not in kinds:
            return None
        node = member.node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        if self.analyzer.is_replaced(self.context, cls, member, None):
            return None
        return member, node

    def awaited(self, call: ast.Call) -> bool:
        """Whether the walked function awaits ``call`` where it makes it (``await f(x)``)."""
        return any(isinstance(node, ast.Await) and node.value is call for node in walk(self.func))

    def patched(self, defined: str, text: str = "") -> bool:
        """Whether the test replaced that function or class (its body is not what runs):
        where it is ``defined``, or the name ``text`` this module calls it by
        (``monkeypatch.setattr(utils, "helper", fake)`` replaces ``utils``'s own binding of an
        imported ``helper``)."""
        patched = self.context.patched_functions
        if defined in patched:
            return True
        return bool(text) and "." not in text and f"{self.module.name}.{text}" in patched


@attrs.frozen
class Binding:
    """One binding of a name: ``plain`` where it is the whole target of an assignment
    (``name = ...``, ``name: T = ...``); ``value`` what a lone-target one assigns."""

    plain: bool
    value: ast.expr | None = None


def scope_bindings(scope: ast.AST) -> dict[str, tuple[Binding, ...]]:
    """Each name ``scope`` binds -> its bindings: a function's (nested scopes too), or a
    module's statements outside its functions and classes.  A ``global`` statement
    anywhere counts as a binding that is not plain."""
    found: dict[str, list[Binding]] = {}
    module = isinstance(scope, ast.Module)
    nodes = _outside_defs(scope) if module else list(walk(scope))
    whole: set[int] = set()
    for node in nodes:
        if isinstance(node, ast.Assign):
            value = node.value if len(node.targets) == 1 else None
            for target in node.targets:
                if isinstance(target, ast.Name):
                    whole.add(id(target))
                    found.setdefault(target.id, []).append(Binding(True, value))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            whole.add(id(node.target))
            found.setdefault(node.target.id, []).append(Binding(True, node.value))
    others = (n for stmt in nodes for n in walk(stmt)) if module else iter(nodes)
    for node in others:
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            if id(node) not in whole:
                found.setdefault(node.id, []).append(Binding(False))
        elif module and isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                name = (alias.asname or alias.name).partition(".")[0]
                found.setdefault(name, []).append(Binding(False))
    for node in walk(scope):
        if isinstance(node, ast.Global):
            for name in node.names:
                found.setdefault(name, []).append(Binding(False))
    if module:
        for node in getattr(scope, "body", ()):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.setdefault(node.name, []).append(Binding(False))
    return {name: tuple(b) for name, b in found.items()}


def _outside_defs(scope: ast.AST) -> list[ast.AST]:
    """The statements of a module, those under its ``if``/``try``/``with`` blocks too, not
    those of the functions and classes it defines."""
    out: list[ast.AST] = []
    todo = list(getattr(scope, "body", ()))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        out.append(node)
        todo.extend(n for n in child_nodes(node) if isinstance(n, ast.stmt))
        for handler in getattr(node, "handlers", ()):
            todo.extend(handler.body)
    return out


def _split(text: str) -> Chain:
    root, *path = text.split(".")
    return root, tuple(path)


def _link(node: ast.Subscript) -> str:
    """The link a subscript takes: item ``n`` of a literal index (``slotted`` keeps it only
    below an element), else an element."""
    index = node.slice
    if (
        isinstance(index, ast.Constant)
        and isinstance(index.value, int)
        and not isinstance(index.value, bool)
        and index.value >= 0
    ):
        return slot_link(index.value)
    return ELEMENT


def _got(node: ast.Call) -> ast.expr | None:
    """The container ``c`` of ``c.get(k)``: its value under a key (or None, on which any
    read raises)."""
    func = node.func
    if (
        isinstance(func, ast.Attribute)
        and func.attr == "get"
        and len(node.args) == 1
        and not node.keywords
        and not isinstance(node.args[0], ast.Starred)
    ):
        return func.value
    return None


def element_key(name: str, where: int | str) -> str:
    """The alias key of one element of a variadic parameter: ``*args[2]``, ``*kwargs['cfg']``
    (no name can spell it, so it never meets a local's)."""
    return f"{STAR_ELEMENT}{name}[{where if isinstance(where, int) else repr(where)}]"


def bound_name(
    node: ast.FunctionDef | ast.AsyncFunctionDef, skip: int, where: int | str
) -> str | None:
    """The parameter of ``node`` (its first ``skip`` not passed) an argument at position or
    keyword ``where`` binds to, or the element of its ``*args``/``**kwargs`` that takes it
    (``element_key``); None where none does."""
    args = node.args
    positional = [a.arg for a in list(args.posonlyargs) + list(args.args)][skip:]
    if isinstance(where, int):
        if where < len(positional):
            return positional[where]
        if args.vararg is not None:
            return element_key(args.vararg.arg, where - len(positional))
        return None
    named = {a.arg for a in args.args[skip:]} | {a.arg for a in args.kwonlyargs}
    if where in named:
        return where
    return element_key(args.kwarg.arg, where) if args.kwarg is not None else None


def _root_attribute(node: ast.AST | None) -> ast.AST | None:
    """``self.a`` of ``self.a.b.c``: the attribute on the chain's root name."""
    while isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
        node = node.value
    return node


def installed_root(name: str) -> str:
    """The chain root of the module global ``name`` a test set to a stand-in
    (``CallContext.installed``): no parameter's name, whatever the callee calls its own."""
    return f"global {name}"


def replaced_set_root(method: str, field: str) -> str:
    """The chain root of the stand-in the test's replacement of ``method`` sets as ``field``
    of its object (``CallContext.replaced_sets``)."""
    return f"{field}@{method}"
