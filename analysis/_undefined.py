"""A statistic that has no value, and why: never a silent NaN, never an exception."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, is_dataclass
from datetime import date, datetime
from typing import Any


@dataclass(frozen=True)
class Undefined:
    """Why a statistic could not be computed (e.g. "one rater", "all ratings identical")."""

    reason: str
    """What made it undefined, in a few words."""

    def __bool__(self) -> bool:
        return False

    def __format__(self, spec: str) -> str:
        return f"undefined ({self.reason})"

    def __str__(self) -> str:
        return f"undefined ({self.reason})"




def to_jsonable(value: Any) -> Any:
    """``value`` as JSON-safe data: Undefined → ``{"undefined": reason}``, dataclasses → dicts, tuples → lists,
    numpy scalars → Python numbers, a non-finite float → ``{"undefined": "not a finite number"}``, times → ISO.

    The common cases first, without a call per value (a report of a million numbers converts in about a second):
    strings, ints, bools, None and finite floats as they are; each dataclass's field names looked up once per class.
    """
    kind = value.__class__
    if kind in _PLAIN or (kind is float and value - value == 0.0):  # v − v is NaN for ±inf and NaN
        return value
    if kind is tuple or kind is list:
        return [v if v.__class__ in _PLAIN or (v.__class__ is float and v - v == 0.0) else to_jsonable(v) for v in value]
    if kind is dict:
        return {str(k): v if v.__class__ in _PLAIN or (v.__class__ is float and v - v == 0.0) else to_jsonable(v)
                for k, v in value.items()}
    if isinstance(value, Undefined):
        return {"undefined": value.reason}
    names = _FIELDS.get(kind)
    if names is None and is_dataclass(value) and not isinstance(value, type):
        names = _FIELDS[kind] = tuple(f.name for f in fields(value))
    if names is not None:
        out = {}
        for name in names:
            v = getattr(value, name)
            out[name] = v if v.__class__ in _PLAIN or (v.__class__ is float and v - v == 0.0) else to_jsonable(v)
        return out
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    return _scalar(value)


_PLAIN = frozenset({str, int, bool, type(None)})
_FIELDS: dict[type, tuple[str, ...]] = {}
"""Field names per dataclass, looked up once."""


def _scalar(value: Any) -> Any:
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return {"undefined": "not a finite number"}
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return value


class Jsonable:
    """Base of the report dataclasses: ``to_dict()`` gives JSON-safe values."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe values (Undefined → ``{"undefined": reason}``)."""
        return to_jsonable(self)


__all__ = ["Jsonable", "Undefined", "to_jsonable"]
