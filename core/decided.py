"""The current decisions of a feature, read from its journal without taking the lock.

Read-only callers (``scars budget-context``, ``scars advise``, ``scars watch check`` before it
reopens, ``scars status``) need the state as the journal replays it
(:func:`scars.core.journal.feature_state`); a torn or damaged line is skipped exactly as the
journal does for writers.
"""

from __future__ import annotations

import os
from typing import Any

from scars.core import journal as J


def current_decisions(feature_dir: str | os.PathLike[str], feature: Any = None) -> dict[str, Any]:
    """item_id -> Decision after replaying the journal ({} without one).

    With the read ``feature``, a decision made on another item than the one holding its id
    now is left out (scars.core.journal.check_items; README, "Item ids").
    """
    items = None if feature is None else list(feature.items) + list(feature.resolved)
    return dict(J.feature_state(feature_dir, items=items).decisions)


def current_reopened(feature_dir: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """item_id -> reopen record of items a fired watch sent back to triage, not decided since."""
    state = J.feature_state(feature_dir)
    return {k: dict(v) for k, v in state.reopened.items() if k not in state.decisions}
