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


def how_long_ago(started: object, now: _dt.datetime | None = None) -> str | None:
    """How long ago an ISO time was, in words ("3 min"), or None when it cannot be read (or is ahead)."""
    then = parse_time(started)
    if then is None:
        return None
    seconds = int(((now or _dt.datetime.now(_dt.UTC)) - then).total_seconds())
    if seconds < 0:
        return None
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    if seconds < 2 * 86400:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} days"
