"""Method signatures from the AST, and the check of a call against one.

A stub's call ``builder._init_fp8_prefill_ps_buffers(max_num_reqs=..., device=...)`` drifts
when vLLM adds a required parameter (0.29.0's ``attn_out_dtype``); binding the call's shape to
the current ``def`` catches it without running anything.
"""

from __future__ import annotations

import ast
import enum

import attrs

from factories.analysis._walk import walk
from factories.analysis.findings import FindingKind


class ParamKind(enum.Enum):
    POSITIONAL_ONLY = "positional-only"
    POSITIONAL_OR_KEYWORD = "positional-or-keyword"
    VAR_POSITIONAL = "*args"
    KEYWORD_ONLY = "keyword-only"
    VAR_KEYWORD = "**kwargs"


@attrs.frozen
class Param:
    name: str
    kind: ParamKind
    has_default: bool

    def __str__(self) -> str:
        prefix = {"*args": "*", "**kwargs": "**"}.get(self.kind.value, "")
        return f"{prefix}{self.name}{'=…' if self.has_default else ''}"


def literal_value(node: ast.AST | None) -> tuple[object] | tuple[()]:
    """``(value,)`` for a literal bool/None/number/string, else ``()``."""
    if isinstance(node, ast.Constant) and isinstance(
        node.value, (bool, int, float, str, type(None))
    ):
        return (node.value,)
    return ()


@attrs.frozen
class CallShape:
    """What a call site passes: positional count, keyword names, whether it unpacks, and
    the literal values among its arguments (``positional_literals[i]`` is ``(v,)`` or ``()``)."""

    n_positional: int
    keywords: tuple[str, ...]
    star_args: bool = False
    star_kwargs: bool = False
    positional_literals: tuple[tuple, ...] = attrs.field(default=(), eq=False)
    keyword_literals: tuple[tuple[str, object], ...] = attrs.field(default=(), eq=False)

    @classmethod
    def of(cls, call: ast.Call) -> CallShape:
        star_args = any(isinstance(a, ast.Starred) for a in call.args)
        plain = [a for a in call.args if not isinstance(a, ast.Starred)]
        keywords = tuple(k.arg for k in call.keywords if k.arg is not None)
        star_kwargs = any(k.arg is None for k in call.keywords)
        kw_literals = tuple(
            (k.arg, literal_value(k.value)[0])
            for k in call.keywords
            if k.arg is not None and literal_value(k.value)
        )
        return cls(
            len(plain),
            keywords,
            star_args,
            star_kwargs,
            tuple(literal_value(a) for a in plain) if not star_args else (),
            kw_literals,
        )

    def bind_literals(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, bound: bool
    ) -> dict[str, object]:
        """Parameter -> literal value for this call: literal arguments, and the literal
        defaults of parameters the call cannot have supplied."""
        args = node.args
        positional = [a.arg for a in list(args.posonlyargs) + list(args.args)]
        if bound:
            positional = positional[1:]
        out: dict[str, object] = {}
        for name, lit in zip(positional, self.positional_literals):
            if lit:
                out[name] = lit[0]
        out.update(dict(self.keyword_literals))
        if self.star_args or self.star_kwargs:
            return out
        supplied = set(positional[: self.n_positional]) | set(self.keywords)
        all_positional = [a.arg for a in list(args.posonlyargs) + list(args.args)]
        defaults = dict(
            zip(all_positional[len(all_positional) - len(args.defaults) :], args.defaults)
        )
        defaults.update(
            {a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None}
        )
        for name, default in defaults.items():
            lit = literal_value(default)
            if name not in supplied and lit:
                out[name] = lit[0]
        return out

    def __str__(self) -> str:
        parts = [f"{self.n_positional} positional"]
        if self.keywords:
            parts.append("keywords " + ", ".join(self.keywords))
        if self.star_args:
            parts.append("*args")
        if self.star_kwargs:
            parts.append("**kwargs")
        return "; ".join(parts)


