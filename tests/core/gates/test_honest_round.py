"""An honest round (issue 14 point 5): the gate and the round say how many items are undecided
and what happens to them; a pending second-person accept blocks the close; who decided and who
signed off reach the log; the valves apply on every path (round start past max_rounds, continue
while a valve fires) with an explicit override and its reason; Rule 3 is asked for, recorded as
none when not given (and said), and verify flags its absence. CLI and answers file here; the app
in tests/tui/app/test_app_honest_round.py."""

from __future__ import annotations

import json

import pytest
import yaml

from scars.core import gates
from scars.core.formats.auto_decisions import parse_auto_decisions
from scars.core.gates.verify import verify_feature
from scars.core.samsara.session import FeatureSession
from tests.factories import clean_env, item_id, resolve_in_report, run_cli, samsara_feature

USER = "alice"
ACCEPT = {"re_review_signal": "a non-UTF-8 config is reported", "owner": "config team", "rationale": "all generated"}


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_env(monkeypatch)


def _log(feature):
    p = feature / "iteration-log.yaml"
    return yaml.safe_load(p.read_text(encoding="utf-8")) if p.is_file() else None


def _entries(feature):
    p = feature / "auto-decisions.md"
    return parse_auto_decisions(p.read_text(encoding="utf-8")) if p.is_file() else []


def _answers(tmp_path, data):
    p = tmp_path / "answers.yaml"
    p.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return p


def _flat_round(f):
    """A round that changed nothing, continued (a second such round fires stagnation)."""
    with FeatureSession.open(f, user=USER) as s:
        s.start_round()
    gates.record(gates.gather("round-continue", f), "continue", "still looking for the root cause", user=USER)


# ---------------------------------------------------------------- undecided items


def test_the_gate_round_and_entry_say_how_many_are_undecided_and_what_happens(tmp_path, capsys):
    f = samsara_feature(tmp_path, auto=True)
    retry = item_id(f, "Retry count is hard-coded to 3")
    with FeatureSession.open(f, user=USER) as s:
        s.start_round()
        s.decide(retry, "fix")
    ev = gates.gather("round-continue", f)
    assert dict(ev.figures)["undecided"] == "4 of 5"
    assert ev.warnings[0] == (
        "4 of 5 items undecided: continue carries them to round 2; stop leaves them undecided (the round records it)"
    )
    code, _, err = run_cli(
        ["gate", "round-continue", str(f), "--answer", "stop", "--reason", "the rest waits for v2", "--rule3-none"],
        capsys,
    )
    assert code == 0, err
    [r] = _log(f)["rounds"]
    assert (r["items_triaged"], r["items_undecided"]) == (1, 4)
    assert r["undecided_outcome"].startswith("left undecided: the iteration stops here")
    entry = [e for e in _entries(f) if e.gate_id == "round-continuation"][-1]
    assert any(c.startswith("4 undecided item(s): left undecided") for c in entry.fields["consequences"])


def test_continuing_carries_the_undecided_items_and_says_so(tmp_path, capsys):
    f = samsara_feature(tmp_path)
    with FeatureSession.open(f, user=USER) as s:
        s.start_round()
    code, _, err = run_cli(
        ["round", "close", "--decision", "continue", "--reason", "nothing decided yet", "--feature", str(f)], capsys
    )
    assert code == 0, err
    [r] = _log(f)["rounds"]
    assert (r["items_undecided"], r["undecided_outcome"]) == (5, "carried to round 2: triaged there")


def test_nothing_undecided_writes_no_outcome(tmp_path):
    f = samsara_feature(tmp_path)
    with FeatureSession.open(f, user=USER) as s:
        s.start_round()
        for it in s.feature.items:
            if it.counted:
                s.decide(it.id, "defer", reason="needs the v2 API")
    gates.record(gates.gather("round-continue", f), "stop", "every item deferred to v2", user=USER)
    [r] = _log(f)["rounds"]
    assert r["items_undecided"] == 0 and "undecided_outcome" not in r
    assert dict(gates.gather("entry", f).figures)  # the feature still reads


# ---------------------------------------------------------------- second person, decided_by


def _pending_accept(f):
    utf8 = item_id(f, "Config is UTF-8")
    with FeatureSession.open(f, user=USER) as s:
        s.start_round()
        s.decide(utf8, "accept", pending_review=True, **ACCEPT)
    return utf8


