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
from scars.core.loops.review import reader as review
from scars.core.loops.review.auto_review import parse_auto_review
from scars.core.loops.review.verdicts import canonical_verdict, verdict_parts
from scars.core.loops.review.verify import read_verify_claims
from tests.factories import clean_env, mechanist_stage

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
    return mechanist_stage(root, verify, **{"last_score": 6.4, "last_verdict": "almost", **state})


def written(stage: Path) -> dict:
    return json.loads((stage / "REVIEW_STATE.json").read_text())


# --------------------------------------------------------------------------- VERIFY_REPORT columns


def test_integrity_and_final_columns_read_the_final_one():
    """Before: "several states and no State column" for each row, and nothing known."""
    claims = read_verify_claims(INTEGRITY_FINAL)
    assert claims.claims == {"C1": "INTEGRITY_ONLY", "C2": "INTEGRITY_ONLY"}
    assert claims.known and claims.blocking == {}


def test_terminal_state_column():
    claims = read_verify_claims(TERMINAL_STATE)
    assert claims.claims == {"C1": "PASS", "C2": "INTEGRITY_ONLY"} and claims.known


def test_a_blocking_final_state_still_blocks():
    text = INTEGRITY_FINAL + "| C3 | gains hold at 7B | PASS | FAIL |\n"
    assert read_verify_claims(text).blocking == {"FAIL": 1}


def test_two_state_columns_that_disagree_are_unknown():
    """A table with both a State and a Final column that name two states: not guessed."""
    text = "| Claim | State | Final |\n|---|---|---|\n| C1 | PASS | FAIL |\n"
    claims = read_verify_claims(text)
    assert claims.claims == {} and "columns disagree" in claims.unresolved[0][1]
    agree = "| Claim | State | Final |\n|---|---|---|\n| C1 | PASS | ✅ PASS |\n"
    assert read_verify_claims(agree).claims == {"C1": "PASS"}


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


# --------------------------------------------------------------------------- AUTO_REVIEW.md shapes


def one(text: str) -> dict:
    [run] = parse_auto_review(text)
    return run["sections"][-1]


@pytest.mark.parametrize(
    "line, score, verdict",
    [
        ("- Score: 6.4/10 (was 5.8). Verdict: almost.", 6.4, "almost"),
        ("Verdict: READY | Score: ~8/10", 8.0, "ready"),
        ("- Score 6.8/10", 6.8, None),
        ("- Score **7.3/10**, verdict **Almost**", 7.3, "almost"),
        ("- **Average Score: 5.25/10**", 5.25, None),
        ("- Score: 7/10", 7.0, None),
        ("- **Verdict** (canonical): `almost`", None, "almost"),
    ],
)
def test_assessment_lines(line, score, verdict):
    section = one(f"## Round 1\n### Assessment (Summary)\n{line}\n")
    assert (section["score"], section["verdict"]) == (score, verdict)


@pytest.mark.parametrize(
    "line",
    [
        "- Score tables are in the appendix",
        "- Scores below 6 mean another round",
        "- Score improved from 5/10 to 6/10 once the ablation ran",
        "- Verdict unchanged: see above",
    ],
)
def test_prose_that_starts_with_a_label_word_is_no_figure(line):
    section = one(f"## Round 1\n{line}\n")
    assert section["score"] is None and section["verdict"] is None


def test_an_average_replaces_a_reviewers_score_but_not_the_reverse():
    assert one("## Round 1\n- Score: 6/10\n- **Average Score: 5.25/10**\n")["score"] == 5.25
    assert one("## Round 1\n- **Average Score: 5.25/10**\n- Score: 6/10\n")["score"] == 5.25
    assert one("## Round 1\n- Average Score: 5.25/10\n- Overall score: 6/10\n")["score"] == 5.25  # the first summary


def test_the_score_in_the_heading():
    section = one("## Round 1 (score: 7/10)\n- Key criticisms: none\n")
    assert section["score"] == 7.0 and section["number"] == 1
    assert one("## Round 2 — Score: 6/10, Verdict: almost\n")["verdict"] == "almost"


def test_loop_slash_round_headings_start_a_run():
    """Before: `## Loop 2 / Round 1` was no section: the loop's last run was lost."""
    runs = parse_auto_review(
        "# Review log\n## Round 1\n- Score: 4/10\n- Verdict: not ready\n"
        "## Loop 2 / Round 1\n- Score: 5/10\n- Verdict: not ready\n"
        "## Loop 2 / Round 2\n- Score: 7/10\n- Verdict: ready\n"
    )
    assert [(r["title"], [s["number"] for s in r["sections"]]) for r in runs] == [
        ("Review log", [1]),
        ("Loop 2", [1, 2]),
    ]
    assert runs[-1]["sections"][-1]["score"] == 7.0


