"""A small samsara repository on disk for the app's Pilot and snapshot tests, and the one wait
the Pilot tests use for what the app does (never a fixed time)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

REPORTS = {
    "task-1-scar.yaml": """\
task_id: task-1
completion_status: done_with_concerns
known_shortcuts:
  - description: "Retry count is hard-coded to 3"
    deferred_to_feature_iteration: true
  - "CSV export skips empty rows"
silent_failure_conditions:
  - description: "Timezone-naive timestamps compare as UTC"
assumptions_made:
  - assumption: "Only one writer at a time"
    verified: false
    note: "Concurrent writers would interleave lines"
debt_registered: true
debt_location: "src/export.py:4-6"
""",
    "task-2-scar.yaml": """\
task_id: task-2
completion_status: done
known_shortcuts:
  - "Timezone-naive timestamps compare as UTC"
  - description: "Markup [bold]shown[/bold] literally [@click=app.quit]click[/] and \\e[2Jescape"
silent_failure_conditions: []
assumptions_made: []
debt_registered: true
debt_location: "../../outside.txt"
""",
    "task-3-scar.yaml": "- this is a list, not a mapping\n",
}

ITERATION_LOG = """\
feature: "csv-export"
signal_lost_initial: 9
budget:
  max_rounds: 3
  reviewer_retry_limit: 2
rounds:
  - round: 1
    signal_lost_before: 9
    budget_context:
      remaining_rounds_at_start: 2
      stagnation_count_at_start: 0
      net_rot_previous_round: 0
      strategy_hint: explore
    items_triaged: 5
    triage_result:
      fix: ["a", "b", "c"]
      accept:
        - description: "d"
          re_review_signal: "a second writer appears"
          owner: "maintainer of export service"
          rationale: "single-process deployment today"
      defer: ["e"]
    fixes_applied: 3
    fixes_scar_count: 0
    signal_lost_after: 6
    decision: continue
    decision_reason: "fix-class items remain"
"""

PRE_THINKING = """\
# Pre-thinking

Execution mode: human-in-the-loop

## Evaluation Contract

**Primary evaluator:** pytest tests/test_export.py
**Agent can perform it by:** running pytest
**Pass signal:** all tests pass
**Fail signal:** a failing assertion
**Feedback loop:** run pytest tests/test_export.py -x and read the first failing assertion
**Out of scope validation:** none
"""

EXPORT_PY = "".join(f"line_{i} = {i}\n" for i in range(1, 21))


def make_repo(root: Path) -> Path:
    """Create the repository; return the feature directory."""
    feature = root / "changes" / "2026-07-01_csv-export"
    (feature / "scar-reports").mkdir(parents=True)
    for name, text in REPORTS.items():
        (feature / "scar-reports" / name).write_text(text, encoding="utf-8")
    (feature / "iteration-log.yaml").write_text(ITERATION_LOG, encoding="utf-8")
    (feature / "pre-thinking.md").write_text(PRE_THINKING, encoding="utf-8")
    (root / "src").mkdir()
    (root / "src" / "export.py").write_text(EXPORT_PY, encoding="utf-8")
    (root.parent / "outside.txt").write_text("secret outside the repository\n", encoding="utf-8")
    return feature


async def wait_until(pilot, condition: Callable[[], object], what: str, timeout: float = 30.0) -> None:  # noqa: ANN001
    """Let the app work until ``condition()`` holds: a state the app reaches, never a fixed time.

    Each round lets the app process its pending messages (``pilot.pause()``); ``timeout`` only
    bounds a hang, so a state that never comes fails with ``what`` instead of blocking the suite.
    """
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"the app never reached: {what}")
        await pilot.pause()


async def filter_shown(pilot, text: str) -> None:  # noqa: ANN001
    """Wait until the filter ``text`` ("" for none) is applied and its rows are shown.

    The rows are built in a thread worker started when the filter is applied; once the app's
    filter is ``text`` that worker exists, and once it has finished its rows are on screen.
    """
    app = pilot.app

    def shown() -> bool:
        flt = app.filter
        return (flt.source if flt is not None else "") == text.strip() and all(w.is_finished for w in app.workers)

    await wait_until(pilot, shown, f"the rows of the filter {text!r}")
