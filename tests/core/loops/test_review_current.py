"""Mechanist / ARIS as their current versions write them (issue 30, "Mechanist / ARIS").

Every fixture here is ours, in the exact shapes the issue quotes from real runs: a VERIFY_REPORT
whose table has ``Integrity | Final`` (or ``Terminal state``) columns, the stop a person gives at
the review gate (``timestamp``, ``termination_reason``), the gate's evidence for a Mechanist loop,
and the AUTO_REVIEW.md shapes real logs use.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from scars.core import gates
from scars.core.clock import parse_time
from scars.core.loops import review
from tests.factories import clean_env

NOW = datetime(2026, 3, 16, 12, 0, tzinfo=UTC)

# A real report's shape: the audit's result beside the claim's final state.
INTEGRITY_FINAL = (
    "# Verification Report\n\n## Summary\n\n"
    "| Claim | Statement | Integrity | Final |\n"
    "|---|---|---|---|\n"
    "| C1 | steering is causal | PASS | INTEGRITY_ONLY |\n"
    "| C2 | the probe is linear | PASS | INTEGRITY_ONLY |\n"
)
TERMINAL_STATE = (
    "| Claim | Main-experiment integrity | Variant integrity | Terminal state |\n"
    "|---|---|---|---|\n"
    "| C1 | PASS (exp PASS / mech PASS) | 1 FAIL (experiment) | PASS |\n"
    "| C2 | PASS (exp PASS / mech PASS) | skipped | INTEGRITY_ONLY |\n"
)


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_env(monkeypatch)


def stamp(hours_ago: float = 0.0) -> str:
    return (datetime.now(UTC) - timedelta(hours=hours_ago)).strftime("%Y-%m-%dT%H:%M:%S")


def mechanist(root: Path, verify: str | None, **state) -> Path:
    stage = root / "review-stage"
    stage.mkdir(parents=True, exist_ok=True)
    data = {
        "iterations_consumed": 2,
        "claim_reentries_consumed": 0,
        "status": "in_progress",
        "last_score": 6.4,
        "last_verdict": "almost",
        "consecutive_noop_count": 0,
        "iteration_breakdown": [],
        "timestamp": stamp(),
    }
    data.update(state)
    (stage / "REVIEW_STATE.json").write_text(json.dumps(data, indent=2) + "\n")
    if verify is not None:
        (root / "verify").mkdir(exist_ok=True)
        (root / "verify" / "VERIFY_REPORT.md").write_text(verify)
    return stage


def written(stage: Path) -> dict:
    return json.loads((stage / "REVIEW_STATE.json").read_text())


# --------------------------------------------------------------------------- VERIFY_REPORT columns


def test_integrity_and_final_columns_read_the_final_one():
    """Before: "several states and no State column" for each row, and nothing known."""
    claims = review.read_verify_claims(INTEGRITY_FINAL)
    assert claims.claims == {"C1": "INTEGRITY_ONLY", "C2": "INTEGRITY_ONLY"}
    assert claims.known and claims.blocking == {}


def test_terminal_state_column():
    claims = review.read_verify_claims(TERMINAL_STATE)
    assert claims.claims == {"C1": "PASS", "C2": "INTEGRITY_ONLY"} and claims.known


def test_a_blocking_final_state_still_blocks():
    text = INTEGRITY_FINAL + "| C3 | gains hold at 7B | PASS | FAIL |\n"
    assert review.read_verify_claims(text).blocking == {"FAIL": 1}


def test_two_state_columns_that_disagree_are_unknown():
    """A table with both a State and a Final column that name two states: not guessed."""
    text = "| Claim | State | Final |\n|---|---|---|\n| C1 | PASS | FAIL |\n"
    claims = review.read_verify_claims(text)
    assert claims.claims == {} and "columns disagree" in claims.unresolved[0][1]
    agree = "| Claim | State | Final |\n|---|---|---|\n| C1 | PASS | ✅ PASS |\n"
    assert review.read_verify_claims(agree).claims == {"C1": "PASS"}


@pytest.mark.parametrize("score, met", [(6.0, True), (5.9, False)])
def test_the_stop_rule_is_met_and_a_stop_records_positive_verdict(tmp_path, score, met):
    """Before: the STOP rule "cannot be evaluated"; a stop recorded accept_gap and no
    termination_reason. Score 6 with verdict almost and only INTEGRITY_ONLY claims is Mechanist's STOP."""
    stage = mechanist(tmp_path, INTEGRITY_FINAL, last_score=score)
    state = review.read_review_dir(stage, tmp_path, now=NOW)
    assert state.stop_rule.met is met and not state.parse_failures
    assert state.stop_rule.outcome == ("positive_verdict" if met else None)
    ev = gates.gather("review-continue", stage)
    assert dict(ev.figures)["STOP rule"] == ("met" if met else "not met")
    result = gates.record(ev, "stop", "the claims are what the paper needs", user="alice")
    assert result.decision == ("proceed" if met else "accept_gap")
    data = written(stage)
    assert data["status"] == "completed"
    assert data.get("termination_reason") == ("positive_verdict" if met else None)


# --------------------------------------------------------------------------- what a stop writes