@attrs.frozen
class CallMismatch:
    kind: FindingKind
    name: str
    message: str


@attrs.frozen
class Signature:
    """Parameters of a ``def`` with the bound first parameter (``self``) already dropped."""

    params: tuple[Param, ...]

    @classmethod
    def of(cls, node: ast.FunctionDef | ast.AsyncFunctionDef, bound: bool = True) -> Signature:
        args = node.args
        positional = list(args.posonlyargs) + list(args.args)
        n_defaults = len(args.defaults)
        first_default = len(positional) - n_defaults
        params: list[Param] = []
        for i, arg in enumerate(positional):
            kind = (
                ParamKind.POSITIONAL_ONLY
                if i < len(args.posonlyargs)
                else ParamKind.POSITIONAL_OR_KEYWORD
            )
            params.append(Param(arg.arg, kind, i >= first_default))
        if args.vararg:
            params.append(Param(args.vararg.arg, ParamKind.VAR_POSITIONAL, True))
        for arg, default in zip(args.kwonlyargs, args.kw_defaults):
            params.append(Param(arg.arg, ParamKind.KEYWORD_ONLY, default is not None))
        if args.kwarg:
            params.append(Param(args.kwarg.arg, ParamKind.VAR_KEYWORD, True))
        if bound and params and params[0].kind is not ParamKind.VAR_POSITIONAL:
            params = params[1:]
        return cls(tuple(params))

    def __str__(self) -> str:
        return "(" + ", ".join(str(p) for p in self.params) + ")"

    def check(self, shape: CallShape) -> list[CallMismatch]:
        """Mismatches of a call shape against this signature, as ``inspect.Signature.bind``."""
        out: list[CallMismatch] = []
        positional = [
            p
            for p in self.params
            if p.kind in (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD)
        ]
        has_var_pos = any(p.kind is ParamKind.VAR_POSITIONAL for p in self.params)
        has_var_kw = any(p.kind is ParamKind.VAR_KEYWORD for p in self.params)
        by_name = {p.name: p for p in self.params}
        if shape.n_positional > len(positional) and not has_var_pos:
            out.append(
                CallMismatch(
                    FindingKind.TOO_MANY_POSITIONAL,
                    str(shape.n_positional),
                    f"takes {len(positional)} positional arguments but "
                    f"{shape.n_positional} were given",
                )
            )
        filled = {p.name for p in positional[: shape.n_positional]}
        for kw in shape.keywords:
            param = by_name.get(kw)
            if param is None or param.kind in (
                ParamKind.POSITIONAL_ONLY,
                ParamKind.VAR_POSITIONAL,
                ParamKind.VAR_KEYWORD,
            ):
                if not has_var_kw:
                    out.append(
                        CallMismatch(
                            FindingKind.UNKNOWN_KEYWORD,
                            kw,
                            f"got an unexpected keyword argument {kw!r}",
                        )
                    )
                continue
            if kw in filled:
                out.append(
                    CallMismatch(
                        FindingKind.DUPLICATE_ARGUMENT, kw, f"got multiple values for {kw!r}"
                    )
                )
            filled.add(kw)
        if shape.star_args or shape.star_kwargs:
            return out  # unpacking may supply anything; only report what is certain
        for p in self.params:
            if p.has_default or p.name in filled:
                continue
            if p.kind in (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD):
                continue
            out.append(
                CallMismatch(
                    FindingKind.MISSING_ARGUMENT,
                    p.name,
                    f"missing required argument {p.name!r}",
                )
            )
        return out


#: Calls by which a body may read its parameters without naming them.
_INTROSPECTION = frozenset({"locals", "vars", "currentframe", "_getframe"})


