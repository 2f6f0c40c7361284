"""Review loops: verdict canonicalisation, lenient AUTO_REVIEW.md, Mechanist and ARIS rules."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from scars.core.loops.review import reader as review
from scars.core.loops.review.auto_review import parse_auto_review, parse_reviewer_memory
from scars.core.loops.review.verdicts import canonical_verdict
from scars.core.loops.review.verify import parse_verify_buckets
from tests.factories import mechanist_stage

NOW = datetime(2026, 3, 16, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("ready", "ready"),
        ("Ready", "ready"),
        ("**READY**", "ready"),
        ("`ready`", "ready"),
        ("accept", "ready"),
        ("Sufficient.", "ready"),
        ("good enough", "ready"),
        ("looks ready", "ready"),
        ("ready for submission", "ready"),
        ("almost", "almost"),
        ("Almost", "almost"),
        ("nearly ready", "almost"),
        ("close", "almost"),
        ("minor revision", "almost"),
        ("Almost (minor fixes)", "almost"),
        ("not ready", "not ready"),
        ("Not Ready!", "not ready"),
        ("not ready / almost", "not ready"),
        ("not yet ready", "not ready"),
        ("No", "not ready"),
        ("major revision", "not ready"),
        ("revise", "not ready"),
        ("weak", "not ready"),
        ("reject", "not ready"),
        ("needs major work", "not ready"),
        ("something else", "not ready"),
    ],
)
def test_canonical_verdict(text, expected):
    assert canonical_verdict(text) == expected


def test_no_verdict_is_none_not_ready():
    assert canonical_verdict(None) is None and canonical_verdict("  ** ") is None


AUTO_REVIEW = """# Auto Iteration Loop — project X
Config: MAX_ITERATIONS=6

