"""The one timestamp format scars writes into every log (ISO 8601, local zone offset, seconds), and
the one reader of timestamps others wrote."""

from __future__ import annotations

import datetime as _dt


def now_iso() -> str:
    """Now, ISO 8601 with the local zone offset, to the second."""
    return _dt.datetime.now(_dt.UTC).astimezone().isoformat(timespec="seconds")


def parse_time(value: object) -> _dt.datetime | None:
    """An ISO 8601 timestamp (``Z`` accepted; no zone means UTC), or None."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = _dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_dt.UTC)
    return moment
