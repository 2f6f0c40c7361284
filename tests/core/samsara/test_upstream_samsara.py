"""The real upstream samsara files, read in place, give the documented figures.

Figures not in formats.md §7 are derived by hand from the files; the derivation is in each
test's comment.
"""

from __future__ import annotations

import shutil

import pytest

from scars.core.formats.iteration_log import read_iteration_log
from scars.core.samsara.feature import find_features, read_feature
from scars.core.samsara.layout import find_repo_root
from scars.core.samsara.registry import read_registry

CHANGES = "samsara/changes"


def test_gen1_plus_gen3_gives_the_documented_figures(upstream, tmp_path):
    # formats.md §7: files 10 + 11 together -> known_shortcuts 3 (Gen1 A, B + Gen3 A),
    # silent 2, resolved excluded 1 (Gen3 B) -> signal_lost 5.
    src = upstream / "samsara/tests/fixtures/scar_reports/mixed_generation"
    feat = tmp_path / "changes" / "2026-01-01_mixed"
    (feat / "scar-reports").mkdir(parents=True)
    for name in ("gen1_plain_string.yaml", "gen3_slot_form.yaml"):
        shutil.copy(src / name, feat / "scar-reports" / name)
    f = read_feature(feat)
    assert f.counts == {"known_shortcuts": 3, "silent_failure_conditions": 2, "unverified_assumptions": 0}
    assert f.signal_lost == 5
    assert [it.text[:14] for it in f.resolved] == ["Gen3 shortcut "]
    assert f.resolved[0].resolved and "Gen3 shortcut B" in f.resolved[0].text
    assert f.parse_failures == ()
    forms = sorted(it.form for it in f.items)
    assert forms == ["gen1", "gen1", "gen1", "gen3", "gen3"]
    # Gen3 A is deferred -> "Deferred from Level 1"; the rest are unaddressed.
    deferred = [f.item(i).text for i in f.groups["deferred_from_level_1"]]
    assert len(deferred) == 1 and deferred[0].startswith("Gen3 shortcut A")
    assert len(f.groups["unaddressed"]) == 4
    # signal_lost 5 >= 5 and every report parsed -> the gate asks.
    assert f.entry.verdict == "gate"
    # Lines of the items in the upstream files (counted by hand: gen1 items at lines 10, 11, 13).
    gen1 = sorted(it.line for it in f.items if it.form == "gen1")
    assert gen1 == [10, 11, 13]


def test_phase4_feature(upstream):
    # task-1-scar.yaml: known_shortcuts 1 (deferred), silent 1, assumptions 2 of which one
    # `verified: false` (counted) and one `verified: true` (excluded) -> signal_lost 3.
    # No cross-task pattern (one report) and 3 < 5 -> default skip.
    f = read_feature(upstream / CHANGES / "2026-04-17_samsara-phase4-auto-iteration")
    assert f.signal_lost == 3
    assert f.counts == {"known_shortcuts": 1, "silent_failure_conditions": 1, "unverified_assumptions": 1}
    assert f.entry.verdict == "skip"
    assert f.entry.record == "signal_lost=3, no cross-task pattern, iteration skipped (reply to override)"
    assert [f.item(i).category for i in f.groups["deferred_from_level_1"]] == ["known_shortcuts"]
    assert f.registry.state == "present"  # samsara/.samsara/systemic-scars.yaml
    # iteration-log.yaml: era A, no budget -> defaults 3/2, two rounds 9->6 and 6->5.
    log = f.iteration_log
    assert (log.max_rounds, log.reviewer_retry_limit, log.budget_present) == (3, 2, False)
    assert [(r.round, r.signal_lost_before, r.signal_lost_after, r.decision) for r in log.rounds] == [
        (1, 9, 6, "continue"),
        (2, 6, 5, "stop"),
    ]
    assert all(r.era == "A" for r in log.rounds)
    assert len(log.rounds[0].accept) == 6 and log.rounds[0].accept[0]["expiry_date"] == "2026-10-19"
    assert log.signal_lost_initial == 9


