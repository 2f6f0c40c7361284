"""The one timestamp format scars writes into every log: ISO 8601, local zone offset, seconds."""

from __future__ import annotations

import datetime as _dt


def now_iso() -> str:
    """Now, ISO 8601 with the local zone offset, to the second."""
    return _dt.datetime.now(_dt.UTC).astimezone().isoformat(timespec="seconds")
