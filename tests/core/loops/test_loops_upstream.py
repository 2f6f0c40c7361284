"""The other loops' real upstream files (formats.md §7), read in place, with their figures."""

from __future__ import annotations

from scars.core.loops import discover_loops
from scars.core.loops.bkit import reader as bkit
from scars.core.loops.loopspec import reader as loopspec
from scars.core.loops.review import reader as review


def test_loopspec_gdd_feature(upstream):
    root = upstream / "loop-spec"
    state = loopspec.read_feature(root / ".loop-spec/features/gdd/feature.json", root)
    # formats.md §7 file 12: iterate.maxIterations 10, used 0.
    assert (state.budget.used, state.budget.limit, state.budget.left) == (0, 10, 10)
    # used 0 < max 10 → the limit gate answers `judge`; nothing judged, so no verdict/route yet.
    assert state.route == "judge"
    assert state.details["limit_route"] == "judge"
    assert state.stop_rule.met is False
    assert state.waiting_for_human is False
    assert state.details["exec_style"] == "step" and state.details["current_phase"] == "execute"
    assert state.trend == () and state.parse_failures == ()
    # Unknown keys are kept as read.
    assert state.raw["models"]["iterateJudge"] == "opus"


def test_aris_night3_review_stage(upstream):
    root = upstream / "card-games-modeling"
    state = review.read_review_dir(root / "review-stage", root)
    # Derivation by hand from review-stage/REVIEW_STATE.json:
    # * no `iterations_consumed` → ARIS auto-review-loop lineage, not Mechanist;
    # * `round: 4` (documented key) and the drifted `max_rounds: 4` → budget 4/4, 0 left;
    # * `thread_id` (drift of `threadId`) = "019da4d5-…";
    # * `last_score: 9.0` ≥ 6 and `last_verdict: "Ready"` → canonical `ready` → STOP met;
    # * `status: completed` → route done, nobody waiting.
    assert state.kind == "aris"
    assert (state.budget.used, state.budget.limit, state.budget.left) == (4, 4, 0)
    assert state.details["thread_id"] == "019da4d5-c81e-77b2-9c4d-e64b2b463c93"
    assert state.details["last_verdict"] == "Ready" and state.details["canonical_verdict"] == "ready"
    assert state.stop_rule.met is True and state.stop_rule.outcome == "positive_verdict"
    assert state.route == "done" and state.waiting_for_human is False
    # The run's own stricter threshold is kept as written (an unknown key, not evaluated).
    assert state.details["own_threshold"] == "score>=6 AND rounds_completed>=3"
    assert state.details["own_threshold_met"] is True
    # Trend from AUTO_REVIEW.md's last run (the "# Night 3" part): Round 1 "**Score:** 5.0/10
    # (dropped from Night 2's 8.0/10)" → 5.0 (the first number before /10), Verdict "No" →
    # not ready; Round 2 "Score: 7.5/10" Almost; Round 3 8.5 Almost; Round 4 "Score: **9.0/10**"
    # Ready. Equal to the state's own score_trajectory [5.0, 7.5, 8.5, 9.0].
    assert state.trend == (5.0, 7.5, 8.5, 9.0)
    assert state.trend == tuple(state.raw["score_trajectory"])
    assert [p.note for p in state.history()] == ["not ready", "almost", "almost", "ready"]
    # Night 2 (the first run): "Round 0: Bootstrap" has no score; rounds 1–4 score
    # 4.5, 5.5, 7.0, 8.0 with verdicts not ready, not ready, Almost, Almost.
    night2, night3 = state.details["auto_review_runs"]
    assert night2["title"].startswith("Auto-Review Loop") and night3["title"].startswith("Night 3")
    assert [(s["number"], s["score"], s["verdict"]) for s in night2["sections"]] == [
        (0, None, None),
        (1, 4.5, "not ready"),
        (2, 5.5, "not ready"),
        (3, 7.0, "almost"),
        (4, 8.0, "almost"),
    ]
    # The "## Score" / "## Verdict" headings inside the fenced raw reviewer response are not sections.
    assert [s["number"] for s in night3["sections"]] == [1, 2, 3, 4]
    # REVIEWER_MEMORY.md: 8 `## … Round N — Score: X/10, Verdict: V` headings over both nights.
    memory = state.details["reviewer_memory"]
    assert [(m["number"], m["score"], m["verdict"]) for m in memory] == [
        (1, 4.5, "not ready"),
        (2, 5.5, "not ready"),
        (3, 7.0, "almost"),
        (4, 8.0, "almost"),
        (1, 5.0, "not ready"),
        (2, 7.5, "almost"),
        (3, 8.5, "almost"),
        (4, 9.0, "ready"),
    ]
    assert state.parse_failures == ()


