"""What the test's known values decide: the value of an expression when the test states it,
the verdict of a branch condition, and what ``hasattr`` guards establish.
"""

from __future__ import annotations

import ast

from factories.analysis.readset._syntax import getattr_probe, literal_name, sized
from factories.analysis.values import Obj, compare, enum_member, length_of, truthy

_NO_GUARDS: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())


class Decisions:
    """The known-value half of ``Walker``: reads ``consts`` and ``name_consts`` there."""

    def known(self, node: ast.expr) -> tuple[object] | tuple[()]:
        """``(value,)`` when ``node`` is a literal, a known stub field, a known parameter or
        local, an attribute the test gave a known object (``metadata.num_actual_tokens`` of
        ``SimpleNamespace(num_actual_tokens=0)``, also as ``getattr(metadata, "n", default)``,
        which is that field where the test gave it), or an enum member (``Kind.DECODER``)."""
        if isinstance(node, ast.Constant):
            return (node.value,)
        if self.is_self_attr(node) and node.attr in self.consts:  # type: ignore[attr-defined]
            return (self.consts[node.attr],)  # type: ignore[attr-defined]
        if isinstance(node, ast.Name) and node.id in self.name_consts:
            return (self.name_consts[node.id],)
        probed = getattr_probe(node)
        if probed is not None:
            owner = self.known(probed[0])
            return owner[0].field(probed[1]) if owner and isinstance(owner[0], Obj) else ()
        length = sized(node)
        if length is not None:
            owner = self.known(length)
            return length_of(owner[0]) if owner else ()
        if isinstance(node, ast.Attribute):
            owner = self.known(node.value)
            if owner and isinstance(owner[0], Obj):
                return owner[0].field(node.attr)
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and (
                root.id == self.self_name or root.id in self.params or root.id in self.locals
            ):
                return ()
            member = enum_member(node)
            return (member,) if member is not None else ()
        return ()

    def truth(self, test: ast.expr) -> bool | None:
        """The value of a branch condition over known literal attributes, or None if unknown."""
        if isinstance(test, ast.Constant):
            return bool(test.value)
        known = self.known(test)
        if known:
            return truthy(known[0])
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.truth(test.operand)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):
            values = [self.truth(v) for v in test.values]
            if isinstance(test.op, ast.And):
                if False in values:
                    return False
                return True if all(v is True for v in values) else None
            if True in values:
                return True
            return False if all(v is False for v in values) else None
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            left_known, right_known = self.known(test.left), self.known(test.comparators[0])
            if not (left_known and right_known):
                return None
            return compare(test.ops[0], left_known[0], right_known[0])
        return None

    def branch(
        self, test: ast.expr, state: frozenset[str]
    ) -> tuple[bool | None, frozenset[str], frozenset[str]]:
        """Evaluate a branch condition once for ``if`` and ``x if c else y`` alike: its literal
        verdict (None when undecided) and the state each arm starts from (reads in the test,
        plus what ``hasattr`` guards establish on that arm)."""
        state = self.expr(test, state)
        on_true, on_false = self.guards(test, state)
        return self.truth(test), state | on_true, state | on_false

    def guards(
        self, test: ast.expr, state: frozenset[str]
    ) -> tuple[frozenset[str], frozenset[str]]:
        """Attributes that ``hasattr(self, "x")`` tests prove present when ``test`` is true
        and when it is false: ``if not hasattr(self, "_cache"): self._cache = ...`` followed
        by a read of ``self._cache`` needs nothing from the stub.  ``state``: what the fields
        of ``self`` hold there (a guard on ``self.cfg`` guards the stand-in it holds)."""
        if (
            isinstance(test, ast.Call)
            and isinstance(test.func, ast.Name)
            and test.func.id == "hasattr"
            and len(test.args) == 2
        ):
            if isinstance(test.args[0], ast.Name) and test.args[0].id == self.self_name:
                literal = literal_name(test.args[1])
                return (frozenset({literal}), frozenset()) if literal else _NO_GUARDS
            return self.chain_guard(test, state), frozenset()  # ``hasattr(metadata, "x")``
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            on_true, on_false = self.guards(test.operand, state)
            return on_false, on_true
        if isinstance(test, ast.BoolOp):
            parts = [self.guards(v, state) for v in test.values]
            if isinstance(test.op, ast.And):
                return frozenset().union(*(p[0] for p in parts)), frozenset()
            return frozenset(), frozenset().union(*(p[1] for p in parts))
        return _NO_GUARDS
