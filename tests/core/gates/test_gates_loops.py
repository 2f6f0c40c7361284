"""loop-spec, ARIS / Mechanist and bkit gates: evidence read, files written field by field."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest

from scars.core import gates
from scars.core.clock import parse_time
from scars.core.errors import DecisionRefused, LockHeld, PathNotFound, UsageError
from scars.core.loops.loopspec.reader import gap_id
from scars.core.storage.lock import FeatureLock
from tests.factories import SPEC_GAP, bkit_project, copy_upstream, loop_spec_feature, mechanist_state, tree_hashes

USER = "alice"


def _entries(path):
    text = path.read_text(encoding="utf-8")
    return re.findall(r"^## Decision (\d{3}) - (\S+)$", text, re.M), text


def _field(text: str, name: str) -> str:
    m = re.findall(rf"^- {name}: (.*)$", text, re.M)
    return m[-1]


# ---------------------------------------------------------------- loop-spec `spec`


def test_spec_evidence_shows_the_gap_and_the_upstream_prompt(tmp_path):
    fdir = loop_spec_feature(tmp_path)
    ev = gates.gather("spec", fdir)
    assert ev.workflow_prompt == (
        "ITERATE judges the goal still unmet because of a SPEC-level gap: the spec never says what 'offline' "
        "means for sync. Re-open SPEC/DISCUSS, ship as-is, or stop?"
    )
    figs = dict(ev.figures)
    assert figs["iterations"] == "2 of 10 used"
    assert figs["fix first"] == SPEC_GAP["fix_first"]
    assert ev.warnings == []
    assert ev.files_read == [".loop-spec/features/sync/feature.json"]
    # The project root and the feature.json itself locate the same feature.
    assert gates.gather("spec", tmp_path).state_file == ev.state_file
    assert gates.gather("spec", fdir / "feature.json").state_file == ev.state_file


def test_spec_reopen_rewinds_to_discuss_with_bak_and_keeps_unknown_keys(tmp_path):
    fdir = loop_spec_feature(tmp_path)
    old = (fdir / "feature.json").read_bytes()
    res = gates.record(gates.gather("spec", fdir), "reopen", None, user=USER, source="test")
    assert res.answer == "reopen" and res.decision == "revise" and res.decided_by == USER
    data = json.loads((fdir / "feature.json").read_text())
    assert data["currentPhase"] == "discuss"  # seed 004: DISCUSS refinement, the spec itself stays
    assert data["currentPhaseStartedAt"] is None
    assert data["completedPhases"] == ["spec"]
    assert data["iterate"]["feedback"] == SPEC_GAP  # the re-entered phase fixes the gap first
    assert data["iterate"]["lastRoute"] == "spec"
    assert data["warnings"] == ["verify-deferred: flaky test quarantined"]
    assert data["unknownKey"] == {"kept": True}
    assert list(data) == list(json.loads(old))  # key order kept
    assert (fdir / "feature.json.bak").read_bytes() == old
    assert not (fdir / "feature.json.tmp").exists()
    assert not (tmp_path / ".loop-spec" / "BACKLOG.md").exists()
    assert res.recorded == [
        ".loop-spec/features/sync/auto-decisions.md",
        ".loop-spec/features/sync/feature.json",
        ".loop-spec/features/sync/feature.json.bak",
        ".loop-spec/features/sync/graph-checkpoints.jsonl",
        ".loop-spec/features/sync/PROGRESS.md",
    ]
    heads, text = _entries(fdir / "auto-decisions.md")
    assert heads == [("001", "iteration.spec")]
    assert _field(text, "decision") == "revise"
    assert _field(text, "workflow_prompt").startswith('"ITERATE judges the goal still unmet')
    progress = (fdir / "PROGRESS.md").read_text()
    assert re.fullmatch(
        r"- \d{4}-\d{2}-\d{2}: ITERATE spec gate: re-open SPEC/DISCUSS \(decision-001, alice via scars gate\)\n",
        progress,
    )


def test_spec_ship_delivers_with_the_gap_in_warnings_and_backlog(tmp_path):
    fdir = loop_spec_feature(tmp_path)
    reason = "offline mode is out of scope for v1; the backlog keeps it"
    res = gates.record(gates.gather("spec", fdir), "ship", reason, user=USER, source="test")
    assert res.decision == "accept_gap" and res.reason == reason
    data = json.loads((fdir / "feature.json").read_text())
    gap_line = f"{SPEC_GAP['description']} — fix first: {SPEC_GAP['fix_first']}"
    # The prefix loop-spec's own scripts read as "not converged" (lib/cycle-result.sh).
    assert data["warnings"] == ["verify-deferred: flaky test quarantined", f"iterate-budget-spent: {gap_line}"]
    assert data["currentPhase"] == "deliver"
    assert data["completedPhases"][-1] == "iterate"
    assert data["iterate"]["feedback"] is None
    assert data["iterate"]["lastRoute"] == "deliver"
    backlog = (tmp_path / ".loop-spec" / "BACKLOG.md").read_text()
    line = backlog.splitlines()[-1]
    assert re.fullmatch(
        rf"- \[ \] \(\d{{4}}-\d{{2}}-\d{{2}} sync iterate-gap id={gap_id(SPEC_GAP['fix_first'])}\) "
        + re.escape(gap_line),
        line,
    )
    _, text = _entries(fdir / "auto-decisions.md")
    assert _field(text, "gatekeeper_answer") == f'"Ship as-is: {reason}"'
    assert _field(text, "rationale") == f'"{reason}"'


def test_spec_ship_twice_adds_the_backlog_entry_once(tmp_path):
    fdir = loop_spec_feature(tmp_path)
    for _ in range(2):
        gates.record(gates.gather("spec", fdir), "ship", "out of scope for v1, tracked on the backlog", user=USER)
    backlog = (tmp_path / ".loop-spec" / "BACKLOG.md").read_text()
    assert backlog.count("iterate-gap") == 1
    heads, _ = _entries(fdir / "auto-decisions.md")
    assert [h[0] for h in heads] == ["001", "002"]


def test_spec_stop_changes_no_state_only_records(tmp_path):
    fdir = loop_spec_feature(tmp_path)
    old = (fdir / "feature.json").read_bytes()
    res = gates.record(gates.gather("spec", fdir), "h", None, user=USER)
    assert res.answer == "stop" and res.decision == "reject"
    assert (fdir / "feature.json").read_bytes() == old
    assert not (fdir / "feature.json.bak").exists()
    assert "stop - hand back" in (fdir / "PROGRESS.md").read_text()
    # The engine's ledger says where a resume continues: ITERATE, whose verdict asks again.
    last = json.loads((fdir / "graph-checkpoints.jsonl").read_text().splitlines()[-1])
    assert last["node"] == "iterate" and last["edge"].startswith("human.iterate-spec-approval:stop")


def test_spec_without_a_gap_refuses_ship(tmp_path):
    fdir = loop_spec_feature(tmp_path, gap=None)
    ev = gates.gather("spec", fdir)
    assert "no gap is recorded" in ev.warnings[0]
    with pytest.raises(DecisionRefused, match="no gap"):
        gates.record(ev, "ship", "shipping with nothing to record", user=USER)


def test_spec_on_the_real_upstream_feature_json(upstream, tmp_path):
    root = copy_upstream(upstream, "loop-spec", tmp_path)
    ev = gates.gather("spec", root)
    assert dict(ev.figures)["iterations"] == "0 of 10 used"
    assert any("no gap" in w for w in ev.warnings)
    # No gap recorded: the rewind is not the loop's own call, so it needs a reason.
    with pytest.raises(DecisionRefused, match="needs a reason"):
        gates.record(ev, "reopen", None, user=USER)
    res = gates.record(ev, "reopen", "the GDD spec never names the resume contract", user=USER)
    data = json.loads((root / ".loop-spec/features/gdd/feature.json").read_text())
    assert data["currentPhase"] == "discuss" and data["schemaVersion"] == 7
    assert res.recorded[0] == ".loop-spec/features/gdd/auto-decisions.md"


def test_spec_changed_on_disk_between_read_and_write_writes_nothing(tmp_path):
    from scars.core.errors import ChangedOnDisk

    fdir = loop_spec_feature(tmp_path)
    ev = gates.gather("spec", fdir)
    data = json.loads((fdir / "feature.json").read_text())
    data["currentPhase"] = "verify"
    (fdir / "feature.json").write_text(json.dumps(data, indent=2) + "\n")
    before = tree_hashes(tmp_path)
    with pytest.raises(ChangedOnDisk):
        gates.record(ev, "reopen", None, user=USER)
    after = tree_hashes(tmp_path)
    after.pop(".loop-spec/features/sync/.scars/lock", None)
    after.pop(".loop-spec/features/sync/.scars/.gitignore", None)  # the lock's own: `lock` is not committed
    assert after == before


def test_a_held_lock_refuses_with_exit_5(tmp_path):
    fdir = loop_spec_feature(tmp_path)
    ev = gates.gather("spec", fdir)
    with FeatureLock(fdir, user="bob"), pytest.raises(LockHeld) as exc:
        gates.record(ev, "reopen", None, user=USER)
    assert exc.value.exit_code == 5
    assert not (fdir / "auto-decisions.md").exists()


def test_missing_paths_are_usage_errors(tmp_path):
    with pytest.raises(PathNotFound):
        gates.gather("spec", tmp_path / "nope")
    with pytest.raises(PathNotFound):
        gates.gather("review-continue", tmp_path)
    with pytest.raises(PathNotFound):
        gates.gather("pdca-continue", tmp_path)
    (tmp_path / "feature.json").write_text("{not json")
    with pytest.raises(UsageError, match=r"invalid JSON: .* \(column 2\) \(line 1\); fix the file"):
        gates.gather("spec", tmp_path)


# ---------------------------------------------------------------- ARIS / Mechanist `review-continue`


def test_mechanist_stop_rule_met_and_stop_records_positive_verdict(tmp_path):
    stage = mechanist_state(tmp_path, score=7, verdict="Almost ready", consumed=2)
    ev = gates.gather("review-continue", tmp_path)
    figs = dict(ev.figures)
    assert figs["STOP rule"] == "met"
    assert figs["iterations consumed"] == "2 of 6 (4 left)"
    assert figs["claim re-entries"] == "1 of 2 (1 left)"
    assert figs["claim buckets"].startswith(
        "FAIL 0, INCONCLUSIVE 0, ZERO_ELIGIBLE_VARIANTS 0, PASS 1, INTEGRITY_ONLY 1: clear"
    )
    assert ev.default == "stop"
    assert "verify/VERIFY_REPORT.md" in ev.files_read
    # Continuing past a met STOP rule needs a reason.
    with pytest.raises(DecisionRefused):
        gates.record(ev, "continue", None, user=USER)
    old = json.loads((stage / "REVIEW_STATE.json").read_text())
    res = gates.record(ev, "stop", "score 7, almost, no blocking claim: the loop's own rule says stop", user=USER)
    assert res.decision == "proceed"
    new = json.loads((stage / "REVIEW_STATE.json").read_text())
    assert new.pop("status") == "completed" and new.pop("termination_reason") == "positive_verdict"
    # Mechanist writes `timestamp` at every state write: the stop renews it.
    written_at = parse_time(new.pop("timestamp"))
    assert written_at is not None and abs(datetime.now(UTC) - written_at) < timedelta(minutes=5)
    old.pop("status")
    old.pop("timestamp")
    assert new == old
    assert res.recorded == ["review-stage/auto-decisions.md", "review-stage/REVIEW_STATE.json"]


def test_mechanist_blocking_claims_keep_stop_rule_unmet(tmp_path):
    stage = mechanist_state(tmp_path, score=8, verdict="ready", fail_lines=2)
    ev = gates.gather("review-continue", stage / "REVIEW_STATE.json")
    assert dict(ev.figures)["STOP rule"] == "not met"
    assert ev.default == "continue"
    res = gates.record(ev, "continue", None, user=USER)
    assert res.decision == "proceed"
    assert json.loads((stage / "REVIEW_STATE.json").read_text())["status"] == "in_progress"
    res = gates.record(
        gates.gather("review-continue", stage),
        "stop",
        "two FAIL claims need a person to redesign the experiment",
        user=USER,
    )
    assert res.decision == "accept_gap"
    state = json.loads((stage / "REVIEW_STATE.json").read_text())
    # A person's stop that is none of Mechanist's own termination reasons writes none (the
    # auto-decisions.md entry holds why); "human_stop" is not a value Mechanist writes.
    assert state["status"] == "completed" and "termination_reason" not in state
    assert "two FAIL claims" in (stage / "auto-decisions.md").read_text()


def test_mechanist_missing_verify_report_is_unknown_never_success(tmp_path):
    stage = mechanist_state(tmp_path, score=9, verdict="ready")
    (tmp_path / "verify" / "VERIFY_REPORT.md").unlink()
    ev = gates.gather("review-continue", stage)
    assert dict(ev.figures)["STOP rule"] == "not met (cannot be evaluated: unknown is never success)"
    assert ev.default == "continue" and not ev.decision_overrides
    assert ev.uncertainty[0] == "high"


def test_mechanist_spent_budget_refuses_continue(tmp_path):
    mechanist_state(tmp_path, score=4, verdict="not ready", consumed=6)
    ev = gates.gather("review-continue", tmp_path)
    with pytest.raises(DecisionRefused, match="iteration budget is spent"):
        gates.record(ev, "continue", None, user=USER)


def test_aris_upstream_states_both_lineage_shapes(upstream, tmp_path):
    root = copy_upstream(upstream, "card-games-modeling", tmp_path)
    ev = gates.gather("review-continue", root)  # review-stage/REVIEW_STATE.json
    figs = dict(ev.figures)
    assert figs["lineage"] == "ARIS auto-review-loop"
    assert figs["verdict"] == "Ready → ready: positive"
    assert figs["rounds"] == "4 of 4 (0 left)"
    assert figs["score trend"] == "5 → 7.5 → 8.5 → 9"
    assert "continue" in ev.refused
    night1 = root / "night1-archive" / "REVIEW_STATE.json"
    old = night1.read_text()
    ev1 = gates.gather("review-continue", night1)
    assert dict(ev1.figures)["rounds"] == "2 of 4 (2 left)"  # current_round
    assert dict(ev1.figures)["STOP rule"] == "not met"
    gates.record(ev1, "stop", "major revision twice: C1 needs the authors, not another round", user=USER)
    new = night1.read_text()
    # Only the status was added; every other byte is as it was.
    assert new.replace(',\n  "status": "completed"\n}', "\n}") == old
    assert json.loads(new)["status"] == "completed"


# ---------------------------------------------------------------- bkit `pdca-continue`


def test_pdca_evidence_trend_threshold_and_limit(tmp_path):
    bkit_project(tmp_path, rate=82, count=2, history=(70, 78, 82))
    ev = gates.gather("pdca-continue", tmp_path)
    figs = dict(ev.figures)
    assert figs["Match Rate"] == "82% (threshold 90%): below"
    assert figs["trend"] == "70% → 78% → 82%"
    assert figs["iterations"].startswith("2 of max 5 (guardrails.loopBreaker.maxPdcaIterations")
    assert ev.workflow_prompt == (
        "login: Match Rate 82% (threshold 90%), iteration 2 of max 5. (A) iterate again (B) accept as PARTIAL (C) stop"
    )
    assert ev.default == "iterate"
    assert ".bkit/state/sprints/s1.json" in ev.files_read


def test_pdca_iterate_changes_no_phase_and_records_the_answer(tmp_path):
    sf = bkit_project(tmp_path)
    old = json.loads(sf.read_text())
    res = gates.record(gates.gather("pdca-continue", tmp_path), "a", None, user=USER)
    assert res.answer == "iterate" and res.decision == "proceed"
    new = json.loads(sf.read_text())
    assert new["features"]["login"]["phase"] == old["features"]["login"]["phase"] == "check"
    assert new["features"]["login"]["lastIterationStatus"] == "completed"  # the iterator's field, untouched
    assert new["history"][-1]["action"] == "human_gate" and new["history"][-1]["answer"] == "iterate"
    assert res.recorded == [".bkit/state/auto-decisions.md", ".bkit/state/pdca-status.json"]


def test_pdca_partial_moves_to_report_and_logs_history(tmp_path):
    sf = bkit_project(tmp_path, rate=86, count=5, history=(80, 84, 86))
    ev = gates.gather("pdca-continue", tmp_path)
    assert any("iteration limit reached" in w for w in ev.warnings)
    reason = "86% covers every API endpoint; the gap is two UX empty states"
    res = gates.record(ev, "partial", reason, user=USER)
    assert res.decision == "accept_gap" and res.extra["feature"] == "login"
    data = json.loads(sf.read_text())
    f = data["features"]["login"]
    # bkit's forced report: REPORT_DONE (check → report); phaseNumber as getPhaseNumber has it.
    assert (f["phase"], f["phaseNumber"], f["lastIterationStatus"]) == ("report", 7, "completed")
    step, answer = data["history"][-2:]
    assert (step["event"], step["from"], step["to"], step["action"]) == (
        "REPORT_DONE",
        "check",
        "report",
        "state_transition",
    )
    assert (answer["action"], answer["gate"], answer["answer"]) == ("human_gate", "pdca-continue", "partial")
    assert reason in (sf.parent / "auto-decisions.md").read_text()
    assert f["matchRate"] == 86 and f["iterationCount"] == 5  # measurements untouched


def test_pdca_no_improvement_needs_a_reason_to_iterate_and_the_limit_refuses(tmp_path):
    bkit_project(tmp_path, rate=79, count=4, history=(80, 80, 79, 79))
    ev = gates.gather("pdca-continue", tmp_path)
    assert any("no improvement for 3" in w for w in ev.warnings)
    with pytest.raises(DecisionRefused, match="needs a reason"):
        gates.record(ev, "iterate", None, user=USER)
    other = tmp_path / "b"
    bkit_project(other, rate=60, count=5, history=(50, 60))
    with pytest.raises(DecisionRefused, match="guardCanIterate"):
        gates.record(gates.gather("pdca-continue", other), "iterate", "one more", user=USER)


def test_pdca_never_writes_into_the_real_legacy_status_file(upstream, tmp_path):
    """Before: the gate recorded into docs/.pdca-status.json, which the current bkit never reads."""
    root = copy_upstream(upstream, "bkit-claude-code", tmp_path)
    before = tree_hashes(root)
    for gate in ("pdca-continue", "pdca-max-iterations"):
        with pytest.raises(UsageError, match=r"neither reads nor migrates docs/\.pdca-status\.json"):
            gates.gather(gate, root)
    assert tree_hashes(root) == before


def test_pdca_on_the_real_status_file_where_the_current_bkit_reads_it(upstream, tmp_path):
    root = copy_upstream(upstream, "bkit-claude-code", tmp_path)
    (root / ".bkit" / "state").mkdir(parents=True)
    (root / "docs/.pdca-status.json").rename(root / ".bkit/state/pdca-status.json")
    ev = gates.gather("pdca-continue", root)
    figs = dict(ev.figures)
    assert figs["feature"] == "bkit-v1.5.7-comprehensive-test"
    assert figs["Match Rate"] == "95% (threshold 90%): pass"
    assert figs["iterations"].startswith("6 of max 5 (")  # real data exceeds the limit
    assert ev.decision_for(ev.gate.answer("stop")) == "proceed"
    res = gates.record(ev, "stop", "95% passes the threshold; stop iterating", user=USER)
    assert res.extra["transitions"] == ["ANALYZE_DONE (act → check)", "MATCH_PASS (check → qa)"]
    data = json.loads((root / ".bkit/state/pdca-status.json").read_text())
    f = data["features"]["bkit-v1.5.7-comprehensive-test"]
    assert (f["phase"], f["phaseNumber"], f["lastIterationStatus"]) == ("qa", 6, "completed")
    assert res.recorded == [".bkit/state/auto-decisions.md", ".bkit/state/pdca-status.json"]
    with pytest.raises(UsageError, match="no feature"):
        gates.gather("pdca-continue", root, feature="nope")


def test_pdca_config_overrides_threshold_and_limit(tmp_path):
    bkit_project(tmp_path, rate=86, count=3, history=(80, 86))
    (tmp_path / "bkit.config.json").write_text(
        json.dumps({"pdca": {"matchRateThreshold": 85}, "guardrails": {"loopBreaker": {"maxPdcaIterations": 3}}})
    )
    ev = gates.gather("pdca-continue", tmp_path / ".bkit" / "state" / "pdca-status.json")
    figs = dict(ev.figures)
    assert figs["Match Rate"] == "86% (threshold 85%): pass"
    assert figs["iterations"].startswith("3 of max 3 (guardrails.loopBreaker.maxPdcaIterations")
    assert "bkit.config.json" in ev.files_read
    # The entry names the rule as configured, not bkit's defaults.
    gates.record(ev, "stop", "86% passes the configured 85%", user=USER)
    text = (tmp_path / ".bkit" / "state" / "auto-decisions.md").read_text(encoding="utf-8")
    principles = text.split("- principles_used:\n", 1)[1].splitlines()
    assert principles[0] == (
        "  - \"pass at Match Rate >= 85 %; bkit's state machine iterates while iterationCount < 3 "
        '(guardrails.loopBreaker.maxPdcaIterations) and forces the report at 3; stop after 3 without improvement"'
    )
    f = json.loads((tmp_path / ".bkit" / "state" / "pdca-status.json").read_text())["features"]["login"]
    assert (f["phase"], f["phaseNumber"]) == ("qa", 6)  # passing: MATCH_PASS (check → qa)


def test_pdca_principle_without_a_config_names_the_defaults(tmp_path):
    bkit_project(tmp_path)
    gates.record(gates.gather("pdca-continue", tmp_path), "iterate", None, user=USER)
    text = (tmp_path / ".bkit" / "state" / "auto-decisions.md").read_text(encoding="utf-8")
    assert "pass at Match Rate >= 90 %; bkit's state machine iterates while iterationCount < 5" in text
