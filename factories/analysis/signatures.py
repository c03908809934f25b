"""Compatibility re-export of :mod:`factories.analysis.binding` for modules not yet moved to it."""

from factories.analysis.binding import (
    CallMismatch,
    CallShape,
    Param,
    ParamKind,
    Signature,
    literal_value,
)

__all__ = ["CallMismatch", "CallShape", "Param", "ParamKind", "Signature", "literal_value"]