@pytest.mark.parametrize("lineage", ["mechanist", "aris"])
def test_a_stop_writes_the_timestamp(tmp_path, lineage):
    """Before: the stale timestamp stayed; Mechanist's resume archived the state scars had just
    completed (ARIS's deletes it)."""
    if lineage == "mechanist":
        stage = mechanist(tmp_path, INTEGRITY_FINAL, timestamp=stamp(30))
    else:
        stage = tmp_path / "review-stage"
        stage.mkdir()
        (stage / "REVIEW_STATE.json").write_text(
            json.dumps({"round": 2, "status": "in_progress", "last_score": 5, "timestamp": stamp(30)})
        )
    before = datetime.now(UTC).replace(microsecond=0)
    gates.record(gates.gather("review-continue", stage), "stop", "enough for the workshop", user="alice")
    written_at = parse_time(written(stage)["timestamp"])
    assert written_at is not None and before <= written_at <= datetime.now(UTC) + timedelta(seconds=1)
    assert written_at.utcoffset() is not None  # ISO 8601 with its zone: no reader has to guess it
    assert review.read_review_dir(stage, tmp_path).details["stale"] is False


def test_an_aris_state_without_a_timestamp_keeps_its_shape(tmp_path):
    stage = tmp_path / "review-stage"
    stage.mkdir()
    (stage / "REVIEW_STATE.json").write_text(json.dumps({"round": 2, "status": "in_progress", "last_score": 5}))
    gates.record(gates.gather("review-continue", stage), "stop", "enough for the workshop", user="alice")
    assert written(stage) == {"round": 2, "status": "completed", "last_score": 5}


def test_a_continue_writes_no_state(tmp_path):
    stage = mechanist(tmp_path, INTEGRITY_FINAL + "| C3 | x | PASS | FAIL |\n", last_score=5)
    before = (stage / "REVIEW_STATE.json").read_bytes()
    gates.record(gates.gather("review-continue", stage), "continue", None, user="alice")
    assert (stage / "REVIEW_STATE.json").read_bytes() == before


@pytest.mark.parametrize("noop, reason", [(2, "stalled"), (1, None)])
def test_a_stall_guard_stop_writes_stalled(tmp_path, noop, reason):
    """Before: no termination_reason; real runs write `stalled`, which the reader takes as the outcome."""
    stage = mechanist(
        tmp_path, INTEGRITY_FINAL + "| C3 | x | PASS | FAIL |\n", consecutive_noop_count=noop, last_score=5
    )
    gates.record(gates.gather("review-continue", stage), "stop", "the reviewer is going round in circles", user="a")
    data = written(stage)
    assert data.get("termination_reason") == reason
    if reason:
        state = review.read_review_dir(stage, tmp_path)
        assert state.stop_rule.outcome == "stalled" and state.route == "done" and not state.waiting_for_human


def test_the_stop_rule_outranks_the_stall_guard(tmp_path):
    stage = mechanist(tmp_path, INTEGRITY_FINAL, consecutive_noop_count=2)
    gates.record(gates.gather("review-continue", stage), "stop", "the reviewer and the claims agree", user="alice")
    assert written(stage)["termination_reason"] == "positive_verdict"


# --------------------------------------------------------------------------- the gate's evidence


def test_the_evidence_names_the_mechanist_loop(tmp_path):
    stage = mechanist(tmp_path, INTEGRITY_FINAL)
    assert gates.gather("review-continue", stage).as_json()["loop"] == "mechanist"
    aris = tmp_path / "aris" / "review-stage"
    aris.mkdir(parents=True)
    (aris / "REVIEW_STATE.json").write_text(json.dumps({"round": 1, "status": "in_progress", "last_score": 5}))
    assert gates.gather("review-continue", aris).as_json()["loop"] == "aris"


@pytest.mark.parametrize("used, spent", [(6, True), (5, False)])
def test_a_spent_budget_neither_defaults_to_nor_offers_continue(tmp_path, used, spent):
    """Before: "default": "continue" while continue was refused, and "(A) continue to iteration 7"."""
    stage = mechanist(tmp_path, INTEGRITY_FINAL + "| C3 | x | PASS | FAIL |\n", iterations_consumed=used, last_score=4)
    (stage / "AUTO_REVIEW.md").write_text(f"## Iteration {used}\n- Score: 4/10\n- Verdict: not ready\n")
    ev = gates.gather("review-continue", stage)
    out = ev.as_json()
    assert ("continue" in ev.refused) is spent
    assert out["default"] == ("stop" if spent else "continue")
    assert (f"continue to iteration {used + 1}" in ev.workflow_prompt) is not spent
    if spent:
        assert "(A) continue (refused: the iteration budget is spent" in ev.workflow_prompt


def test_each_unknown_claim_warning_is_listed_once(tmp_path):
    text = (
        "| claim | audit | variants |\n|---|---|---|\n"
        "| C0 | PASS | PASS |\n| C1 | PASS | FAIL |\n| C2 | PASS | INCONCLUSIVE |\n"
    )
    ev = gates.gather("review-continue", mechanist(tmp_path, text))
    unknown = [w for w in ev.warnings if "claim state unknown" in w]
    assert len(unknown) == 2 and len({w.split("claim state unknown: ")[1] for w in unknown}) == 2
    assert all("VERIFY_REPORT.md:" in w for w in unknown)  # with its line
