"""The current decisions of a feature, read from its journal without taking the lock.

Read-only callers (``scars budget-context``, ``scars advise``, ``scars watch check`` without
reopening) need the decisions as the journal replays them; a torn or damaged line is skipped
exactly as :mod:`scars.core.journal` does for writers.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from scars.core import journal as J
from scars.core.lock import STATE_DIR


def current_decisions(feature_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """item_id -> Decision after replaying ``<feature>/.scars/journal.jsonl`` ({} without one)."""
    path = Path(feature_dir) / STATE_DIR / J.JOURNAL_NAME
    if not path.exists():
        return {}
    return dict(J.replay(J.read_journal(path).records).decisions)
