"""Metadata stand-ins whose field set is the real vLLM dataclass's, checked on every access.

vLLM's seed test hands the builder ``SimpleNamespace`` objects: they accept any name, so a
builder that writes ``metadata.fp8_prefill_qo_indptrr`` (a field ``AiterMLAMetadata`` does not
declare) or a test that forgets a field passes silently until a real batch arrives.  A stand-in
is built from ``dataclasses.fields`` of the *imported* class: setting an undeclared name raises,
reading a declared field nobody set raises with the field named, and nothing else is allowed.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from factories.errors import StandInError


class StandIn:
    """An attribute bag restricted to the declared fields of ``dataclass_type``."""

    __slots__ = ("_dataclass", "_declared", "_values")

    def __init__(self, dataclass_type: type, **values: Any) -> None:
        if not dataclasses.is_dataclass(dataclass_type):
            raise TypeError(f"{dataclass_type!r} is not a dataclass")
        object.__setattr__(self, "_dataclass", dataclass_type)
        object.__setattr__(
            self, "_declared", frozenset(f.name for f in dataclasses.fields(dataclass_type))
        )
        object.__setattr__(self, "_values", {})
        for name, value in values.items():
            setattr(self, name, value)

    @property
    def dataclass_type(self) -> type:
        return self._dataclass

    @property
    def values(self) -> dict[str, Any]:
        return dict(self._values)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._declared:
            raise StandInError(
                f"{self._dataclass.__name__} declares no field {name!r}; "
                f"the code under test writes a name the real metadata would not carry"
            )
        self._values[name] = value

    def __getattr__(self, name: str) -> Any:
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        declared = object.__getattribute__(self, "_declared")
        cls = object.__getattribute__(self, "_dataclass").__name__
        if name in declared:
            raise StandInError(
                f"{cls}.{name} is read but the stand-in does not set it; "
                f"add it to factories.stubs.builders.make_prefill_batch"
            )
        raise StandInError(f"{cls} declares no field {name!r}")

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}=…" for k in sorted(self._values))
        return f"StandIn[{self._dataclass.__name__}]({inner})"
