"""The current decisions of a feature, read from its journal without taking the lock.

Read-only callers (``scars budget-context``, ``scars advise``, ``scars watch check`` before it
reopens, ``scars status``) need the state as the journal replays it; a torn or damaged line
is skipped exactly as :mod:`scars.core.journal` does for writers.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from scars.core import journal as J
from scars.core.lock import STATE_DIR


def journal_state(feature_dir: str | os.PathLike[str]) -> J.JournalState:
    """The replayed journal of ``<feature>/.scars/journal.jsonl`` (empty without one)."""
    path = Path(feature_dir) / STATE_DIR / J.JOURNAL_NAME
    if not path.exists():
        return J.JournalState()
    return J.replay(J.read_journal(path).records)


def current_decisions(feature_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """item_id -> Decision after replaying the journal ({} without one)."""
    return dict(journal_state(feature_dir).decisions)


def current_reopened(feature_dir: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """item_id -> reopen record of items a fired watch sent back to triage, not decided since."""
    return {k: dict(v) for k, v in journal_state(feature_dir).reopened.items()}