def test_a_pending_second_person_accept_blocks_the_close_on_every_path(tmp_path, capsys):
    f = samsara_feature(tmp_path)
    utf8 = _pending_accept(f)
    ev = gates.gather("round-continue", f)
    assert ev.facts["pending_review"] == [utf8]
    assert ev.warnings[0].startswith(f"1 accept(s) wait for a second person's sign-off ({utf8})")
    code, _, err = run_cli(
        ["gate", "round-continue", str(f), "--answer", "stop", "--reason", "v2 takes the rest"], capsys
    )
    assert code == 4 and "second person's sign-off" in err
    code, _, err = run_cli(
        ["round", "close", "--decision", "stop", "--reason", "v2 takes the rest", "--feature", str(f)], capsys
    )
    assert code == 4 and "second person's sign-off" in err
    tz = item_id(f, "Timezone-naive timestamps compare as UTC")
    p = _answers(
        tmp_path,
        {
            tz: {"action": "defer", "reason": "needs the scheduler rework"},
            "round-continue": {"answer": "stop", "reason": "v2 takes the rest"},
        },
    )
    code, _, err = run_cli(["gate", "triage", str(f), "--answers", str(p)], capsys)
    assert code == 4 and "second person's sign-off" in err
    assert _log(f) is None  # nothing was written as a plain accept
    # Signed off by a second person: the close goes through, and both names reach the log.
    assert run_cli(["decide", utf8, "--sign-off", "bob", "--feature", str(f)], capsys)[0] == 0
    code, _, err = run_cli(
        ["round", "close", "--decision", "stop", "--reason", "v2 takes the rest", "--rule3-none", "--feature", str(f)],
        capsys,
    )
    assert code == 0, err
    [r] = _log(f)["rounds"]
    [a] = r["triage_result"]["accept"]
    assert (a["decided_by"], a["reviewed_by"]) == ("alice", "bob")
    assert {"action": "accept", "description": "Config is UTF-8", "decided_by": "alice", "reviewed_by": "bob"} in r[
        "triaged_by"
    ]


# ---------------------------------------------------------------- valves on every path


def _at_max_rounds(f):
    for _ in range(3):
        with FeatureSession.open(f, user=USER) as s:
            s.start_round()
            fresh = next(it.id for it in s.feature.items if it.counted and it.id not in s.decisions)
            s.decide(fresh, "defer", reason="needs the v2 API")
        with FeatureSession.open(f, user=USER) as s:
            gates.close_round(s, "continue", "the next item is actionable", override=["stagnation", "max_rounds"])


def test_round_start_past_max_rounds_needs_an_override_with_a_reason(tmp_path, capsys):
    f = samsara_feature(tmp_path)
    _at_max_rounds(f)
    code, _, err = run_cli(["round", "start", "--feature", str(f)], capsys)
    assert code == 4 and "round 4 would pass max_rounds 3" in err
    code, _, err = run_cli(["round", "start", "--override-max-rounds", "ok", "--feature", str(f)], capsys)
    assert code == 4  # a reason that says nothing is no override
    why = "the last defer is a one-line fix the owner asked for"
    code, out, err = run_cli(["round", "start", "--override-max-rounds", why, "--feature", str(f), "--json"], capsys)
    assert code == 0, err
    override = json.loads(out)["valve_override"]
    assert (override["valve"], override["reason"]) == ("max_rounds", why)
    code, _, err = run_cli(
        [
            "round",
            "close",
            "--decision",
            "stop",
            "--reason",
            "the owner's one-line fix landed",
            "--rule3-none",
            "--feature",
            str(f),
        ],
        capsys,
    )
    assert code == 0, err
    r4 = _log(f)["rounds"][3]
    assert r4["round"] == 4 and r4["valve_overrides"][0] == override


def test_round_three_of_three_starts_without_an_override(tmp_path, capsys):
    f = samsara_feature(tmp_path)
    _at_max_rounds(f)  # rounds 1-3 started without an override: only a fourth needs one
    assert [r["round"] for r in _log(f)["rounds"]] == [1, 2, 3]


