"""A small samsara feature generated in tmp_path for the durable-layer tests."""

from __future__ import annotations

from pathlib import Path

REPORT = """task_id: task-1
completion_status: done_with_concerns
known_shortcuts:
  - description: "Retry count is hard-coded to 3"
  - description: "Only one writer at a time"
silent_failure_conditions:
  - description: "Timezone-naive timestamps compare as UTC"
assumptions_made:
  - assumption: "Exports are smaller than 1 GB"
    verified: false
    note: "a larger export would be truncated"
debt_registered: true
debt_location: "src/export.py"
"""

EXTRA = """task_id: task-2
completion_status: done
known_shortcuts:
  - description: "{text}"
silent_failure_conditions: []
assumptions_made: []
debt_registered: true
debt_location: "src/other.py"
"""


def make_feature(root: Path, *, auto: bool = False, name: str = "2026-07-10_csv-export") -> Path:
    feature = root / "changes" / name
    (feature / "scar-reports").mkdir(parents=True)
    (feature / "scar-reports" / "task-1-scar.yaml").write_text(REPORT, encoding="utf-8")
    (feature / "index.yaml").write_text("tasks:\n  - id: task-1\n    status: done\n", encoding="utf-8")
    if auto:
        (feature / "pre-thinking.md").write_text(
            "# Pre-thinking\n\n## Evaluation Contract\n\n**Primary evaluator:** tests\n\nExecution mode: auto\n",
            encoding="utf-8",
        )
    return feature


def add_item(feature: Path, text: str, n: int = 2) -> None:
    (feature / "scar-reports" / f"task-{n}-scar.yaml").write_text(EXTRA.format(text=text), encoding="utf-8")


ACCEPT = {"re_review_signal": "a second process starts writing exports", "owner": "export team", "rationale": "single-process deployment today"}
