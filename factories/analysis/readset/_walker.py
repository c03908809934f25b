"""``Walker``: one walk of one function body, and the control flow every handler shares.

The handlers live beside it, one concern a module, and meet here as the walker's bases:
``_statements`` (a handler per statement kind, and stores), ``_expressions`` (a handler per
expression kind, and reads of ``self``), ``_calls`` (calls: into the class, out of it, and
what may raise), ``_decisions`` (what the test's known values decide).  This module holds what
they all use: the walk state, ``block``, the undecided ``if`` (``both_arms``), the parts that
run on some runs only (``guarded``), and ``follow``, the one way a handler walks another method
of the class (a property getter or setter, ``self.m()``, ``super().m()``).
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import attrs

from factories.analysis._walk import child_nodes, walk
from factories.analysis.classes import ClassInfo, Member
from factories.analysis.findings import Location
from factories.analysis.readset._calls import CallHandlers
from factories.analysis.readset._chains import STAR_ELEMENT, ChainHandlers
from factories.analysis.readset._decisions import Decisions
from factories.analysis.readset._expressions import ExpressionHandlers
from factories.analysis.readset._handovers import ArgKey, Chain, scan
from factories.analysis.readset._model import (
    CallContext,
    ChainRead,
    Recorder,
    State,
    Walked,
    meet,
)
from factories.analysis.readset._statements import StatementHandlers
from factories.analysis.source_tree import ModuleInfo
from factories.analysis.values import Obj

if TYPE_CHECKING:
    from factories.analysis.readset._analyzer import ReadSetAnalyzer

_MISSING = object()
_PLAIN = (bool, int, float, str, bytes, type(None))


def statements_and_exprs(func: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``func``'s own body, not those of functions or classes it defines."""
    todo = list(child_nodes(func))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        yield node
        todo.extend(child_nodes(node))


def rebinds(body: Sequence[ast.stmt], name: str) -> bool:
    """Whether ``name`` is bound or deleted anywhere in ``body`` (nested scopes too)."""
    return any(
        isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load)
        for stmt in body
        for node in walk(stmt)
    )


def _may_leave(stmt: ast.stmt) -> bool:
    """Whether ``stmt`` holds a way out of the block it lies in (outside a nested def or
    class), or is one that may skip what follows (``try``, ``with``, which may swallow)."""
    if isinstance(stmt, (ast.Try, ast.With, ast.AsyncWith)) or type(stmt).__name__ == "TryStar":
        return True
    todo: list[ast.AST] = [stmt]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        todo.extend(child_nodes(node))
    return False