def test_aris_night1_archive(upstream):
    root = upstream / "card-games-modeling"
    state = review.read_review_dir(root / "night1-archive", root)
    # Derivation: `current_round: 2` (drift of `round`) → 2/4 rounds used, 2 left; no
    # `last_score`/`last_verdict`/`status` → taken from the last `rounds[]` entry: score 5.5,
    # verdict "major revision" → canonical `not ready` (in the not-ready table) → STOP not met.
    # Budget not spent → nobody waiting; next is round 3. Trend from rounds[]: 4 then 5.5.
    assert state.kind == "aris"
    assert state.details["round_key"] == "current_round"
    assert (state.budget.used, state.budget.limit, state.budget.left) == (2, 4, 2)
    assert state.details["last_score"] == 5.5
    assert state.details["canonical_verdict"] == "not ready"
    assert state.stop_rule.met is False
    assert state.waiting_for_human is False
    assert state.route == "round 3"
    assert state.trend == (4.0, 5.5)
    assert state.status == "unknown"


def test_bkit_legacy_status(upstream):
    root = upstream / "bkit-claude-code"
    states = {s.name: s for s in bkit.read_status(root / "docs/.pdca-status.json", root)}
    assert set(states) == {"bkit-v1.5.7-comprehensive-test", "bkit-v1.5.7-doc-sync"}
    test = states["bkit-v1.5.7-comprehensive-test"]
    # formats.md §7 file 17: matchRate 95, iterationCount 6 — above the nominal max 5, shown.
    assert test.details["match_rate"] == 95 and test.budget.used == 6
    assert test.budget.limit == 5 and test.budget.over == 1 and test.budget.left == 0
    assert test.budget.describe() == "6/5 iterations (1 above the limit)"
    assert any("above the state machine's limit 5" in r for r in test.stop_rule.reasons)
    # 95 ≥ 90 → the pass criterion holds: SUCCESS, next the report; nobody waiting.
    assert test.stop_rule.met is True and test.stop_rule.outcome == "success"
    assert test.route == "report" and not test.waiting_for_human
    assert test.trend == (95.0,)
    sync = states["bkit-v1.5.7-doc-sync"]
    assert sync.route == "done" and sync.details["match_rate"] == 100 and sync.budget.used == 0
    # The current bkit neither reads nor migrates docs/.pdca-status.json: every feature is marked
    # (its note and details), the file's notice is said once (with the first feature), not per feature.
    assert all(s.details["format"] == bkit.LEGACY_FORMAT for s in states.values())
    assert all(s.reason.startswith(bkit.LEGACY_FORMAT + ", read-only: ") for s in states.values())
    notices = [p for s in states.values() for p in s.parse_failures]
    assert [(p.message, p.severity) for p in notices] == [(bkit.LEGACY_NOTICE, "warning")]


def test_discover_finds_every_upstream_loop(upstream):
    states = discover_loops(upstream)
    found = {(s.kind, s.name) for s in states}
    assert {
        ("loop-spec", "gdd"),
        ("aris", "card-games-modeling/review-stage"),
        ("aris", "card-games-modeling/night1-archive"),
        ("bkit", "bkit-v1.5.7-comprehensive-test"),
        ("bkit", "bkit-v1.5.7-doc-sync"),
    } <= found
    problems = [(s.kind, p.message) for s in states if s.kind != "samsara" for p in s.parse_failures]
    assert problems == [("bkit", bkit.LEGACY_NOTICE)]