@attrs.frozen
class Unheard:
    """The arguments a function the test wrote never uses, as a call binds them: what a
    replacement it installed (``monkeypatch.setattr(mod, "make_layers", lambda *_, **kw:
    ...)``) leaves untouched of what vLLM hands it.  A callable vLLM hands there (the layer
    factory ``lambda prefix: Layer(cfg, prefix)``) is never called, so its body is no code
    that runs (``CallHandlers.call``).

    ``positions``: per positional parameter, whether the body never reads it; ``names``: the
    parameters a keyword may bind that it never reads, of ``keywords``, all of them;
    ``rest``/``rest_keywords``: surplus positional/keyword arguments land in a ``*args``/
    ``**kwargs`` it never reads (or, for a mock, go nowhere).  ``silent``: calling it never
    raises, whatever a call hands it: it takes any arguments (``*args`` and ``**kwargs``, no
    parameter without a default) and its body only gives a literal (``lambda *a, **k:
    None``); under ``pytest.raises`` the exception the test expects never comes from it
    (``CallHandlers.call_out``)."""

    positions: tuple[bool, ...] = ()
    names: frozenset[str] = frozenset()
    keywords: frozenset[str] = frozenset()
    rest: bool = False
    rest_keywords: bool = False
    silent: bool = False

    @classmethod
    def of(cls, node: ast.Lambda | ast.FunctionDef | ast.AsyncFunctionDef) -> Unheard | None:
        """What ``node`` never reads of its arguments (a read anywhere in its body, nested
        scopes too, counts); None where it reads them all, or may read them unnamed
        (``locals()``, a frame)."""
        args = node.args
        body = [node.body] if isinstance(node, ast.Lambda) else node.body
        read: set[str] = set()
        for stmt in body:
            for sub in walk(stmt):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
                    read.add(sub.id)
                elif isinstance(sub, ast.Attribute) and sub.attr in _INTROSPECTION:
                    return None
        if read & _INTROSPECTION:
            return None
        positional = [*args.posonlyargs, *args.args]
        keywords = [*args.args, *args.kwonlyargs]
        made = cls(
            positions=tuple(a.arg not in read for a in positional),
            names=frozenset(a.arg for a in keywords if a.arg not in read),
            keywords=frozenset(a.arg for a in keywords),
            rest=args.vararg is not None and args.vararg.arg not in read,
            rest_keywords=args.kwarg is not None and args.kwarg.arg not in read,
            silent=_takes_anything(args) and _gives_literal(node),
        )
        if not (any(made.positions) or made.names or made.rest or made.rest_keywords):
            return None
        return made

    @classmethod
    def deaf(cls) -> Unheard:
        """A mock: it takes any arguments and calls none of them (a spec may still make a
        call raise, so it is not ``silent``)."""
        return cls(rest=True, rest_keywords=True)

    def ignores(self, position: int | None, keyword: str | None) -> bool:
        """Whether the argument at ``position`` (counted before any ``*`` unpacking) or
        handed as ``keyword`` lands on a parameter the body never reads."""
        if keyword is not None:
            return keyword in self.names if keyword in self.keywords else self.rest_keywords
        if position is None:
            return False
        if position < len(self.positions):
            return self.positions[position]
        return self.rest


def _takes_anything(args: ast.arguments) -> bool:
    """Whether a call binds any arguments to these parameters without a ``TypeError``."""
    return (
        args.vararg is not None
        and args.kwarg is not None
        and len(args.defaults) == len(args.posonlyargs) + len(args.args)
        and all(d is not None for d in args.kw_defaults)
    )


def _gives_literal(node: ast.Lambda | ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether the body of ``node`` only gives a literal: a lambda of one, or a ``def`` of a
    docstring, ``pass`` and ``return`` of one (or of nothing); the defaults a call skips are
    evaluated at definition, not at the call."""
    if isinstance(node, ast.Lambda):
        return isinstance(node.body, ast.Constant)
    if isinstance(node, ast.AsyncFunctionDef) or node.decorator_list:
        return False
    return all(
        isinstance(stmt, ast.Pass)
        or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))
        or (
            isinstance(stmt, ast.Return)
            and (stmt.value is None or isinstance(stmt.value, ast.Constant))
        )
        for stmt in node.body
    )
