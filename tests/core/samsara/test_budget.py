"""Round arithmetic, the budget-context envelope, safety valves and watch-fors (issue 5)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scars.core.records import replace
from scars.core.samsara.rounds import (
    budget_context,
    evaluate_valves,
    files_in_text,
    files_of,
    retry_budget,
    round_rot,
    round_start_snapshot,
    stagnation_count,
    strategy_hint,
)
from tests.factories import decisions, feature, item, log, rnd
from tests.hypothesis_profiles import examples

ENVELOPE_KEYS = [
    "round",
    "max_rounds",
    "remaining_rounds",
    "signal_lost_before",
    "stagnation_count",
    "net_rot_previous_round",
    "reviewer_retry_budget_remaining",
    "expected_signal_reduction",
    "strategy_hint",
]


def valve(valves, vid):
    (v,) = [v for v in valves if v.id == vid]
    return v


# ------------------------------------------------------------------ snapshot / envelope


def test_no_log_is_round_one_with_full_budget():
    snap = round_start_snapshot(None, 6)
    assert snap == {
        "remaining_rounds_at_start": 2,
        "stagnation_count_at_start": 0,
        "net_rot_previous_round": 0,
        "strategy_hint": "explore",
    }


def test_envelope_keys_and_values_from_disk_state():
    items = [
        item(1),
        item(2),
        item(3, "silent_failure_conditions"),
        item(4, "unverified_assumptions"),
        item(5, "silent_failure_conditions"),
        item(6, "silent_failure_conditions"),
    ]
    f = feature(items, log(rnd(1, 9, 6, new=1, fixed=4)))
    env = budget_context(f)
    assert list(env) == ENVELOPE_KEYS
    assert env["round"] == 2
    assert env["max_rounds"] == 3
    assert env["remaining_rounds"] == 1
    assert env["signal_lost_before"] == 6
    assert env["stagnation_count"] == 0
    assert env["net_rot_previous_round"] == -3  # 1 new - 4 resolved by the fixes
    assert env["reviewer_retry_budget_remaining"] == 2
    assert env["expected_signal_reduction"] == [
        "silent_failure_conditions",
        "known_shortcuts",
        "unverified_assumptions",
    ]
    assert env["strategy_hint"] == "converge"  # one round remains


def test_expected_reduction_follows_fix_decisions_when_given():
    a, b, c = item(1), item(2, "unverified_assumptions"), item(3, "unverified_assumptions")
    f = feature([a, b, c])
    assert budget_context(f)["expected_signal_reduction"] == ["unverified_assumptions", "known_shortcuts"]
    ds = decisions(fix=[a], accept=[b, c])
    assert budget_context(f, ds)["expected_signal_reduction"] == ["known_shortcuts"]


def test_expected_reduction_ties_keep_category_order_and_skip_uncounted():
    f = feature(
        [
            item(1, "unverified_assumptions"),
            item(2, "known_shortcuts"),
            item(3, "silent_failure_conditions", counted=False),
        ]
    )
    assert budget_context(f)["expected_signal_reduction"] == ["known_shortcuts", "unverified_assumptions"]


def test_open_round_is_the_current_round_and_its_retries_count():
    lg = log(rnd(1, 6, 4), rnd(2, 4, None, decision=None, retries=1))
    f = feature([item(1)] * 1, lg, signal=4)
    env = budget_context(f)
    assert env["round"] == 2
    assert env["reviewer_retry_budget_remaining"] == 1
    assert env["strategy_hint"] == "minimal_fix"  # retry budget low (1 of 2 left)


def test_retries_spent_beyond_limit_clamp_to_zero():
    lg = log(rnd(1, 6, None, decision=None, retries=5))
    env = budget_context(feature([item(1)], lg))
    assert env["reviewer_retry_budget_remaining"] == 0
    assert env["strategy_hint"] == "minimal_fix"


@pytest.mark.parametrize(
    ("spent", "retries"),
    [
        ({"reviewer_retries": "1"}, 1),  # a digit string, as a hand-written log gives it
        ({"reviewer_retries": " 2 "}, 2),
        ({"reviewer_retries_consumed": "1"}, 1),  # seed 002's fix-result name
        ({"reviewer_retries": "one", "reviewer_retries_consumed": 1}, 1),  # not a count: the next key
        ({"reviewer_retries": True, "reviewer_retries_consumed": 2}, 2),  # a boolean is no count
        ({"reviewer_retries": "-1"}, 0),
        ({"reviewer_retries": "1.5"}, 0),
        ({"reviewer_retries": -3}, 0),
        ({"reviewer_retries": 1, "reviewer_retries_consumed": 2}, 1),  # the round's own name first
        ({}, 0),
    ],
    ids=repr,
)
def test_retries_spent_are_counts_given_as_integers_or_digit_strings(spent, retries):
    open_round = replace(rnd(1, 6, None, decision=None), budget_spent=spent)
    budget = retry_budget(log(open_round, retry_limit=2))
    assert (budget["spent"], budget["remaining"]) == (retries, 2 - retries)


def test_remaining_rounds_never_negative_past_max():
    lg = log(rnd(1, 9, 8), rnd(2, 8, 7), rnd(3, 7, 6), rnd(4, 6, 5))
    env = budget_context(feature([item(i) for i in range(5)], lg))
    assert env["round"] == 5 and env["remaining_rounds"] == 0
    assert env["strategy_hint"] == "minimal_fix"


def test_real_placement_log_snapshot(upstream):
    import yaml

    from scars.core.model import IterationLog, Round

    # Upstream 2026-06-30 iteration-log.yaml: round 1, 6 -> 3, fixes_scar_count 1, stop.
    path = upstream / "samsara/changes/2026-06-30_placement-consistency-gate/iteration-log.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    rounds = tuple(
        Round(
            round=r["round"],
            signal_lost_before=r["signal_lost_before"],
            signal_lost_after=r["signal_lost_after"],
            fixes_scar_count=r["fixes_scar_count"],
            fixes_applied=r["fixes_applied"],
            decision=r["decision"],
        )
        for r in data["rounds"]
    )
    lg = IterationLog(
        file="iteration-log.yaml",
        max_rounds=data["budget"]["max_rounds"],
        reviewer_retry_limit=data["budget"]["reviewer_retry_limit"],
        rounds=rounds,
    )
    # Seed 002: 1 new scar item from the round's fix, 1 item resolved by it -> net rot 0 (after -
    # before would say -3: the 2 accepted items the loop stopped counting resolve nothing).
    rot = round_rot(lg.rounds[0])
    assert (rot["new"], rot["resolved"], rot["net_rot"], rot["signal_delta"]) == (1, 1, 0, -3)
    assert round_start_snapshot(lg, 3) == {
        "remaining_rounds_at_start": 1,
        "stagnation_count_at_start": 0,
        "net_rot_previous_round": 0,
        "strategy_hint": "converge",
    }
    # Its own round-1 block was written with the same arithmetic (hint chosen by a human).
    first = round_start_snapshot(None, data["rounds"][0]["signal_lost_before"])
    ctx = data["rounds"][0]["budget_context"]
    for key in ("remaining_rounds_at_start", "stagnation_count_at_start", "net_rot_previous_round"):
        assert first[key] == ctx[key]


# ------------------------------------------------------------------ stagnation


@pytest.mark.parametrize(
    "pairs, expected",
    [
        ([(6, 5)], 0),
        ([(6, 6)], 1),
        ([(6, 7)], 1),
        ([(6, 6), (6, 6)], 2),  # exactly two flat rounds
        ([(6, 5), (5, 5), (5, 6)], 2),
        ([(6, 6), (6, 5)], 0),  # the latest round fell: the streak is broken
        ([(6, 6), (None, 6), (6, 6)], 1),  # unknown before ends the count
    ],
)
def test_stagnation_count(pairs, expected):
    done = [rnd(i + 1, b, a) for i, (b, a) in enumerate(pairs)]
    assert stagnation_count(done) == expected


def test_stagnation_uses_signal_now_for_an_interrupted_latest_round():
    done = [rnd(1, 6, 6), rnd(2, 6, None, decision="interrupted")]
    assert stagnation_count(done, signal_now=6) == 2
    assert stagnation_count(done, signal_now=5) == 0
    assert stagnation_count(done) == 0


# ------------------------------------------------------------------ strategy hint rules


@pytest.mark.parametrize(
    "remaining, stagnation, rot, low, hint",
    [
        (2, 0, 0, False, "explore"),
        (5, 0, -4, False, "explore"),
        (1, 0, 0, False, "converge"),  # exactly one round left
        (2, 1, 0, False, "converge"),  # flat once
        (0, 0, 0, False, "minimal_fix"),  # last allowed round
        (2, 2, 0, False, "minimal_fix"),  # exactly two flat rounds: valve active
        (2, 0, 1, False, "minimal_fix"),  # net rot
        (2, 0, 0, True, "minimal_fix"),  # retry budget low
        (1, 1, 0, False, "converge"),
    ],
)
def test_strategy_hint_rules(remaining, stagnation, rot, low, hint):
    assert (
        strategy_hint(remaining_rounds=remaining, stagnation=stagnation, net_rot_previous=rot, retry_low=low)[0] == hint
    )


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(0, 10), st.integers(0, 10), st.integers(-20, 20), st.booleans())
def test_strategy_hint_is_total_and_ordered(remaining, stagnation, rot, low):
    hint, rule = strategy_hint(remaining_rounds=remaining, stagnation=stagnation, net_rot_previous=rot, retry_low=low)
    valve_near = remaining == 0 or stagnation >= 2 or rot > 0 or low
    assert (hint == "minimal_fix") == valve_near
    if not valve_near:
        assert (hint == "converge") == (stagnation >= 1 or remaining == 1)
    assert rule


# ------------------------------------------------------------------ net rot arithmetic


@settings(max_examples=examples(100), deadline=None)
@given(
    st.one_of(st.none(), st.integers(0, 500)),
    st.one_of(st.none(), st.integers(0, 500)),
    st.one_of(st.none(), st.integers(0, 100)),
    st.one_of(st.none(), st.integers(0, 100)),
)
def test_net_rot_is_new_minus_resolved_by_fixes_whatever_signal_lost_did(before, after, new, fixed):
    rot = round_rot(rnd(1, before, after, new=new, fixed=fixed))
    assert rot["net_rot"] == (new or 0) - (fixed or 0)  # seed 002: accepts and defers resolve nothing
    assert rot["known"] is (new is not None and fixed is not None)
    if before is not None and after is not None:
        assert rot["signal_delta"] == after - before  # shown beside it, never used for it


def test_net_rot_resolved_falls_back_to_the_fix_list():
    rot = round_rot(rnd(1, 9, 9, new=2, fix=("a", "b", "c")))
    assert (rot["resolved"], rot["net_rot"], rot["known"]) == (3, -1, True)


def test_net_rot_unknown_without_fixes_scar_count():
    rot = round_rot(rnd(1, 5, 4, new=None, fixed=1))
    assert rot["known"] is False and rot["net_rot"] == -1
    v = valve(evaluate_valves(feature([item(1)], log(rnd(1, 5, 4, new=None, fixed=0)))), "net_rot")
    assert not v.active and "records no fixes_scar_count" in v.message


# ------------------------------------------------------------------ safety valves


def test_all_valves_reported_in_order_and_quiet_before_any_round():
    vs = evaluate_valves(feature([item(1)]))
    assert [v.id for v in vs] == [
        "max_rounds",
        "stagnation",
        "net_rot",
        "accept_ratio",
        "level1_wholesale",
        "same_files",
    ]
    assert not any(v.active for v in vs)


def test_max_rounds_near_then_active():
    f2 = feature([item(1)], log(rnd(1, 6, 4), rnd(2, 4, 1)))
    v = valve(evaluate_valves(f2), "max_rounds")
    assert (v.active, v.near) == (False, True)
    f3 = feature([item(1)], log(rnd(1, 6, 4), rnd(2, 4, 2), rnd(3, 2, 1)))
    v = valve(evaluate_valves(f3), "max_rounds")
    assert v.active and v.figures["rounds_done"] == 3 and "forced stop" in v.message


def test_stagnation_valve_fires_at_exactly_two_flat_rounds():
    one = valve(evaluate_valves(feature([item(1)], log(rnd(1, 5, 5), max_rounds=9))), "stagnation")
    assert (one.active, one.near) == (False, True)
    two = valve(evaluate_valves(feature([item(1)], log(rnd(1, 5, 5), rnd(2, 5, 5), max_rounds=9))), "stagnation")
    assert two.active and two.figures["stagnation_count"] == 2
    assert "5 → 5" in two.message


def test_net_rot_valve_fires_when_new_exceeds_resolved_whatever_signal_lost_did():
    # Issue 14: 1 fix resolved 1 item and introduced 3 new ones -> warns (3 > 1), although
    # signal_lost fell 9 -> 7 because the loop stopped counting 4 accepted items.
    v = valve(evaluate_valves(feature([item(1)], log(rnd(1, 9, 7, new=3, fixed=1)))), "net_rot")
    assert v.active and (v.figures["new"], v.figures["resolved"]) == (3, 1)
    assert "is not net rot" in v.message
    # One more resolved than new, and equal: quiet, exactly at the boundary.
    v = valve(evaluate_valves(feature([item(1)], log(rnd(1, 5, 6, new=2, fixed=2)))), "net_rot")
    assert not v.active and v.figures["net_rot"] == 0
    v = valve(evaluate_valves(feature([item(1)], log(rnd(1, 5, 6, new=3, fixed=2)))), "net_rot")
    assert v.active and v.figures["net_rot"] == 1


def test_net_rot_valve_is_quiet_when_the_resolved_count_is_unknown():
    # fixes_scar_count 2 and neither fixes_applied nor a fix list: what the fixes resolved is
    # unknown, so net rot is unknown and never "increased"; the same round with 1 fix applied is.
    unknown = valve(evaluate_valves(feature([item(1)], log(rnd(1, 5, 6, new=2)))), "net_rot")
    assert (unknown.active, unknown.figures["known"], unknown.figures["new"]) == (False, False, 2)
    assert unknown.message == "Round 1 records no fixes_applied: net rot unknown."
    known = valve(evaluate_valves(feature([item(1)], log(rnd(1, 5, 6, new=2, fixed=1)))), "net_rot")
    assert (known.active, known.figures["known"]) == (True, True)
    assert "net rot increased, suggest stop" in known.message


# ------------------------------------------------------------------ watch-fors


def test_accept_ratio_boundary_exactly_80_percent_is_quiet():
    its = [item(i) for i in range(1, 6)]
    f = feature(its)
    # 4 of 5 accepted = 80 % with zero fixes (one defer): not above 80 %.
    v = valve(evaluate_valves(f, decisions(accept=its[:4], defer=its[4:])), "accept_ratio")
    assert not v.active and v.figures["ratio"] == 0.8
    # 5 of 5 accepted: fires.
    v = valve(evaluate_valves(f, decisions(accept=its)), "accept_ratio")
    assert v.active
    # 9 of 10 with one fix: quiet (fixes exist).
    its10 = [item(i) for i in range(1, 11)]
    v = valve(evaluate_valves(feature(its10), decisions(accept=its10[:9], fix=its10[9:])), "accept_ratio")
    assert not v.active


def test_accept_ratio_just_above_80_percent_fires():
    its = [item(i) for i in range(1, 7)]
    # 5 of 6 accepted = 83 % with zero fixes (one defer): above 80 %.
    v = valve(evaluate_valves(feature(its), decisions(accept=its[:5], defer=its[5:])), "accept_ratio")
    assert v.active and v.figures["ratio"] == 0.8333 and v.figures["limit"] == 0.8


def test_accept_ratio_from_latest_log_round_without_decisions():
    lg = log(rnd(1, 5, 5, accept=[{"description": "a"}, {"description": "b"}], defer=[]), max_rounds=5)
    v = valve(evaluate_valves(feature([item(1)], lg)), "accept_ratio")
    assert v.active and v.figures["source"] == "iteration-log round 1"


def test_level1_wholesale_needs_two_and_all_accepted():
    d1, d2, other = item(1, deferred=True), item(2, deferred=True), item(3)
    f = feature([d1, d2, other])
    assert valve(evaluate_valves(f, decisions(accept=[d1, d2], fix=[other])), "level1_wholesale").active
    assert not valve(evaluate_valves(f, decisions(accept=[d1], fix=[d2, other])), "level1_wholesale").active
    single = feature([item(1, deferred=True), item(2)])
    assert not valve(evaluate_valves(single, decisions(accept=list(single.items))), "level1_wholesale").active


def test_level1_wholesale_from_log_matches_by_normalised_text():
    d1 = item(1, text="Retry  count hard-coded", deferred=True)
    d2 = item(2, text="CSV skips rows", deferred=True)
    lg = log(rnd(1, 2, 2, accept=[{"description": "retry count HARD-CODED"}, {"description": "csv skips rows"}]))
    assert valve(evaluate_valves(feature([d1, d2], lg)), "level1_wholesale").active


def test_same_files_watch():
    a = item(1, where="src/export.py:40-88")
    b = item(2, where="src/export.py, src/other.py")
    c = item(3, where="docs/x.md")
    f = feature([a, b, c])
    v = valve(evaluate_valves(f, decisions(fix=[a, b, c])), "same_files")
    assert v.active and v.figures["files"] == {"src/export.py": [a.id, b.id]}
    v = valve(evaluate_valves(f, decisions(fix=[a, c], accept=[b])), "same_files")
    assert not v.active


def test_same_files_reads_item_text_era_a_b():
    """Era A/B items have no ``where``: two fixes naming the same file in their text (CJK around
    it, no spaces) are a potential conflict, said with that basis."""
    a = item(1, text="implement SKILL step 11／skills/iteration/SKILL.md 仍指示舊 resolved_items 寫法")
    b = item(2, text="Step 3 of skills/iteration/SKILL.md:40 still says expiry_date.", task="task-2")
    c = item(3, text="the e.g. and/or wording in the n/a branch", task="task-3")
    f = feature([a, b, c])
    v = valve(evaluate_valves(f, decisions(fix=[a, b, c])), "same_files")
    assert v.active
    assert v.figures["files"] == {"skills/iteration/SKILL.md": [a.id, b.id]}
    assert v.figures["basis"] == {"skills/iteration/SKILL.md": {a.id: "text", b.id: "text"}}
    assert "skills/iteration/SKILL.md (2 fixes, by text ×2)" in v.message
    v = valve(evaluate_valves(f, decisions(fix=[a, c], accept=[b])), "same_files")
    assert not v.active and "read from each item's where, its text and its report's debt_location" in v.message


def test_same_files_basis_where_text_and_debt_location():
    a = item(1, where="src/export.py:40-88", text="the exporter in src/export.py drops rows")
    b = item(2, text="src/export.py buffers everything", task="task-2")
    c = item(3, debt_location="src/export.py — the writer loop", task="task-3")
    d = item(4, debt_location="n/a - synthetic fixture", task="task-4")
    e = item(5, debt_location="n/a - synthetic fixture", task="task-5")
    f = feature([a, b, c, d, e])
    v = valve(evaluate_valves(f, decisions(fix=[a, b, c, d, e])), "same_files")
    # one count per item, with its strongest basis; "n/a" names no file
    assert v.figures["basis"] == {"src/export.py": {a.id: "where", b.id: "text", c.id: "debt_location"}}
    assert "src/export.py (3 fixes, by where, text, debt_location)" in v.message
    # only one fix names it: not shared
    v = valve(evaluate_valves(f, decisions(fix=[a, d])), "same_files")
    assert not v.active and v.figures["files"] == {}


def test_same_files_from_log_descriptions_matched_to_no_item():
    lg = log(
        rnd(
            1,
            3,
            1,
            fix=[
                "同步 implementer.md 的 Rule 11 寫法（commit 9c605ba）",
                "implementer.md step 4 still names the old field",
            ],
        )
    )
    v = valve(evaluate_valves(feature([item(9, text="unrelated")], lg)), "same_files")
    assert v.active and list(v.figures["files"]) == ["implementer.md"]
    assert v.figures["source"] == "iteration-log round 1"


@pytest.mark.parametrize(
    "text, files",
    [
        ("implement SKILL step 11／implementer.md 仍指示舊", ["implementer.md"]),
        ("修改 skills/iteration/SKILL.md。同步", ["skills/iteration/SKILL.md"]),
        ("see https://example.com/a.md and ./docs/b.md.", ["docs/b.md"]),
        ("e.g. and/or i.e. n/a etc.", []),
        ("v1.2 of skills/pre-thinking/ (a directory)", []),
        (".scars/journal.jsonl and core\\a.py", [".scars/journal.jsonl", "core/a.py"]),
        ("scar-schema.yaml — backward compat", ["scar-schema.yaml"]),
        (None, []),
    ],
)
def test_files_in_text(text, files):
    assert files_in_text(text) == files


@pytest.mark.parametrize(
    "where, files",
    [
        ("src/export.py:40-88", ["src/export.py"]),
        ("`core/a.py` and ./core/b.py:12:3; README.md#usage", ["core/a.py", "core/b.py", "README.md"]),
        ("the scheduler boundary", []),
        (None, []),
        ("skills/iteration/SKILL.md Step 3", ["skills/iteration/SKILL.md"]),
    ],
)
def test_files_of(where, files):
    assert files_of(where) == files


_opt_int = st.one_of(st.none(), st.integers(-5, 60))


@settings(max_examples=examples(50), deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 8),
            _opt_int,
            _opt_int,
            _opt_int,
            st.sampled_from([None, "continue", "stop", "forced_stop", "interrupted"]),
        ),
        max_size=6,
    ),
    st.integers(0, 6),
    st.integers(0, 4),
    st.integers(0, 40),
)
def test_envelope_and_valves_total_on_any_log(rows, max_rounds, retry_limit, signal):
    from scars.core.advice.feature import advise_feature

    rounds = [rnd(n, b, a, new=new, decision=d) for n, b, a, new, d in rows]
    f = feature(
        [item(i) for i in range(3)], log(*rounds, max_rounds=max_rounds, retry_limit=retry_limit), signal=signal
    )
    env = budget_context(f)
    assert list(env) == ENVELOPE_KEYS
    assert env["remaining_rounds"] >= 0 and env["reviewer_retry_budget_remaining"] >= 0
    assert env["strategy_hint"] in ("explore", "converge", "minimal_fix")
    assert len(evaluate_valves(f)) == 6
    a = advise_feature(f)
    assert a.action in ("ITERATE", "REFINE", "FINAL_ATTEMPT", "ACCEPT", "ESCALATE")
