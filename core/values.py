"""Values read from YAML or JSON, taken as the shape the caller needs (never raising):
text (:func:`as_text`, :func:`opt_text`), a mapping (:func:`as_dict`) or a list (:func:`as_list`)."""

from __future__ import annotations

from typing import Any


def as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return str(value)


def opt_text(value: Any) -> str | None:
    return None if value is None else as_text(value)


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a mapping, else an empty one."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` when it is a list, else an empty one."""
    return value if isinstance(value, list) else []