def test_continue_while_a_valve_fires_needs_an_explicit_override(tmp_path, capsys):
    f = samsara_feature(tmp_path)
    _flat_round(f)
    with FeatureSession.open(f, user=USER) as s:
        s.start_round()  # round 2 changes nothing either: stagnation fires
    why = "the root cause was found; its fix lands next round"
    # CLI, the round gate: a continue is refused; it is the safety valve's override.
    code, _, err = run_cli(["gate", "round-continue", str(f), "--answer", "continue", "--reason", why], capsys)
    assert code == 4 and "continuing needs the override" in err
    # CLI, round close: refused unless the fired valve is named.
    argv = ["round", "close", "--decision", "continue", "--reason", why, "--rule3-none", "--feature", str(f)]
    code, _, err = run_cli(argv, capsys)
    assert code == 4 and "safety valve(s) stagnation fired" in err
    # answers file: the same refusal for round-continue …
    tz = item_id(f, "Timezone-naive timestamps compare as UTC")
    defer = {"action": "defer", "reason": "needs the scheduler rework"}
    p = _answers(tmp_path, {tz: defer, "round-continue": {"answer": "continue", "reason": why}})
    code, _, err = run_cli(["gate", "triage", str(f), "--answers", str(p)], capsys)
    assert code == 4 and "continuing needs the override" in err
    assert len(_log(f)["rounds"]) == 1  # nothing written by the refusals
    # … and the override goes through, recorded with its reason.
    code, _, err = run_cli([*argv, "--override", "stagnation"], capsys)
    assert code == 0, err
    r2 = _log(f)["rounds"][1]
    assert r2["decision"] == "continue"
    assert [(o["valve"], o["reason"]) for o in r2["valve_overrides"]] == [("stagnation", why)]


def test_the_safety_valve_gate_in_an_answers_file_is_the_override(tmp_path, capsys):
    f = samsara_feature(tmp_path)
    _flat_round(f)
    with FeatureSession.open(f, user=USER) as s:
        s.start_round()
    why = "the root cause was found; its fix lands next round"
    tz = item_id(f, "Timezone-naive timestamps compare as UTC")
    defer = {"action": "defer", "reason": "needs the scheduler rework"}
    p = _answers(tmp_path, {tz: defer, "safety-valve": {"answer": "continue", "reason": why, "rule3": "none"}})
    code, _, err = run_cli(["gate", "triage", str(f), "--answers", str(p)], capsys)
    assert code == 0, err
    r2 = _log(f)["rounds"][1]
    assert r2["decision"] == "continue" and r2["valve_overrides"][0]["valve"] == "stagnation"
    assert (r2["budget_spent"], r2["evidence_gained"], r2["residual_risk"]) == ({}, [], [])
    assert "rule3_not_given" not in r2


# ---------------------------------------------------------------- Rule 3


def test_rule_3_from_flags_from_an_answers_file_or_said_not_given(tmp_path, capsys):
    f = samsara_feature(tmp_path / "flags")
    with FeatureSession.open(f, user=USER) as s:
        s.start_round()
    argv = ["gate", "round-continue", str(f), "--answer", "stop", "--reason", "the rest waits for v2"]
    argv += ["--evidence", "death test red then green", "--residual-risk", "none"]
    argv += ["--budget-spent", "implementer_dispatches=1,validation_runs=2"]
    assert run_cli(argv, capsys)[0] == 0
    [r] = _log(f)["rounds"]
    assert r["evidence_gained"] == ["death test red then green"] and r["residual_risk"] == []
    assert r["budget_spent"] == {"implementer_dispatches": 1, "validation_runs": 2}
    assert "rule3_not_given" not in r

    g = samsara_feature(tmp_path / "file")
    with FeatureSession.open(g, user=USER) as s:
        s.start_round()
    tz = item_id(g, "Timezone-naive timestamps compare as UTC")
    data = {
        tz: {"action": "defer", "reason": "needs the scheduler rework"},
        "round-continue": {"answer": "stop", "reason": "the rest waits for v2", "evidence_gained": ["a red test"]},
    }
    assert run_cli(["gate", "triage", str(g), "--answers", str(_answers(tmp_path, data))], capsys)[0] == 0
    [r] = _log(g)["rounds"]
    assert r["evidence_gained"] == ["a red test"]
    # Not given: written as none, and the round says which were not given.
    assert (r["budget_spent"], r["residual_risk"]) == ({}, [])
    assert r["rule3_not_given"] == ["budget_spent", "residual_risk"]
    notes = [x.message for x in verify_feature(g).findings if x.severity == "note"]
    assert "round 1: budget_spent, residual_risk not given when the round closed (recorded as none)" in notes