class Walker(StatementHandlers, ExpressionHandlers, CallHandlers, ChainHandlers, Decisions):
    """Walks one function body; see the package docstring for the state semantics.

    What the walk is *in* never changes (the analyzer and its ``context``, the classes, the
    function, its module, parameters and locals, the ``stack`` of calls above it).  What it
    has *met* so far does: the known values (``consts`` of stub fields, ``name_consts`` of
    locals and parameters), parameter ``aliases``, what it recorded (``rec``), and the flow
    marks below.
    """

    def __init__(
        self,
        analyzer: ReadSetAnalyzer,
        context: CallContext,
        cls: ClassInfo | None,
        owner: ClassInfo | None,
        func: ast.FunctionDef | ast.AsyncFunctionDef,
        aliases: dict[str, str],
        stack: tuple[str, ...],
        consts: dict[str, object],
        params: dict[str, object],
        certain: bool,
        module: ModuleInfo | None = None,
        entry: bool = False,
        klass: ClassInfo | None = None,
    ) -> None:
        self.analyzer = analyzer
        self.context = context
        self.consts = dict(consts)
        self.name_consts = dict(params)
        self.index = analyzer.index
        self.cls = cls
        self.owner = owner
        self.func = func
        self.module: ModuleInfo = owner.module if owner is not None else module  # type: ignore[assignment]
        self.stack = stack
        self.rec = Recorder()
        self.qualname = f"{owner.name}.{func.name}" if owner is not None else func.name
        args = func.args
        positional = list(args.posonlyargs) + list(args.args)
        # A module function (``owner`` None) has no ``self``; its parameters are stand-ins
        # only where the caller passed one (``aliases``).
        self.self_name = positional[0].arg if positional and owner is not None else None
        skip = 1 if owner is not None else 0
        self.params = [a.arg for a in positional[skip:]] + [a.arg for a in args.kwonlyargs]
        # A class method walked as a function: the class its first parameter is.
        self.klass = klass if positional and owner is None else None
        self.cls_name = positional[0].arg if self.klass is not None else None
        self.aliases: dict[str, str] = dict(aliases)
        # Locals bound to the container a replaced function returns (``CallContext.returned``):
        # the root its items stand for, and how many it surely holds.
        self.containers: dict[str, tuple[str, int]] = {}
        if entry:
            # The analysed call's ``*args``/``**kwargs`` elements the test hands stand-ins
            # (``args[2]``): passed on as they are by ``f(*args, **kwargs)``.
            variadic = [a.arg for a in (args.vararg, args.kwarg) if a is not None]
            for root in context.standins:
                if any(root.startswith(f"{name}[") for name in variadic):
                    self.aliases.setdefault(STAR_ELEMENT + root, root)
        self.handed_in = dict(aliases)  # what the caller bound (``_handovers``)
        # The arguments this walk handed to a callee it walked with them bound to its
        # parameters (``_handovers``: the callee's own scan stands for them).
        self.followed: set[ArgKey] = set()
        # The generator expressions a builtin this walk met takes the first item of
        # (``ExpressionHandlers.consumes_first``), by ``id``.
        self.consumed: set[int] = set()
        self.shadowed: set[str] = set()
        # Names that hold a stand-in chain on some of the paths that reach here only: bound
        # to one before an undecided ``if`` that rebinds them in one arm (``vllm_config =
        # copy.copy(vllm_config)``), as ``name -> chain text``.  A read through one is a read
        # of the stand-in on the other arm's paths (``maybe_chain``): possible, never certain.
        self.maybe_roots: dict[str, str] = {}
        # Locals bound to a stand-in chain no write had replaced then (``saved =
        # runner.field``): storing one back onto that chain puts the stand-in's object back.
        self.saved: set[str] = set()
        # The analysed call itself: its parameters are the stand-ins the test hands in.
        # Below it, a parameter is a stand-in only through ``aliases``.
        self.entry = entry
        # Whether the statement being walked runs on every run of the call (see ``guarded``),
        # and how many ``return``s the walk has met: a continuation after an undecided branch
        # that may return is reached on some runs only.  ``chain``: the undecided blocks the
        # statement sits in, on each one's straight line (None: uncertain for another reason),
        # relative to this call (the caller prefixes its own); ``jumps`` counts
        # ``break``/``continue``, which leave that straight line too.
        self.certain = certain
        self.chain: tuple[int, ...] | None = ()
        self.exits = 0
        self.jumps = 0
        self.raised = False  # met a ``raise`` here or in a method this one calls
        self.ended = False  # the current statement called something that always raises
        self.returned: State = None  # meet of the states at each ``return``
        # The straight lines past an undecided ``if`` some arms of which may leave, with the
        # names those arms read before leaving: (its blocks, ``certain`` and blocks before the
        # ``if``, the names); see ``uncover``.
        self.covers: list[tuple[tuple[int, ...], bool, tuple[int, ...], frozenset[str]]] = []
        self.returns: list[tuple[object] | tuple[()]] = []  # what each ``return`` gives
        self.return_chains: list[str | None] = []  # the stand-in chain each one gives
        # The value of each call of a function of the tree walked here (``returned_value``).
        self.call_values: dict[int, tuple[object]] = {}
        # The stand-in chain a call of a method of ``self`` returns (``Walked.chain``).
        self.call_chains: dict[int, str] = {}
        # While the arguments of the call whose object the analysed call returns are walked:
        # the locals it hands a field the test asserts, and that value
        # (``CallContext.result_fields``, ``_returned``).
        self.asserted_locals: dict[str, object] = {}
        # The ``assert`` statements the test's values made false, by ``id``, in the arm
        # being walked (``both_arms``, ``surely_fails``).
        self.false_asserts: set[int] = set()
        self.local_imports, self.locals = analyzer.function_names(func, self.module)

    @property
    def certain(self) -> bool:
        return self._certain

    @certain.setter
    def certain(self, value: bool) -> None:
        self._certain = value
        self.chain = () if value else None

    def run(self, state: frozenset[str]) -> Walked:
        """What the call records, and its state when it returns (falling off the end or at any
        ``return``); None when every path raises, so the caller's path ends there too.  On a
        real object, with no ``return`` met, the values its fields hold at the end
        (``Walked.stored``): the one way out."""
        fell_off = self.block(self.func.body, state)
        out = meet(fell_off, self.returned)
        self.uncover(0)
        stored = ()
        if self.context.real_self and self.exits == 0 and self.owner is not None:
            stored = tuple(sorted(self.consts.items(), key=lambda kv: kv[0]))
        if self.context.chains:
            touched, escapes, filled = scan(
                self.analyzer.body_names(self.func),
                self.standin_names(),
                self.analyzer.parents(self.func),
                frozenset(self.followed),
            )
            self.rec.touched |= touched
            self.rec.escapes |= escapes
            self.rec.filled |= filled
        if fell_off is not None:
            self.returns.append((None,))  # falling off the end returns None
            self.return_chains.append(None)
        chains = set(self.return_chains)
        chain = chains.pop() if len(chains) == 1 else None
        if isinstance(self.func, ast.AsyncFunctionDef) or self.analyzer.is_generator(self.func):
            chain = None  # what the caller gets is not the ``return``'s value
        return Walked(self.rec, out, self.raised, stored, value=self.returned_value(), chain=chain)

    def returned_value(self) -> tuple[object] | tuple[()]:
        """``(value,)`` where every ``return`` the walk met gives one known value (a plain
        literal): what the caller's call evaluates to.  Where the test's values are followed
        (``stated_locals``); not past an exit the walk does not see (a generator's, an
        ``async`` function's result is not its ``return``)."""
        if not self.context.stated_locals or not self.returns:
            return ()
        if isinstance(self.func, ast.AsyncFunctionDef) or self.analyzer.is_generator(self.func):
            return ()
        first = self.returns[0]
        if not first or not isinstance(first[0], _PLAIN):
            return ()
        if all(r and type(r[0]) is type(first[0]) and r[0] == first[0] for r in self.returns):
            return first
        return ()

    def standin_names(self) -> dict[str, frozenset[Chain]]:
        """The names of this body that hold a stand-in or a chain on one, as the chain: the
        analysed call's parameters the test hands one, those a caller bound to one, a
        ``*args``/``**kwargs`` with an element that is one, and ``self`` where it holds one
        (a stub whose fields the test set to namespaces, ``CallContext.nested``) or is one
        (``CallContext.bare_self``)."""
        names: dict[str, frozenset[Chain]] = {}
        for name, held in self.handed_in.items():
            root, *path = held.split(".")
            if name.startswith(STAR_ELEMENT):
                # An element of ``*args``/``**kwargs`` a caller's ``f(*args)`` bound: the
                # variadic name holds it (``f(*args)``, ``args[0]``: handed on, unseen).
                name = name[len(STAR_ELEMENT) :].partition("[")[0]
            names[name] = names.get(name, frozenset()) | {(root, tuple(path))}
        if self.entry:
            for name in self.params:
                if name in self.context.standins:
                    names[name] = frozenset({(name, ())})
            args = self.func.args
            for variadic in (a.arg for a in (args.vararg, args.kwarg) if a is not None):
                for root in self.context.standins:
                    if root.startswith(f"{variadic}["):
                        names[variadic] = names.get(variadic, frozenset()) | {(root, ())}
        if self.self_name is not None and (self.context.nested or self.context.bare_self):
            names[self.self_name] = frozenset({("self", ())})
        return names

    def loc(self, node: ast.AST) -> Location:
        return Location(str(self.module.path), getattr(node, "lineno", self.func.lineno))

    def follow(
        self,
        member: Member,
        state: frozenset[str],
        *,
        body: ast.FunctionDef | ast.AsyncFunctionDef | None = None,
        aliases: dict[str, str] | None = None,
        params: dict[str, object] | None = None,
        after: ClassInfo | None = None,
    ) -> Walked:
        """Walk another method of the class (``body``: a property's setter) as called from
        here, with what is known here, and record its accesses where this call sits."""
        walked = self.analyzer.walk(
            self.context,
            self.cls,
            member,
            state,
            aliases or {},
            self.stack,
            body=body,
            consts=self.consts,
            params=params,
            after=after,
            certain=self.certain,
        )
        self.rec.extend(walked.recorder, self.chain)
        return walked

    # -- control flow -------------------------------------------------------------------

    def block(self, body: Sequence[ast.stmt], state: State) -> State:
        for stmt in body:
            if state is None:
                return None
            state = self.stmt(stmt, state)
            if self.ended:  # the statement called something that always raises
                self.ended = False
                return None
        return state

    @contextlib.contextmanager
    def guarded(
        self, keep_exits: bool = False, loop: ast.AST | None = None, runs: bool = False
    ) -> Iterator[None]:
        """Walk a part that runs on some runs only (an undecided branch, a loop body, a
        handler, a nested def): its reads are not certain.  After it, the walk is certain
        again unless that part may have returned (then the rest runs on some runs only);
        ``keep_exits`` for a nested def, whose ``return`` ends the def, not this call.
        ``loop``: the part is that loop's body, a block a test may provision.  ``runs``: the
        loop's body runs at least once (``Decisions.iterations``), so its first pass is on
        the walk's straight line, up to its first undecided exit or jump."""
        was, chain, exits, jumps = self.certain, self.chain, self.exits, self.jumps
        raised = self.raised
        if not runs:
            self.certain = False
        if loop is not None and chain is not None and not runs:
            self.chain = chain + (self.analyzer.blocks.of(loop, 0),)
        try:
            yield
        finally:
            # A nested def's ``return`` ends the def: where the test's values are followed
            # (``stated_locals``) the rest of this call stays on the straight line; the stub
            # audit, whose output is pinned to the releases, still counts it as an exit.
            returned = self.exits > exits and not (keep_exits and self.context.stated_locals)
            if keep_exits:
                self.exits = exits
            if keep_exits or loop is not None:
                self.jumps = jumps  # a ``break``/``continue`` ends that loop's body only
            jumped = self.jumps > jumps
            past = not keep_exits and self.past_raise(raised)
            self.certain = was and not returned and not past
            self.chain = chain if not (returned or jumped or past) else None

    def take_arm(
        self, stays: int, marks: list, before: tuple[int, int, bool, tuple[int, ...] | None]
    ) -> None:
        """The test's path runs only arm ``stays`` of the ``if`` just walked: the exits, jumps
        and certainty from ``before`` it hold again, and the reads the other arm placed
        (between its ``marks``) are possible only, not on the test's path."""
        self.exits, self.jumps, self.certain, self.chain = before
        for which, accesses in enumerate(self.placed_lists()):
            for i in range(marks[1 - stays][which], marks[2 - stays][which]):
                if accesses[i].certain:
                    accesses[i] = attrs.evolve(accesses[i], certain=False)

    def both_arms(
        self,
        body: Sequence[ast.stmt],
        body_in: frozenset[str],
        orelse: Sequence[ast.stmt],
        orelse_in: frozenset[str],
        new_guard: bool = False,
    ) -> State:
        """An undecided ``if``: either arm may run, so a read is certain only when both arms
        make it certainly (relative to the arm) -- ``if c: f(self.x) else: g(self.x)`` needs
        ``x`` whichever way the test goes.  Each arm starts from the same known values; a
        name either arm rebinds is unknown after the branch.

        ``new_guard``: the condition reads a field the stub lacks, so the test was written
        before this branch existed (or never meant to decide it) and the stub already fails
        there.  When one arm leaves the call (``return``, ``break``, ``continue``) and the
        other goes on, the test's path is the one that goes on: the code it was written for
        lies past the guard (``if engine in self._invalid_engines: return`` added later)."""
        was, chain, exits, jumps = self.certain, self.chain, self.exits, self.jumps
        raised = self.raised
        consts, names = dict(self.consts), dict(self.name_consts)
        marks: list[tuple[int, ...]] = []
        states: list[State] = []
        left: list[bool] = []  # whether each arm may leave the call or the loop body
        fails: list[bool] = []  # whether each arm surely fails an assertion (``surely_fails``)
        changed: set[tuple[str, str]] = set()
        ends: list[tuple[dict[str, object], dict[str, object]]] = []  # known at each arm's end
        roots = self.chain_roots()
        maybe_before, maybe_after = dict(self.maybe_roots), []
        ids = self.analyzer.blocks.arms(body, orelse)
        covers = len(self.covers)
        for number, (arm, arm_in) in enumerate(((body, body_in), (orelse, orelse_in))):
            self.maybe_roots = dict(maybe_before)
            self.certain = was
            self.chain = None if chain is None else chain + (ids[number],)
            self.consts, self.name_consts = dict(consts), dict(names)
            marks.append(self.rec.lengths())
            before = self.exits + self.jumps
            outer, self.false_asserts = self.false_asserts, set()
            states.append(self.block(arm, arm_in))
            fails.append(bool(self.false_asserts) and self.surely_fails(arm))
            self.false_asserts = outer | self.false_asserts
            left.append(states[-1] is None or self.exits + self.jumps > before)
            if states[-1] is not None:
                ends.append((self.consts, self.name_consts))
                maybe_after.append(self.maybe_roots)
            self.ended = False
            changed |= {
                ("c", k)
                for k in consts.keys() | self.consts.keys()
                if consts.get(k, _MISSING) is not self.consts.get(k, _MISSING)
            }
            changed |= {
                ("n", k)
                for k in names.keys() | self.name_consts.keys()
                if names.get(k, _MISSING) is not self.name_consts.get(k, _MISSING)
            }
        marks.append(self.rec.lengths())
        self.uncover(covers)  # the arms' own, before this ``if`` places their reads
        going_on = [arm for arm, out in zip((body, orelse), states, strict=True) if out is not None]
        self.maybe_roots = self.joined_roots(roots, going_on, maybe_after) if going_on else {}
        self.consts = {k: v for k, v in consts.items() if ("c", k) not in changed}
        self.name_consts = {k: v for k, v in names.items() if ("n", k) not in changed}
        if self.context.stated_locals:
            self.keep_common_fields(changed, ends)
        if new_guard and left[0] != left[1] and states[left.index(False)] is not None:
            stays = left.index(False)
            if states[1 - stays] is None:  # the leaving arm always leaves
                self.take_arm(stays, marks, (exits, jumps, was, chain))
                return states[stays]
        if fails[0] != fails[1] and states[fails.index(False)] is not None:
            # the test passes only where the other arm runs: that is its path, the arm
            # that fails is not (its reads are possible only, and no field the test set
            # says it prepared that arm: ``provisioned``), and what follows is certain
            stays = fails.index(False)
            self.rec.unprepared.append(ids[1 - stays])
            self.take_arm(stays, marks, (exits, jumps, was, chain))
            return states[stays]
        for which, accesses in enumerate(self.placed_lists()):
            first = range(marks[0][which], marks[1][which])
            second = range(marks[1][which], marks[2][which])
            in_first = {accesses[i].name for i in first if accesses[i].certain}
            in_second = {accesses[i].name for i in second if accesses[i].certain}
            both = in_first & in_second
            for i in list(first) + list(second):
                if accesses[i].certain and accesses[i].name not in both:
                    accesses[i] = attrs.evolve(accesses[i], certain=False)
        # What each arm that may leave reads on its straight line, before any exit: a read of
        # the same name on the straight line past the ``if`` is on every path (``covers``).
        straight: list[set[str]] = []
        if self.context.stated_locals and (was or chain is not None) and not all(left):
            for number, arm_left in enumerate(left):
                if not arm_left:
                    continue
                arm_chain = None if chain is None else chain + (ids[number],)
                straight.append(
                    {
                        accesses[i].name
                        for which, accesses in enumerate(self.placed_lists())
                        for i in range(marks[number][which], marks[number + 1][which])
                        if (was and accesses[i].certain)
                        or (arm_chain is not None and accesses[i].blocks == arm_chain)
                    }
                )
        # A ``break``/``continue`` leaves the loop body's straight line as a ``return``
        # leaves the call's (only a body that surely runs is certain to begin with).
        self.certain = was and self.exits == exits and self.jumps == jumps
        self.chain = chain if self.exits == exits and self.jumps == jumps else None
        if straight and self.chain is None and not self.past_raise(raised):
            covered = frozenset.intersection(*(frozenset(names) for names in straight))
            if covered:
                rest = self.analyzer.blocks.rest_after(body)
                base = chain if chain is not None else ()
                self.chain = base + (rest,)
                self.covers.append((self.chain, was, base, covered))
        if self.past_raise(raised):
            self.certain = False
        return meet(states[0], states[1])

    def uncover(self, since: int) -> None:
        """Place the reads made on the straight line past an undecided ``if`` whose leaving
        arms all read the same name before they may leave (``covers``): ``if cache: n =
        md.num_decode_tokens; ... return`` then ``md.num_decode_tokens`` past the ``if`` --
        every path reads it, in the arm or past it, so the read past it is placed as the
        ``if`` itself is.  The covers met since ``since`` (a count of ``covers``), done
        before an enclosing ``if`` places its arms' reads.  Where the test's values are
        followed (``stated_locals``)."""
        for rest, was, base, names in self.covers[since:]:
            for accesses in self.placed_lists():
                for i, access in enumerate(accesses):
                    if access.blocks == rest and not access.certain and access.name in names:
                        accesses[i] = attrs.evolve(access, certain=was, blocks=base)
        del self.covers[since:]

    def chain_roots(self) -> dict[str, str]:
        """The names a chain read may start from here on every path (``chain_through``): a
        local alias of a stand-in chain, or a parameter of the analysed call not rebound,
        each with the chain text it stands for.  Empty unless the context asks for chains."""
        if not self.context.chains:
            return {}
        roots = {n: p for n, p in self.aliases.items() if not n.startswith(STAR_ELEMENT)}
        if self.entry:
            roots.update((n, n) for n in self.params if n not in self.shadowed)
        return roots

    def joined_roots(
        self,
        roots: dict[str, str],
        going_on: Sequence[Sequence[ast.stmt]],
        maybe_after: Sequence[dict[str, str]],
    ) -> dict[str, str]:
        """``maybe_roots`` after an undecided ``if``: those an arm that goes on kept, and each
        name of ``roots`` (the chain roots before it) that is no longer one now though an arm
        that goes on past the ``if`` never rebinds it -- on that arm's paths it still holds
        the stand-in.  Only a name every binding of which is a plain ``name = ...`` (which
        ends what it held, ``forget_root``): no loop, ``with``, unpacking or ``del`` may
        rebind it unseen."""
        out: dict[str, str] = {}
        for kept in maybe_after:
            out.update(kept)
        now = self.chain_roots()
        for name, text in roots.items():
            if now.get(name) == text or all(rebinds(arm, name) for arm in going_on):
                continue
            if all(b.plain for b in self.analyzer.bindings(self.func).get(name, ())):
                out[name] = text
        return out

    def surely_fails(self, arm: Sequence[ast.stmt]) -> bool:
        """Whether ``arm`` reaches, on its own straight line, an ``assert`` the test's values
        made false (``false_asserts``): no statement before it may leave the arm (``return``,
        ``raise``, ``break``, ``continue``, outside a nested def), so wherever the arm runs
        the assertion fails, and with it the test (not one that expects it to raise:
        ``StatementHandlers.stmt_Assert``)."""
        for stmt in arm:
            if isinstance(stmt, ast.Assert) and id(stmt) in self.false_asserts:
                return True
            if _may_leave(stmt):
                return False
        return False

    def past_raise(self, raised_before: bool) -> bool:
        """Whether the part just walked met something that may raise what ``pytest.raises``
        expects (``raised``) where the walk had not before: the test's path may end there,
        so what follows is not certain, even after the loop or branch that holds it (which
        restores ``certain``).  Where the test's values are followed (``stated_locals``);
        the stub audit's output is pinned to the releases."""
        return (
            self.raised
            and not raised_before
            and self.context.expect_raise
            and self.context.stated_locals
        )

    def keep_common_fields(
        self,
        changed: set[tuple[str, str]],
        ends: Sequence[tuple[dict[str, object], dict[str, object]]],
    ) -> None:
        """After an undecided ``if``: a known object an arm changed a field of
        (``StatementHandlers.restate_field``) keeps the fields every arm that goes on
        leaves it with, rather than being forgotten whole (``args.f = 1`` in one arm leaves
        ``args.g`` known).  Where the test's values are followed (``stated_locals``)."""
        for kind, key in changed:
            values = [(c if kind == "c" else n).get(key, _MISSING) for c, n in ends]
            if not values or not all(isinstance(v, Obj) for v in values):
                continue
            first = values[0]
            common = tuple(
                (name, value)
                for name, value in first.fields  # type: ignore[union-attr]
                if all(
                    any(n == name and v is value for n, v in other.fields)  # type: ignore[union-attr]
                    for other in values[1:]
                )
            )
            (self.consts if kind == "c" else self.name_consts)[key] = attrs.evolve(
                first, fields=common
            )

    def placed_lists(self) -> tuple[list, ...]:
        """The recorded accesses that carry a placement (``certain``, ``blocks``)."""
        return (self.rec.reads, self.rec.required, self.rec.chains)

    def mark(self) -> tuple[int, int]:
        """How many required reads and chain reads the walk has recorded (``placed``)."""
        return len(self.rec.required), len(self.rec.chains)

    def placed(self, since: tuple[int, int]) -> bool:
        """Whether a required read recorded since ``since`` (a ``mark``), or a chain read
        that takes a link a namespace the test built whole lacks (``CallContext.whole``),
        sits where the walk is now: as certain, or in the same undecided blocks (the stub or
        the namespace fails at that read whenever the walk gets here)."""
        new = self.rec.required[since[0] :]
        if self.context.whole:
            new = [*new, *(c for c in self.rec.chains[since[1] :] if self.lacks(c))]
        if self.certain:
            return any(a.certain for a in new)
        if self.chain is None or self.analyzer.blocks.rests.intersection(self.chain):
            return False  # past an early exit (``rest_after``): placed only for ``uncover``
        return any(a.blocks == self.chain for a in new)

    def lacks(self, read: ChainRead) -> bool:
        """Whether ``read`` takes a link a namespace the test built whole lacks."""
        if read.guarded:
            return False
        whole = dict(self.context.whole)
        for depth in range(read.optional, len(read.path)):
            owner = ".".join((read.root, *read.path[:depth]))
            link = read.path[depth]
            if owner in whole and link[:1] != "[" and link not in whole[owner]:
                return True
        return False

    def end_path(self) -> None:
        """A call that raises on every run: the rest of this path is not reached."""
        self.ended = True
        self.raised = True
        if self.context.expect_raise:
            self.exits += 1
