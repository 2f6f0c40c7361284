"""A samsara feature in the loops inbox: waiting when it needs triage or a round decision."""

from __future__ import annotations

from pathlib import Path

from scars.core.loops import discover_loops
from scars.core.loops.samsara.reader import feature_state
from scars.core.samsara.feature import read_feature


def make_feature(root: Path, items: int, log: str | None = None) -> Path:
    feature = root / "changes" / "2026-01-02_demo"
    (feature / "scar-reports").mkdir(parents=True)
    shortcuts = "\n".join(f'  - "shortcut number {i} in module {i}"' for i in range(items))
    (feature / "scar-reports" / "task-1-scar.yaml").write_text(
        f"task_id: task-1\ncompletion_status: done\nknown_shortcuts:\n{shortcuts or '  []'}\n"
        "silent_failure_conditions: []\nassumptions_made: []\n"
    )
    if log is not None:
        (feature / "iteration-log.yaml").write_text(log)
    return feature


def test_gate_feature_with_undecided_items_waits_for_triage(tmp_path):
    make_feature(tmp_path, 5)  # signal_lost 5 ≥ 5 → entry gate
    (state,) = discover_loops(tmp_path)
    assert state.kind == "samsara" and state.details["entry"] == "gate"
    assert state.waiting_for_human and state.route == "triage"
    assert "5 of 5 item(s) undecided" in state.reason
    assert state.trend == (5.0,) and state.history()[-1].label == "now"


def test_decided_items_and_open_round_need_a_round_decision(tmp_path):
    feature = read_feature(make_feature(tmp_path, 5))
    decisions = {item.id: object() for item in feature.items}
    state = feature_state(feature, tmp_path, decisions=decisions, open_round=1)
    assert state.waiting_for_human and state.route == "round decision"
    state = feature_state(feature, tmp_path, decisions=decisions, open_round=None)
    assert not state.waiting_for_human


def test_small_feature_is_default_skip_and_not_waiting(tmp_path):
    make_feature(tmp_path, 2)
    (state,) = discover_loops(tmp_path / "changes" / "2026-01-02_demo")
    assert state.details["entry"] == "skip" and state.stop_rule.met and not state.waiting_for_human
