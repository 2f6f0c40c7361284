"""Small samsara feature directories written in tmp_path for reader tests (ours)."""

from __future__ import annotations

import textwrap
from pathlib import Path


def make_feature(
    root: Path,
    reports: dict[str, str],
    *,
    name: str = "2026-11-02_demo",
    registry: str | None = None,
    files: dict[str, str] | None = None,
) -> Path:
    """Write ``root/changes/<name>/scar-reports/<file>`` for each report (dedented).

    ``registry``: text of ``root/.samsara/systemic-scars.yaml`` (None: no registry).
    ``files``: other files of the feature directory (relative path -> text).
    """
    feat = root / "changes" / name
    (feat / "scar-reports").mkdir(parents=True, exist_ok=True)
    for fname, text in reports.items():
        (feat / "scar-reports" / fname).write_text(textwrap.dedent(text), encoding="utf-8")
    if registry is not None:
        (root / ".samsara").mkdir(exist_ok=True)
        (root / ".samsara" / "systemic-scars.yaml").write_text(textwrap.dedent(registry), encoding="utf-8")
    for rel, text in (files or {}).items():
        p = feat / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text), encoding="utf-8")
    return feat


REGISTRY = """\
entries:
  - id: doc-only-guard
    description: "A markdown rule has no code-level enforcement."
    first_recorded: "2026-10-01"
    applies_when: "a task adds an instruction"
"""


def report(task_id: str | None = "task-1", *, ks=(), sf=(), am=(), extra: str = "") -> str:
    """A report whose sections are given as already-formatted YAML item blocks."""
    out = []
    if task_id is not None:
        out.append(f"task_id: {task_id}")
    out.append("completion_status: done")
    for key, items in (("known_shortcuts", ks), ("silent_failure_conditions", sf), ("assumptions_made", am)):
        if not items:
            out.append(f"{key}: []")
            continue
        out.append(f"{key}:")
        for it in items:
            block = textwrap.dedent(it).strip("\n").splitlines()
            out.append("  - " + block[0])
            out.extend("    " + ln for ln in block[1:])
    out.append("debt_registered: true")
    out.append('debt_location: "src/x.py:1"')
    if extra:
        out.append(textwrap.dedent(extra).strip("\n"))
    return "\n".join(out) + "\n"
