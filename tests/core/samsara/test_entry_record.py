"""The entry record counts what failed and knows when implement has not run (issue 29)."""

from __future__ import annotations

import json

from scars.core.loops.samsara.reader import read_samsara_feature
from scars.core.samsara.aggregate import entry_verdict, parse_failures_said
from scars.core.samsara.feature import read_feature
from tests.factories import report, write_feature

REGISTRY = """\
entries:
  - id: known-ref
    description: "a registered systemic scar"
"""


def _two_dangling(task: str) -> str:
    """A report whose two items name ids the registry lacks: one file, two parse failures."""
    return report(task, ks=["systemic_ref: missing-one", "systemic_ref: missing-two"])


def test_two_failed_files_with_two_failures_each_say_two_files(tmp_path):
    feat = write_feature(
        tmp_path,
        {"task-1-scar.yaml": _two_dangling("task-1"), "task-2-scar.yaml": _two_dangling("task-2")},
        registry=REGISTRY,
    )
    f = read_feature(feat)
    assert len(f.parse_failures) == 4 and len({p.file for p in f.parse_failures}) == 2
    assert f.entry.verdict == "unknown"
    assert "2 file(s) failed to parse (4 parse failures)" in f.entry.record
    assert "4 parse failure(s)" not in f.entry.record
    state = read_samsara_feature(feat, tmp_path)
    assert state.reason.endswith("; 2 file(s) failed to parse (4 parse failures)")


def test_one_failure_per_file_keeps_its_words():
    from scars.core.model import Problem

    one_each = [Problem("a.yaml", 1, "not YAML"), Problem("b.yaml", 1, "not YAML")]
    assert parse_failures_said(one_each) == "2 parse failure(s)"
    assert parse_failures_said(one_each[:1] * 2) == "1 file(s) failed to parse (2 parse failures)"
    assert "2 parse failure(s)" in entry_verdict(0, 0, one_each).record


INDEX_PENDING = """\
feature: demo
status: pending
tasks:
  - id: task-1
    title: "first"
    status: pending
    scar_count: null
  - id: task-2
    title: "second"
    status: pending  # not started
    scar_count: null
"""


def _planned(tmp_path, index: str):
    feat = tmp_path / "changes" / "2026-11-02_planned"
    feat.mkdir(parents=True)
    (feat / "index.yaml").write_text(index, encoding="utf-8")
    return feat


def test_a_feature_not_implemented_yet_is_not_default_skipped(tmp_path, capsys):
    feat = _planned(tmp_path, INDEX_PENDING)
    f = read_feature(feat)
    assert f.entry.verdict == "unknown"
    assert "implement has not run yet" in f.entry.record and "skipped" not in f.entry.record
    state = read_samsara_feature(feat, tmp_path)
    assert state.status == "unknown" and state.stop_rule.met is not True
    assert state.reason.startswith("entry unknown: implement has not run yet")
    from scars.tui.cli.main import main

    assert main(["status", str(feat), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["entry"]["verdict"] == "unknown"


def test_one_task_started_is_implemented_enough_to_decide(tmp_path):
    # Boundary: a task that is not pending (or any report) and the seed's default skip holds.
    feat = _planned(tmp_path, INDEX_PENDING.replace("status: pending  # not started", "status: done"))
    assert read_feature(feat).entry.verdict == "skip"
    feat2 = write_feature(tmp_path, {"task-1-scar.yaml": report("task-1")}, name="2026-11-03_one-report")
    (feat2 / "index.yaml").write_text(INDEX_PENDING, encoding="utf-8")
    assert read_feature(feat2).entry.verdict == "skip"