@pytest.mark.parametrize(
    ("value", "ok"),
    [("implementer_dispatches=0", True), ("implementer_dispatches=-1", False), ("x", False), ("none", True)],
)
def test_budget_spent_must_be_counts(tmp_path, capsys, value, ok):
    f = samsara_feature(tmp_path)
    with FeatureSession.open(f, user=USER) as s:
        s.start_round()
    code, _, err = run_cli(
        ["round", "close", "--decision", "stop", "--reason", "the rest waits for v2", "--budget-spent", value]
        + ["--feature", str(f)],
        capsys,
    )
    assert (code == 0) is ok, err


def test_rule_3_fields_go_only_with_a_round_gate(tmp_path, capsys):
    f = samsara_feature(tmp_path)
    code, _, err = run_cli(["gate", "entry", str(f), "--answer", "enter", "--rule3-none"], capsys)
    assert code == 2 and "belong to a round gate" in err


FIX_REPORT = """\
task_id: iteration-fix-1
completion_status: done
known_shortcuts:
  - "The retry limit is read once at start-up"
silent_failure_conditions: []
assumptions_made: []
debt_registered: true
budget_spent: {validation_runs: 2, reviewer_retries_consumed: 1}
evidence_gained: ["test_retry_limit red before the fix, green after"]
residual_risk: ["other limits are still hard-coded"]
"""


def test_rule_3_is_taken_from_the_rounds_fix_reports(tmp_path, capsys):
    """Seed 002's fix result budget report: a fix-round report written during the round gives
    the round's Rule-3 fields when the answer does not; a count of formats.md §1.5's
    budget_spent that no report gives is not made up but named in rule3_not_given."""
    f = samsara_feature(tmp_path)
    with FeatureSession.open(f, user=USER) as s:
        s.start_round()
        s.decide(item_id(f, "Retry count is hard-coded to 3"), "fix")
    (f / "scar-reports" / "iteration-fix-1-scar.yaml").write_text(FIX_REPORT, encoding="utf-8")
    ev = gates.gather("round-continue", f)
    figures = dict(ev.figures)
    assert figures["evidence_gained (from scar-reports/iteration-fix-1-scar.yaml)"] == (
        "test_retry_limit red before the fix, green after"
    )
    assert "Rule 3 to give" not in figures
    argv = ["gate", "round-continue", str(f), "--answer", "stop", "--reason", "the rest waits for v2"]
    assert run_cli([*argv, "--residual-risk", "the scheduler limits"], capsys)[0] == 0
    [r] = _log(f)["rounds"]
    # The upstream fix report's shape (validation_runs, reviewer_retries_consumed): no implementer
    # dispatch is invented (a real inline fix dispatched none), none of reviewers either.
    assert r["budget_spent"] == {"reviewer_retries": 1, "validation_runs": 2}
    assert r["evidence_gained"] == ["test_retry_limit red before the fix, green after"]
    assert r["residual_risk"] == ["the scheduler limits"]  # given with the answer: it wins
    assert r["rule3_not_given"] == ["budget_spent.implementer_dispatches", "budget_spent.reviewer_dispatches"]
    code, out, _ = run_cli(["log", "verify", str(f)], capsys)
    assert code != 1, out  # a note, not a failure (the unknown is the flag answer's provenance)
    assert "budget_spent.implementer_dispatches, budget_spent.reviewer_dispatches not given" in out


