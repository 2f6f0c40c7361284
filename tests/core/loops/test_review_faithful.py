"""Mechanist / ARIS as their own files have them (issue 15, points 1, 6, 9, 10 and the seed's
action-type legality): VERIFY_REPORT rows with several state tokens, AUTO_REVIEW drift, the
review gate's stop conditions and what a stop writes.

The report rows below are ours, shaped like the Summary table of Mechanist's
``skills/auto-verify/SKILL.md`` (Phase 11) and the per-claim lines of ``agents/verify.md``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from scars.core import gates
from scars.core.errors import DecisionRefused
from scars.core.loops import discover_loops
from scars.core.loops.base import Budget
from scars.core.loops.review import reader as review
from scars.core.loops.review.auto_review import parse_auto_review
from scars.core.loops.review.mechanist import claim_actions
from scars.core.loops.review.verdicts import canonical_status, canonical_verdict
from scars.core.loops.review.verify import read_verify_claims
from tests.factories import clean_env
from tests.factories import mechanist_stage as mechanist

NOW = datetime(2026, 3, 16, 12, 0, tzinfo=UTC)

HEADER = (
    "| Claim | Statement (short) | Main-experiment verdict | Main-experiment integrity (Phase 2, combined) "
    "| Variant integrity (Phase 9, combined) | Eligible variants (post-audit) | Robustness | State | Notes |\n"
    "|-------|---|---|---|---|---|---|---|---|\n"
)
ROWS = {
    "PASS": "| C1 | caching halves p99 | supported | PASS (exp PASS / mech PASS) | clean | 3/3 | 0.67 | ✅ PASS | ok |",
    "FAIL": "| C2 | warmup is not needed | supported | WARN (exp PASS / mech WARN) | clean | 3/3 | 0.33 | ❌ FAIL "
    "`[MAIN-EXPERIMENT INTEGRITY: WARN — mechanism]` | diverges |",
    "INCONCLUSIVE": "| C3 | gains hold at 7B | — | FAIL (exp FAIL / mech N/A) | — | — | — | 🟡 INCONCLUSIVE | "
    "main-experiment integrity broken (Phase 2) |",
    "ZERO_ELIGIBLE_VARIANTS": "| C4 | the probe is linear | supported | PASS (exp PASS / mech PASS) "
    "| 3 FAIL (2 experiment, 1 mechanism) | 0/3 | — | 🟠 ZERO_ELIGIBLE_VARIANTS | every variant failed |",
    "INTEGRITY_ONLY": "| C5 | steering is causal | supported | PASS (exp PASS / mech PASS) "
    "| skipped (MAX_VERIFY_CLAIMS cap) | — | — | ⚪ INTEGRITY_ONLY (skip=max_verify_claims_cap) | later |",
}


def report(*states: str, extra: str = "") -> str:
    return "# Verification Report\n\n## Summary\n\n" + HEADER + "\n".join(ROWS[s] for s in states) + "\n" + extra


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_env(monkeypatch)


# --------------------------------------------------------------------------- point 1


def test_template_rows_count_by_their_state_column():
    claims = read_verify_claims(report(*ROWS))
    assert claims.claims == {
        "C1": "PASS",
        "C2": "FAIL",
        "C3": "INCONCLUSIVE",
        "C4": "ZERO_ELIGIBLE_VARIANTS",
        "C5": "INTEGRITY_ONLY",
    }
    assert claims.known and claims.blocking == {"FAIL": 1, "INCONCLUSIVE": 1, "ZERO_ELIGIBLE_VARIANTS": 1}


def test_five_claims_never_read_as_a_stop(tmp_path):
    """Before: the report parsed as {PASS: 1}; `scars loops` said the STOP rule was met, the
    gate defaulted to stop and wrote termination_reason positive_verdict."""
    stage = mechanist(tmp_path, report(*ROWS))
    state = review.read_review_dir(stage, tmp_path, now=NOW)
    assert state.stop_rule.met is False and state.stop_rule.outcome is None
    assert any(
        "claims still in FAIL (1), INCONCLUSIVE (1), ZERO_ELIGIBLE_VARIANTS (1)" in r for r in state.stop_rule.reasons
    )
    ev = gates.gather("review-continue", stage)
    assert ev.default == "continue" and dict(ev.figures)["STOP rule"] == "not met"
    assert dict(ev.figures)["claim buckets"].startswith("FAIL 1, INCONCLUSIVE 1, ZERO_ELIGIBLE_VARIANTS 1, PASS 1")
    [loop] = [s for s in discover_loops(tmp_path) if s.kind == "mechanist"]
    assert loop.stop_rule.met is False


@pytest.mark.parametrize("blocking", ["FAIL", "INCONCLUSIVE", "ZERO_ELIGIBLE_VARIANTS"])
def test_each_blocking_claim_blocks_alone(tmp_path, blocking):
    stage = mechanist(tmp_path, report("PASS", "INTEGRITY_ONLY", blocking))
    assert review.read_review_dir(stage, tmp_path, now=NOW).stop_rule.met is False


def test_pass_and_integrity_only_stop(tmp_path):
    stage = mechanist(tmp_path, report("PASS", "INTEGRITY_ONLY"))
    state = review.read_review_dir(stage, tmp_path, now=NOW)
    assert state.stop_rule.met is True and state.stop_rule.outcome == "positive_verdict"


def test_per_claim_lines_of_the_verify_agent():
    text = (
        "**Per-claim verdicts**:\n"
        "- C1 (caching): baseline-verdict supported — robustness 0.67 (threshold 0.5) — eligible 3/3 — "
        "variants 2/1 — integrity clean — ✅ PASS\n"
        "- C2 (warmup): baseline-verdict supported — robustness 0.33 (threshold 0.5) — eligible 3/3 — "
        "variants 1/2 — integrity 1 warn — ❌ FAIL\n"
        "- C3 (scale): baseline-verdict — — robustness — — eligible — — variants — — integrity clean — "
        "🟡 INCONCLUSIVE: main-experiment integrity broken\n"
        "**Counts:** 1 PASS, 1 FAIL, 1 INCONCLUSIVE, 0 ZERO_ELIGIBLE_VARIANTS, 0 INTEGRITY_ONLY (of 3 target claims)\n"
    )
    claims = read_verify_claims(text)
    assert claims.claims == {"C1": "PASS", "C2": "FAIL", "C3": "INCONCLUSIVE"} and claims.known


def test_status_block_lines_are_counts_not_claims():
    text = report("PASS") + "\n- ✅ PASS: 1\n- ❌ FAIL: 0\n- 🟡 INCONCLUSIVE: 0\n"
    claims = read_verify_claims(text)
    assert claims.claims == {"C1": "PASS"} and claims.known


def test_counts_that_contradict_the_rows_are_unknown(tmp_path):
    text = report("PASS") + "\n**Counts:** 1 PASS, 1 FAIL, 0 INCONCLUSIVE\n"
    claims = read_verify_claims(text)
    assert not claims.known and "differ from its claim rows" in claims.unresolved[0][1]
    state = review.read_review_dir(mechanist(tmp_path, text), tmp_path, now=NOW)
    assert state.stop_rule.met is None


def test_a_row_with_several_states_and_no_state_column_is_unknown(tmp_path):
    text = "| claim | audit | variants |\n|---|---|---|\n| C1 | PASS | FAIL |\n"
    claims = read_verify_claims(text)
    assert claims.claims == {} and len(claims.unresolved) == 1
    state = review.read_review_dir(mechanist(tmp_path, text), tmp_path, now=NOW)
    assert state.stop_rule.met is None  # unknown, never success
    assert any("claim state unknown" in f.message for f in state.parse_failures)
    ev = gates.gather("review-continue", tmp_path / "review-stage")
    assert ev.default == "continue" and ev.uncertainty[0] == "high"
    assert "not met (cannot be evaluated" in dict(ev.figures)["STOP rule"]


def test_a_state_cell_without_a_state_is_unknown():
    text = HEADER + "| C1 | x | supported | PASS (exp PASS / mech PASS) | clean | 3/3 | 0.67 | pending | |\n"
    claims = read_verify_claims(text)
    assert claims.claims == {} and "no state in its State column" in claims.unresolved[0][1]


def test_a_report_without_any_claim_is_unknown(tmp_path):
    state = review.read_review_dir(mechanist(tmp_path, "# Verification Report\n\nNothing yet.\n"), tmp_path, now=NOW)
    assert state.stop_rule.met is None
    assert state.details["buckets"] is None


def test_one_claim_two_states_is_unknown():
    claims = read_verify_claims("| C1 | PASS |\n| C1 | FAIL |\n")
    assert not claims.known and "two states" in claims.unresolved[0][1]


# --------------------------------------------------------------------------- points 6 and 9


def test_stop_clears_the_inbox_and_writes_only_mechanist_reasons(tmp_path):
    """Before: after a stop (status completed, iterations_exhausted) the loop stayed WAITING."""
    stage = mechanist(tmp_path, report("FAIL"), iterations_consumed=6, last_score=4, last_verdict="not ready")
    assert review.read_review_dir(stage, tmp_path).waiting_for_human
    ev = gates.gather("review-continue", stage)
    gates.record(ev, "stop", "the FAIL claim needs a new experiment design", user="alice")
    data = json.loads((stage / "REVIEW_STATE.json").read_text())
    assert data["status"] == "completed" and data["termination_reason"] == "iterations_exhausted"
    state = review.read_review_dir(stage, tmp_path)
    assert not state.waiting_for_human and state.route == "done"
    assert not any(s.waiting_for_human for s in discover_loops(tmp_path))


def test_aris_completed_state_is_not_waiting(tmp_path):
    stage = tmp_path / "review-stage"
    stage.mkdir()
    (stage / "REVIEW_STATE.json").write_text(
        json.dumps({"round": 4, "status": "COMPLETE", "last_score": 4, "last_verdict": "No"})
    )
    state = review.read_review_dir(stage, tmp_path, now=NOW)
    assert state.details["status"] == "completed"  # `COMPLETE` normalised
    assert not state.waiting_for_human and state.route == "done"


@pytest.mark.parametrize("noop, needs", [(1, False), (2, True)])
def test_continue_after_the_stall_guard_needs_a_reason(tmp_path, noop, needs):
    stage = mechanist(tmp_path, report("FAIL"), consecutive_noop_count=noop, last_score=5, last_verdict="not ready")
    ev = gates.gather("review-continue", stage)
    assert ("continue" in ev.reason_required) is needs
    if needs:
        assert any("stall guard" in w for w in ev.warnings)
        with pytest.raises(DecisionRefused):
            gates.validate_answer(ev, "continue", None)
        gates.validate_answer(ev, "continue", "the reviewer asked for a new ablation, not prose")


@pytest.mark.parametrize("hours, stale", [(23.9, False), (24.1, True)])
def test_state_older_than_24h_warns_and_needs_a_reason(tmp_path, hours, stale):
    stamp = (datetime.now(UTC) - timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%S")
    stage = mechanist(tmp_path, report("FAIL"), timestamp=stamp, last_score=5, last_verdict="not ready")
    ev = gates.gather("review-continue", stage)
    assert any("older than 24 h" in w for w in ev.warnings) is stale
    assert ("continue" in ev.reason_required) is stale


# --------------------------------------------------------------------------- point 10


DRIFT = """# Auto review
## Loop 1 — Round 1
- **Score**: 5/10
- **Verdict** (canonical): `not ready`
## Loop 1 — Round 2
- **Score**: 6-6.5/10
- **Verdict** (canonical): `almost`
- Budget after this iteration: iterations 0/2, claim-reentries 0/1
## Loop 2 — Round 1
- Score: 7/10
- Verdict: NEEDS MINOR REVISION
"""


def test_auto_review_drift():
    runs = parse_auto_review(DRIFT)
    assert [r["title"] for r in runs] == ["Auto review", "Loop 2"]  # before: Loop 2's round skipped
    first = runs[0]["sections"]
    assert [s["score"] for s in first] == [5.0, 6.0]  # a range is its lower end, never −6.5
    assert first[1]["verdict"] == "almost"
    assert (first[1]["iterations_limit"], first[1]["claim_reentries_limit"]) == (2, 1)
    assert runs[1]["sections"][0]["verdict"] == "almost"


@pytest.mark.parametrize(
    "text, canonical",
    [
        ("NEEDS MINOR REVISION", "almost"),
        ("minor revision", "almost"),
        ("needs major revision", "not ready"),
        ("not ready / almost", "not ready"),
        ("almost there", "almost"),
    ],
)
def test_verdict_phrases(text, canonical):
    assert canonical_verdict(text) == canonical


def test_budget_override_of_the_log_is_the_limit(tmp_path):
    stage = tmp_path / "review-stage"
    stage.mkdir()
    (stage / "AUTO_REVIEW.md").write_text(
        "## Iteration 1\n- Score: 5/10\n- Verdict: not ready\n"
        "- Budget after this iteration: iterations 1/2, claim-reentries 0/1\n"
    )
    state = review.read_review_dir(stage, tmp_path, now=NOW)
    assert state.kind == "mechanist"
    assert (state.budget.used, state.budget.limit) == (1, 2)  # before: 1/6
    assert state.details["claim_reentries"]["limit"] == 1  # before: /2


@pytest.mark.parametrize("status", ["COMPLETE", "Completed", "done", "completed"])
def test_status_spellings(status):
    assert canonical_status(status) == "completed"


# --------------------------------------------------------------------------- seed: action types


def budget(used, limit):
    return Budget(used, limit)


def test_type_3_is_never_legal_on_inconclusive_and_type_2_twice_at_most():
    claims = {"C3": "INCONCLUSIVE"}
    once = [{"i": 1, "type": "main_experiment_fix", "target_claims": ["C3"]}]
    acts = claim_actions(claims, once, budget(1, 6), budget(0, 2))
    assert acts["C3"]["legal"] == ["②"] and "③" in acts["C3"]["refused"]
    twice = once + [{"i": 2, "type": "②", "target_claims": ["C3"]}]
    acts = claim_actions(claims, twice, budget(2, 6), budget(0, 2))
    assert acts["C3"]["legal"] == [] and "manual main-experiment repair" in acts["C3"]["refused"]["②"]


def test_integrity_only_takes_no_action_and_fail_takes_3_within_the_sub_budget():
    acts = claim_actions({"C5": "INTEGRITY_ONLY", "C2": "FAIL"}, [], budget(1, 6), budget(1, 2))
    assert acts["C5"]["legal"] == [] and set(acts["C5"]["refused"]) == {"①", "②", "③"}
    assert acts["C2"]["legal"] == ["①", "③"]
    acts = claim_actions({"C2": "FAIL"}, [], budget(1, 6), budget(2, 2))
    assert acts["C2"]["legal"] == ["①"] and "sub-budget spent" in acts["C2"]["refused"]["③"]


def test_claim_reentry_exhausted(tmp_path):
    """The re-entry sub-budget spent and the only open claim needs ③ (its variants were fixed)."""
    breakdown = [{"i": 1, "type": "variant_fix", "target_claims": ["C2"]}]
    stage = mechanist(
        tmp_path,
        report("PASS", "FAIL"),
        iterations_consumed=3,
        claim_reentries_consumed=2,
        iteration_breakdown=breakdown,
        last_score=5,
        last_verdict="not ready",
    )
    state = review.read_review_dir(stage, tmp_path, now=NOW)
    assert state.stop_rule.outcome == "claim_reentry_exhausted" and state.waiting_for_human
    assert state.route == "terminate"
    ev = gates.gather("review-continue", stage)
    assert "continue" in ev.reason_required
    gates.record(ev, "stop", "the FAIL claim needs a person to rethink it", user="alice")
    assert json.loads((stage / "REVIEW_STATE.json").read_text())["termination_reason"] == "claim_reentry_exhausted"
    # One re-entry left: not exhausted.
    stage = mechanist(
        tmp_path / "b",
        report("PASS", "FAIL"),
        claim_reentries_consumed=1,
        iteration_breakdown=breakdown,
        last_score=5,
        last_verdict="not ready",
    )
    assert review.read_review_dir(stage, tmp_path / "b", now=NOW).stop_rule.outcome is None
