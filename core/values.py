"""Values read from YAML or JSON, taken as the shape the caller needs (never raising):
text (:func:`as_text`, :func:`opt_text`, :func:`readable`), a mapping (:func:`as_dict`) or a list
(:func:`as_list`)."""

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


def json_ready(value: Any) -> Any:
    """A parsed YAML value as JSON can hold it: mappings with text keys, lists, text, numbers,
    booleans and null as they are; a date, a timestamp, binary data, NaN or infinity as text."""
    if isinstance(value, dict):
        return {as_text(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else str(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return as_text(value)


def readable(value: Any, *, limit: int = 4000) -> str:
    """``value`` as a person reads it: a mapping as ``key: value; key: value``, a list as
    ``a; b`` (nested ones in brackets), text as written — never Python's ``repr`` of a dict.
    Cut at ``limit`` characters with an ellipsis."""

    def go(v: Any, depth: int) -> str:
        if isinstance(v, dict):
            inner = "; ".join(f"{as_text(k)}: {go(x, depth + 1)}" for k, x in v.items())
            return inner if depth == 0 else "{" + inner + "}"
        if isinstance(v, list):
            inner = "; ".join(go(x, depth + 1) for x in v)
            return inner if depth == 0 else "[" + inner + "]"
        if isinstance(v, bool):
            return "true" if v else "false"
        return as_text(v)

    text = go(value, 0)
    return text if len(text) <= limit else text[: limit - 1] + "…"