def test_the_counts_fix_reports_give_are_summed_and_kept(tmp_path, capsys):
    f = samsara_feature(tmp_path)
    with FeatureSession.open(f, user=USER) as s:
        s.start_round()
        s.decide(item_id(f, "Retry count is hard-coded to 3"), "fix")
    dispatched = FIX_REPORT.replace(
        "{validation_runs: 2, reviewer_retries_consumed: 1}",
        "{implementer_dispatches: 1, reviewer_dispatches: 2, reviewer_retries: 0, reviewer_retries_consumed: 5, "
        "validation_runs: 3}",
    )
    (f / "scar-reports" / "iteration-fix-1-scar.yaml").write_text(FIX_REPORT, encoding="utf-8")
    second = dispatched.replace("iteration-fix-1", "iteration-fix-2").replace("read once", "read twice")
    (f / "scar-reports" / "iteration-fix-2-scar.yaml").write_text(second, encoding="utf-8")
    argv = ["round", "close", "--decision", "stop", "--reason", "the rest waits for v2", "--feature", str(f)]
    assert run_cli(argv, capsys)[0] == 0
    [r] = _log(f)["rounds"]
    # reviewer_dispatches kept; the round's own name (reviewer_retries) before the fix result's
    assert r["budget_spent"] == {
        "implementer_dispatches": 1,
        "reviewer_dispatches": 2,
        "reviewer_retries": 1,
        "validation_runs": 5,
    }
    assert "rule3_not_given" not in r  # every count given by some report, the lists too


def test_a_report_there_at_round_start_is_no_fix_report(tmp_path, capsys):
    f = samsara_feature(tmp_path)
    (f / "scar-reports" / "iteration-fix-1-scar.yaml").write_text(FIX_REPORT, encoding="utf-8")
    with FeatureSession.open(f, user=USER) as s:
        s.start_round()
    argv = ["gate", "round-continue", str(f), "--answer", "stop", "--reason", "the rest waits for v2"]
    assert run_cli(argv, capsys)[0] == 0
    [r] = _log(f)["rounds"]
    assert r["rule3_not_given"] == ["budget_spent", "evidence_gained", "residual_risk"]


# ---------------------------------------------------------------- seed 002's final transition


def test_the_final_transition_line_counts_every_round(tmp_path, capsys):
    f = samsara_feature(tmp_path, auto=True)
    retry = item_id(f, "Retry count is hard-coded to 3")
    utf8 = item_id(f, "Config is UTF-8")
    tz = item_id(f, "Timezone-naive timestamps compare as UTC")
    with FeatureSession.open(f, user=USER) as s:
        s.start_round()
        s.decide(retry, "fix")
        s.decide(utf8, "accept", **ACCEPT)
    from tests.factories import resolve_in_report

    resolve_in_report(f, "Retry count is hard-coded to 3")  # the fix landed: 5 → 4
    argv = ["round", "close", "--decision", "continue", "--reason", "the scheduler item is next", "--rule3-none"]
    code, out, err = run_cli([*argv, "--feature", str(f)], capsys)
    assert code == 0, err
    assert "Iteration 完成" not in out  # continuing ends nothing
    with FeatureSession.open(f, user=USER) as s:
        s.start_round()
        s.decide(tz, "defer", reason="needs the scheduler rework")
    argv = ["round", "close", "--decision", "stop", "--reason", "the rest waits for v2", "--rule3-none"]
    code, out, err = run_cli([*argv, "--feature", str(f), "--json"], capsys)
    assert code == 0, err
    line = (
        "Iteration 完成。2 輪執行，signal_lost: 5 → 4（recounted by scars）。1 items fixed, 1 items accepted, 1 items deferred。"
        "進入 Validate & Ship（Step 0 security gate）。"
    )
    assert json.loads(out)["transition"] == line
    entry = [e for e in _entries(f) if e.gate_id == "round-continuation"][-1]
    assert line in entry.fields["consequences"]  # auto mode: the stop's entry says it too


def test_the_gate_prints_the_transition_when_the_iteration_stops(tmp_path, capsys):
    f = samsara_feature(tmp_path)
    with FeatureSession.open(f, user=USER) as s:
        s.start_round()
    argv = ["gate", "round-continue", str(f), "--answer", "stop", "--reason", "the rest waits for v2", "--rule3-none"]
    code, out, err = run_cli(argv, capsys)
    assert code == 0, err
    assert out.splitlines()[-1] == (
        "Iteration 完成。1 輪執行，signal_lost: 5 → 5（recounted by scars）。0 items fixed, 0 items accepted, 0 items deferred。"
        "進入 Validate & Ship（Step 0 security gate）。"
    )


# ---------------------------------------------------------------- review aggregation rule


