"""Statistics as JSON: every value JSON-safe, an undefined statistic as ``{"undefined": reason}``.

Conventions: Undefined → ``{"undefined": reason}``; dataclasses → dicts of their fields; tuples and
lists → lists; numpy scalars → Python numbers; a non-finite float (NaN, ±inf) → ``{"undefined": "not
a finite number"}``, never NaN in the output; dates and times → ISO 8601. The result types of
:mod:`analysis.stats` derive from :class:`Jsonable` (``to_dict()``), and so do the analyses' reports
(:class:`analysis.vocabulary.Report`).
"""

from __future__ import annotations

import math
from dataclasses import fields, is_dataclass
from datetime import date, datetime
from typing import Any

from .undefined import Undefined


def to_jsonable(value: Any) -> Any:
    """``value`` as JSON-safe data: Undefined → ``{"undefined": reason}``, dataclasses → dicts,
    tuples → lists, numpy scalars → Python numbers, a non-finite float → ``{"undefined": "not a
    finite number"}``, times → ISO.

    The common cases first, without a call per value (a report of a million numbers converts in
    about a second): strings, ints, bools, None and finite floats as they are; each dataclass's
    field names looked up once per class.
    """
    kind = value.__class__
    if kind in _PLAIN or (kind is float and value - value == 0.0):  # v − v is NaN for ±inf and NaN
        return value
    if kind is tuple or kind is list:
        return [
            v
            if v.__class__ in _PLAIN or (v.__class__ is float and v - v == 0.0)
            else to_jsonable(v)
            for v in value
        ]
    if kind is dict:
        return {
            str(k): v
            if v.__class__ in _PLAIN or (v.__class__ is float and v - v == 0.0)
            else to_jsonable(v)
            for k, v in value.items()
        }
    if isinstance(value, Undefined):
        return {"undefined": value.reason}
    names = _FIELDS.get(kind)
    if names is None and is_dataclass(value) and not isinstance(value, type):
        names = _FIELDS[kind] = tuple(f.name for f in fields(value))
    if names is not None:
        out = {}
        for name in names:
            v = getattr(value, name)
            plain = v.__class__ in _PLAIN or (v.__class__ is float and v - v == 0.0)
            out[name] = v if plain else to_jsonable(v)
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
    """Base of the result dataclasses: ``to_dict()`` gives JSON-safe values."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe values (Undefined → ``{"undefined": reason}``)."""
        return to_jsonable(self)


__all__ = ["Jsonable", "to_jsonable"]