## Iteration 1 (2026-07-15 03:00 → 03:35 CST)
### Assessment (Summary)
- **Score**: 6.5/10 (methods) / 7/10 (results)
- Verdict: `almost` — with commentary
- Budget after this iteration: iterations 1/6, claim-reentries 0/2
### Reviewer Raw Response
<details>
```
## Iteration 9
Score: 1/10
```
</details>
### Claim Rewrites (type ③ — none this iteration)
none
## Iteration 2 (2026-07-15 04:00)
### Assessment (Summary)
- Score: 4/10
- Verdict: [not ready]
## Notes
- Score: 10/10
"""


def test_auto_review_lenient_headings_scores_and_fences():
    runs = parse_auto_review(AUTO_REVIEW)
    assert len(runs) == 1
    sections = runs[0]["sections"]
    assert [(s["kind"], s["number"], s["score"], s["verdict"]) for s in sections] == [
        ("iteration", 1, 6.5, "almost"),
        ("iteration", 2, 4.0, "not ready"),
    ]


def test_auto_review_new_run_when_numbering_restarts():
    runs = parse_auto_review("## Round 1\n- Score: 3/10\n## Round 2\n- Score: 5/10\n## Round 1\n- Score: 6/10\n")
    assert [[s["score"] for s in r["sections"]] for r in runs] == [[3.0, 5.0], [6.0]]


def test_reviewer_memory_headings():
    text = (
        "# Reviewer Memory\n## Iteration 1 — Score: 5/10, Verdict: not ready\n- **New suspicions**: x\n"
        "## Iteration 2 — Score: 6.5/10, Verdict: almost\n### Patterns\n"
    )
    assert [(m["number"], m["score"], m["verdict"]) for m in parse_reviewer_memory(text)] == [
        (1, 5.0, "not ready"),
        (2, 6.5, "almost"),
    ]


def test_verify_buckets():
    text = "| claim | verdict |\n|---|---|\n| C1 | PASS |\n| C2 | FAIL |\n- C3: INCONCLUSIVE\n- C4: INTEGRITY_ONLY\nFAIL in prose\n"
    counts = parse_verify_buckets(text)
    assert counts["PASS"] == 1 and counts["FAIL"] == 1 and counts["INCONCLUSIVE"] == 1 and counts["INTEGRITY_ONLY"] == 1


def mechanist(tmp_path: Path, verify: str | None = None, **state) -> Path:
    defaults = {"last_score": 5.0, "last_verdict": "not ready", "timestamp": "2026-03-16T10:00:00"}
    return mechanist_stage(tmp_path, verify, **{**defaults, **state})


def test_mechanist_in_progress(tmp_path):
    state = review.read_review_dir(mechanist(tmp_path), tmp_path, now=NOW)
    assert state.kind == "mechanist"
    assert (state.budget.used, state.budget.limit, state.budget.left) == (2, 6, 4)
    assert state.details["claim_reentries"] == {"used": 0, "limit": 2, "left": 2, "over": 0, "unit": "claim re-entries"}
    assert state.route == "iteration 3" and state.details["display_iteration"] == 3
    assert state.stop_rule.met is False and not state.waiting_for_human
    assert not state.details["stale"]


def test_mechanist_three_dimensional_stop(tmp_path):
    # Score and verdict positive but a FAIL claim remains: not STOP.
    stage = mechanist(tmp_path, verify="| C1 | FAIL |\n| C2 | PASS |\n", last_score=7, last_verdict="Almost")
    state = review.read_review_dir(stage, tmp_path, now=NOW)
    assert state.stop_rule.met is False
    assert any("claims still in FAIL (1)" in r for r in state.stop_rule.reasons)
    # INTEGRITY_ONLY does not block.
    stage = mechanist(tmp_path, verify="| C1 | INTEGRITY_ONLY |\n| C2 | PASS |\n", last_score=7, last_verdict="Almost")
    assert review.read_review_dir(stage, tmp_path, now=NOW).stop_rule.met is True
    # Score below 6 with a positive verdict: not STOP.
    stage = mechanist(tmp_path, verify="| C2 | PASS |\n", last_score=5.5, last_verdict="ready")
    assert review.read_review_dir(stage, tmp_path, now=NOW).stop_rule.met is False


def test_mechanist_unknown_buckets_are_not_success(tmp_path):
    state = review.read_review_dir(mechanist(tmp_path, last_score=8, last_verdict="ready"), tmp_path, now=NOW)
    assert state.stop_rule.met is None
    assert any("VERIFY_REPORT.md not found" in r for r in state.stop_rule.reasons)
    done = mechanist(
        tmp_path, last_score=8, last_verdict="ready", status="completed", termination_reason="positive_verdict"
    )
    assert review.read_review_dir(done, tmp_path, now=NOW).stop_rule.met is True


def test_mechanist_budget_spent_waits(tmp_path):
    stage = mechanist(tmp_path, verify="| C1 | FAIL |\n", iterations_consumed=6, claim_reentries_consumed=2)
    state = review.read_review_dir(stage, tmp_path, now=NOW)
    assert state.waiting_for_human and "iteration budget is spent (6/6)" in state.reason
    assert any("claim re-entry sub-budget spent" in r for r in state.stop_rule.reasons)
    assert state.route == "terminate"


def test_mechanist_stall_guard_waits(tmp_path):
    state = review.read_review_dir(mechanist(tmp_path, consecutive_noop_count=2), tmp_path, now=NOW)
    assert state.waiting_for_human and "stall guard" in state.reason
    assert state.stop_rule.outcome == "stalled"


def test_mechanist_staleness_and_awaiting_upstream(tmp_path):
    stale = mechanist(tmp_path, timestamp="2026-03-14T10:00:00")
    state = review.read_review_dir(stale, tmp_path, now=NOW)
    assert state.details["stale"] and "stale" in state.reason
    upstream = mechanist(
        tmp_path,
        timestamp="2026-03-14T10:00:00",
        status="awaiting_upstream",
        pending_upstream_calls=[{"skill": "auto-claim", "args": {}}, {"skill": "auto-verify"}],
    )
    state = review.read_review_dir(upstream, tmp_path, now=NOW)
    assert not state.details["stale"]  # awaiting_upstream is exempt from the 24 h check
    assert state.route == "upstream: auto-claim → auto-verify" and not state.waiting_for_human


def test_aris_round_budget_spent_without_stop_waits(tmp_path):
    stage = tmp_path / "review-stage"
    stage.mkdir()
    (stage / "REVIEW_STATE.json").write_text(
        json.dumps({"round": 4, "threadId": "t1", "status": "in_progress", "last_score": 5, "last_verdict": "weak"})
    )
    state = review.read_review_dir(stage, tmp_path, now=NOW)
    assert state.kind == "aris" and state.details["thread_id"] == "t1"
    assert state.waiting_for_human and "round budget is spent (4/4)" in state.reason


def test_aris_log_only_and_unreadable_state(tmp_path):
    stage = tmp_path / "review-stage"
    stage.mkdir()
    (stage / "AUTO_REVIEW.md").write_text(
        "## Round 1 (t)\n- Score: 4/10\n- Verdict: No\n## Round 2 (t)\n- Score: 7/10\n- Verdict: Ready\n"
    )
    state = review.read_review_dir(stage, tmp_path, now=NOW)
    assert state.budget.used == 2 and state.trend == (4.0, 7.0) and state.stop_rule.met is True
    (stage / "REVIEW_STATE.json").write_text("{\n oops")
    state = review.read_review_dir(stage, tmp_path, now=NOW)
    assert state.parse_failures and state.parse_failures[0].line == 2
    assert state.trend == (4.0, 7.0)  # the log is still read


def test_mechanist_log_without_state_uses_the_budget_line(tmp_path):
    stage = tmp_path / "review-stage"
    stage.mkdir()
    (stage / "AUTO_REVIEW.md").write_text(
        "## Iteration 1 (t)\n### Assessment (Summary)\n- Score: 4/10\n- Verdict: not ready\n"
        "- Budget after this iteration: iterations 1/6, claim-reentries 0/2\n"
        "## Iteration 2 (t)\n### Assessment (Summary)\n- Score: 5/10\n- Verdict: not ready\n"
        "- Budget after this iteration: iterations 3/6, claim-reentries 1/2\n"
    )
    state = review.read_review_dir(stage, tmp_path, now=NOW)
    assert state.kind == "mechanist"
    assert state.budget.used == 3 and state.details["claim_reentries"]["used"] == 1
    assert state.trend == (4.0, 5.0) and state.route == "iteration 4"


def test_mechanist_seed_example_state(tmp_path):
    # The REVIEW_STATE.json example of seed 003 (State Persistence), verbatim values.
    stage = tmp_path / "review-stage"
    stage.mkdir()
    (stage / "REVIEW_STATE.json").write_text(
        json.dumps(
            {
                "iterations_consumed": 2,
                "claim_reentries_consumed": 1,
                "status": "in_progress",
                "last_score": 5.0,
                "last_verdict": "not ready",
                "consecutive_noop_count": 0,
                "iteration_breakdown": [
                    {"i": 1, "type": "variant_fix", "target_claims": ["C1"], "produced_claims": []},
                    {"i": 2, "type": "claim_reentry", "target_claims": ["C2"], "produced_claims": ["C2_v2"]},
                ],
                "claim_stage_reentries": ["C2"],
                "pending_upstream_calls": [],
                "runs_total": 5,
                "gpu_hours_total": 12.4,
                "thread_id": "th_01ABC123def456",
                "timestamp": "2026-03-15T10:00:00",
            }
        )
    )
    state = review.read_review_dir(stage, tmp_path, now=datetime(2026, 3, 15, 20, 0, tzinfo=UTC))
    # iterations 2/6 → 4 left, display iteration 3; re-entries 1/2; score 5.0 < 6 → STOP not met;
    # 10 h old (no zone = UTC) → not stale; budget left → nobody waiting.
    assert state.kind == "mechanist"
    assert (state.budget.used, state.budget.left) == (2, 4) and state.details["display_iteration"] == 3
    assert state.details["claim_reentries"]["used"] == 1 and state.details["claim_reentries"]["left"] == 1
    assert state.stop_rule.met is False and "score 5 < 6" in state.stop_rule.reasons
    assert not state.details["stale"] and not state.waiting_for_human
    assert state.details["thread_id"] == "th_01ABC123def456" and state.details["gpu_hours_total"] == 12.4
    later = review.read_review_dir(stage, tmp_path, now=datetime(2026, 3, 16, 10, 0, 1, tzinfo=UTC))
    assert later.details["stale"]  # 24 h and one second