def _budget(f, capsys):
    code, out, err = run_cli(["budget-context", str(f), "--json"], capsys)
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize(("consumed", "remaining"), [(0, 2), (1, 1), (2, 0), (3, 0)])
def test_the_fix_reports_reviewer_retries_count_against_the_budget(tmp_path, capsys, consumed, remaining):
    """Seed 002: a missing reviewer is FAIL, re-dispatched at most 2 times, then escalated; the
    retries a fix-round report consumed this round leave that many fewer."""
    f = samsara_feature(tmp_path)
    with FeatureSession.open(f, user=USER) as s:
        s.start_round()
    assert _budget(f, capsys)["iteration_budget_context"]["reviewer_retry_budget_remaining"] == 2
    report = FIX_REPORT.replace("reviewer_retries_consumed: 1", f"reviewer_retries_consumed: {consumed}")
    (f / "scar-reports" / "iteration-fix-1-scar.yaml").write_text(report, encoding="utf-8")
    out = _budget(f, capsys)
    assert out["iteration_budget_context"]["reviewer_retry_budget_remaining"] == remaining
    retries = out["basis"]["reviewer_retries"]
    assert retries["fix_reports"] == ["scar-reports/iteration-fix-1-scar.yaml"]
    assert retries["escalate"] is (remaining == 0)
    assert "a missing reviewer output is FAIL" in out["basis"]["review_rule"]
    if remaining == 0:
        assert out["iteration_budget_context"]["strategy_hint"] == "minimal_fix"  # the budget is low


def test_a_report_there_before_the_round_spends_no_retry(tmp_path, capsys):
    f = samsara_feature(tmp_path)
    (f / "scar-reports" / "iteration-fix-1-scar.yaml").write_text(FIX_REPORT, encoding="utf-8")
    with FeatureSession.open(f, user=USER) as s:
        s.start_round()
    assert _budget(f, capsys)["iteration_budget_context"]["reviewer_retry_budget_remaining"] == 2


# ---------------------------------------------------------------- the gate's wording is true


def test_an_open_round_with_nothing_decided_is_not_called_done(tmp_path):
    f = samsara_feature(tmp_path)
    with FeatureSession.open(f, user=USER) as s:
        s.start_round()
    ev = gates.gather("round-continue", f)
    assert ev.headline == (
        "Round 1 is open and nothing was decided in it yet. signal_lost 5 → 5. Fixed 0, 5 remaining."
    )
    assert ev.as_json()["headline"] == ev.headline
    with FeatureSession.open(f, user=USER) as s:  # one decision: the round's work is done
        s.decide(item_id(f, "Retry count is hard-coded to 3"), "fix")
    assert gates.gather("round-continue", f).headline == (
        "Round 1 done. signal_lost 5 → 5. Fixed 0 (1 fix decided, not applied yet), 5 remaining."
    )
    with FeatureSession.open(f, user=USER) as s:  # two: plural; once applied, no longer said
        s.decide(item_id(f, "Config is UTF-8"), "fix")
    assert "Fixed 0 (2 fixes decided, not applied yet), 5 remaining." in gates.gather("round-continue", f).headline
    resolve_in_report(f, "Retry count is hard-coded to 3")
    assert gates.gather("round-continue", f).headline == (
        "Round 1 done. signal_lost 5 → 4. Fixed 1 (1 fix decided, not applied yet), 4 remaining."
    )


def _rounds_continued(f, n):
    for r in range(1, n + 1):
        with FeatureSession.open(f, user=USER) as s:
            s.start_round()
        gate = "round-continue" if not gates.gather("round-continue", f).facts["valves"] else "safety-valve"
        if r < n:
            gates.record(gates.gather(gate, f), "continue", f"round {r}: still looking for the root cause", user=USER)


@pytest.mark.parametrize(("rounds", "override"), [(2, False), (3, True)])
def test_continue_past_max_rounds_is_said_to_need_the_override(tmp_path, rounds, override):
    f = samsara_feature(tmp_path)
    _rounds_continued(f, rounds)
    ev = gates.gather("safety-valve" if override else "round-continue", f)
    assert (ev.facts["round"], ev.facts["max_rounds"]) == (rounds, 3)
    said = ev.warnings[0]
    assert said.startswith(f"5 of 5 items undecided: continue carries them to round {rounds + 1}")
    assert ("past max_rounds 3: only with the max-rounds override" in said) is override