def test_placement_feature(upstream):
    # iteration-r1-three-state-scar.yaml: known_shortcuts 1, silent [], one assumption
    # `verified: true` (excluded); its resolved_items entry describes an item that is no longer
    # listed, so it is not counted -> signal_lost 1, skip.
    f = read_feature(upstream / CHANGES / "2026-06-30_placement-consistency-gate")
    assert f.signal_lost == 1
    assert f.counts["known_shortcuts"] == 1
    (rep,) = f.reports
    assert rep.task_id == "iteration-r1-three-state-dry"
    assert {"budget_spent", "evidence_gained", "residual_risk", "resolved_items"} <= set(rep.extra) | {"resolved_items"}
    assert rep.extra["budget_spent"] == {"validation_runs": 3, "reviewer_retries_consumed": 0}
    assert f.items[0].text.startswith("The fix normalizes the third-state LABEL")
    assert f.items[0].line == 5
    assert f.entry.verdict == "skip"
    # pre-thinking.md Evaluation Contract, label to next label.
    c = f.contract
    assert c.primary_evaluator == "A pytest doc-contract test suite over the changed framework files."
    assert c.pass_signal.startswith("All three assertions green")
    assert c.out_of_scope_validation.startswith("Runtime obedience")
    assert c.out_of_scope_validation.endswith("codebase-map Task 3 doc contracts.")
    # index.yaml kept as a dict; comments are fine.
    assert [t["status"] for t in f.index["tasks"]] == ["done_with_concerns", "done_with_concerns"]
    assert f.index["status"] == "done"
    # iteration-log.yaml with budget_context and an inline-commented value.
    log = f.iteration_log
    assert log.budget_present and log.max_rounds == 3
    (r,) = log.rounds
    assert r.era == "A"  # expiry_date accepts, although budget_context is present
    assert r.budget_context["strategy_hint"] == "minimal_fix"
    assert (r.fixes_scar_count, r.signal_lost_before, r.signal_lost_after) == (1, 6, 3)


def test_other_iteration_logs(upstream):
    log = read_iteration_log(upstream / CHANGES / "2026-05-20_extract-pre-thinking-step/iteration-log.yaml")
    (r,) = log.rounds
    assert len(r.accept) == 7 and r.defer == ()
    assert r.accept[0]["description"].startswith("task-1 known_shortcuts[1]")  # folded scalar
    assert (r.signal_lost_before, r.signal_lost_after) == (9, 7)
    log = read_iteration_log(upstream / CHANGES / "2026-07-02_workflow-subtraction-optimization/iteration-log.yaml")
    (r,) = log.rounds
    assert log.signal_lost_initial == 34 and (r.signal_lost_before, r.signal_lost_after) == (34, 30)
    assert r.era == "B" and all("re_review_signal" in a and "owner" in a for a in r.accept)
    assert "系統性類別" in r.accept[0]["description"]


def test_registry_and_repo_discovery(upstream):
    root = upstream / "samsara"
    reg = read_registry(root)
    assert reg.state == "present"
    assert sorted(reg.entries) == ["doc-instruction-no-code-enforcement", "doc-vs-runtime-obedience"]
    assert [p.name for p in find_features(root)] == [
        "2026-04-17_samsara-phase4-auto-iteration",
        "2026-05-20_extract-pre-thinking-step",
        "2026-06-30_placement-consistency-gate",
        "2026-07-02_workflow-subtraction-optimization",
    ]
    assert find_repo_root(root / CHANGES.split("/", 1)[1] / "2026-06-30_placement-consistency-gate") == root


@pytest.mark.parametrize(
    "feature", ["2026-05-20_extract-pre-thinking-step", "2026-07-02_workflow-subtraction-optimization"]
)
def test_log_only_features_read_without_failures(upstream, feature):
    f = read_feature(upstream / CHANGES / feature)
    assert f.parse_failures == () and f.signal_lost == 0 and len(f.iteration_log.rounds) == 1
    # The directory holds only the log: say so instead of a silent zero.
    assert [(w.severity, str(w)) for w in f.warnings] == [
        ("warning", "scar-reports/: no such directory: signal_lost counts nothing here")
    ]