def test_feedback_loop_extension_round(tmp_path):
    text = (
        "## Round 4\n- Score: 5/10\n- Verdict: not ready\n"
        "## Feedback Loop Extension / Round 1\n- Score: 6.5/10\n- Verdict: almost\n"
    )
    runs = parse_auto_review(text)
    assert runs[-1]["title"] == "Feedback Loop Extension" and runs[-1]["sections"][0]["score"] == 6.5
    stage = tmp_path / "review-stage"
    stage.mkdir()
    (stage / "AUTO_REVIEW.md").write_text(text)
    state = review.read_review_dir(stage, tmp_path, now=NOW)
    assert state.kind == "aris" and state.stop_rule.met is True  # before: round 4's 5/10, not met


def test_a_plain_round_heading_with_a_dash_is_not_a_run_name():
    runs = parse_auto_review("## Round 1 — first pass\n- Score: 4/10\n## Round 2 — fixes\n- Score: 6/10\n")
    assert len(runs) == 1 and [s["score"] for s in runs[0]["sections"]] == [4.0, 6.0]


COMPOUND = "Ready (workshop track); Almost (short paper); Not ready (main-track submission)"


def test_a_compound_verdict_is_parsed_into_its_parts_and_not_guessed():
    """Before: `not ready` (the loop had recorded a positive stop)."""
    assert verdict_parts(COMPOUND) == [
        ("ready", "Ready (workshop track)"),
        ("almost", "Almost (short paper)"),
        ("not ready", "Not ready (main-track submission)"),
    ]
    assert canonical_verdict(COMPOUND) is None
    assert canonical_verdict("Almost (venue A); almost (venue B)") == "almost"  # parts agree
    assert canonical_verdict("Almost; two nits remain") == "almost"  # one verdict, then prose
    assert canonical_verdict("not ready / almost") == "not ready"


@pytest.mark.parametrize("lineage", ["mechanist", "aris"])
def test_a_compound_verdict_leaves_the_stop_rule_unknown(tmp_path, lineage):
    if lineage == "mechanist":
        stage = mechanist(tmp_path, INTEGRITY_FINAL, last_verdict=COMPOUND, last_score=7)
    else:
        stage = tmp_path / "review-stage"
        stage.mkdir()
        (stage / "REVIEW_STATE.json").write_text(
            json.dumps({"round": 2, "status": "in_progress", "last_score": 7, "last_verdict": COMPOUND})
        )
    state = review.read_review_dir(stage, tmp_path, now=NOW)
    assert state.stop_rule.met is None
    assert any("compound verdict" in r and "not ready: Not ready (main-track" in r for r in state.stop_rule.reasons)
    ev = gates.gather("review-continue", stage)
    assert "a compound verdict" in dict(ev.figures)["verdict"]
    # Below the score threshold the rule is simply not met.
    data = written(stage)
    data["last_score"] = 5
    (stage / "REVIEW_STATE.json").write_text(json.dumps(data))
    assert review.read_review_dir(stage, tmp_path, now=NOW).stop_rule.met is False


def test_a_compound_verdict_in_the_log_is_kept_whole():
    section = one(f"## Round 3\n- Score: 7/10\n- Verdict: {COMPOUND}\n")
    assert section["verdict_text"] == COMPOUND and section["verdict"] is None


@pytest.mark.parametrize("noop", [2, 1])
def test_after_the_stall_guard_the_advice_and_default_say_stop(tmp_path, noop):
    """The stall guard (continue needs a reason there, it is not refused) left the advice saying
    "the loop would continue" and the default on continue; at one no-op short of it they still do."""
    stage = mechanist(
        tmp_path, INTEGRITY_FINAL + "| C3 | x | PASS | FAIL |\n", consecutive_noop_count=noop, last_score=5
    )
    ev = gates.gather("review-continue", stage)
    assert "continue" not in ev.refused
    if noop == 2:
        assert ev.default == "stop" and "continue" in ev.reason_required
        assert ev.advice.startswith("STOP rule not met, but the stall guard fired")
    else:
        assert ev.default == "continue" and ev.advice.startswith("STOP rule not met: the loop would continue")
