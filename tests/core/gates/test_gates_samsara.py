"""samsara gates: entry, round-continue, safety-valve, blocked-fix, triage — files checked field by field."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from scars.core import gates
from scars.core.errors import UsageError
from scars.core.formats.auto_decisions import parse_auto_decisions
from scars.core.samsara.feature import read_feature
from scars.core.samsara.session import FeatureSession
from scars.core.storage.lock import FeatureLock
from scars.tui.cli import main as cli
from scars.tui.cli.commands import gate as gate_cmd
from tests.factories import clean_env, item_id, resolve_in_report, samsara_feature, tree_hashes

USER = "alice"


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_env(monkeypatch)


def _run(argv, capsys):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _entries(feature):
    p = feature / "auto-decisions.md"
    return parse_auto_decisions(p.read_text(encoding="utf-8")) if p.is_file() else []


def _log(feature):
    return yaml.safe_load((feature / "iteration-log.yaml").read_text(encoding="utf-8"))


def _open_round(feature, *decide):
    with FeatureSession.open(feature, user=USER) as s:
        s.start_round()
        for item, action in decide:
            s.decide(item, action)


# ---------------------------------------------------------------- entry


def test_entry_evidence(tmp_path):
    f = samsara_feature(tmp_path)
    ev = gates.gather("entry", f)
    figs = dict(ev.figures)
    assert figs["signal_lost"].startswith("5 ")
    assert figs["cross-task patterns"] == "1" and figs["entry verdict"] == "gate"
    assert ev.workflow_prompt == (
        "Iteration entry: signal_lost=5, cross-task patterns=1, parse failures=0; "
        "entry verdict: gate. (A) enter iteration (B) skip to validate-and-ship"
    )
    assert ev.files_read == ["scar-reports/task-1-scar.yaml", "scar-reports/task-2-scar.yaml", "index.yaml"]
    assert ev.default == "enter"


def test_entry_in_human_mode_writes_the_skip_record_and_no_entry(tmp_path, capsys):
    f = samsara_feature(tmp_path)
    reason = "the shared cache key is fixed by the cache feature next week"
    code, out, _ = _run(["gate", "entry", str(f), "--answer", "skip", "--reason", reason, "--json"], capsys)
    assert code == 0 and json.loads(out)["recorded"] == ["index.yaml"]
    assert not (f / "auto-decisions.md").exists()
    code, out, _ = _run(["gate", "entry", str(f), "--answer", "enter", "--json"], capsys)
    assert code == 0 and json.loads(out)["recorded"] == ["index.yaml"]  # the record removed
    assert not (f / "auto-decisions.md").exists()


def test_entry_skip_writes_the_reversible_record_and_enter_removes_it(tmp_path, capsys):
    f = samsara_feature(tmp_path)
    original = (f / "index.yaml").read_text()
    reason = "the shared cache key is fixed by the cache feature next week"
    argv = ["gate", "entry", str(f), "--answer", "skip", "--reason", reason, "--json", "--auto-entry"]
    code, out, _ = _run(argv, capsys)
    assert code == 0
    obj = json.loads(out)
    assert (obj["answer"], obj["decision"], obj["recorded"]) == (
        "skip",
        "accept_gap",
        ["auto-decisions.md", "index.yaml"],
    )
    text = (f / "index.yaml").read_text()
    assert text.splitlines()[0].startswith("iteration_skip_record: ")  # at the top (README)
    assert text.endswith(original)  # every other byte kept, comment included
    record = yaml.safe_load(text)["iteration_skip_record"]
    assert record == (
        f"signal_lost=5, 1 cross-task pattern(s), 0 parse failure(s), iteration skipped by {USER}: "
        f"{reason} (reply to override)"
    )
    [e] = _entries(f)
    assert (e.number, e.heading_stage, e.gate_id) == (1, "iteration", "entry")
    assert e.fields["decision"] == "accept_gap"
    assert e.fields["gatekeeper_answer"] == f"(B) skip to validate-and-ship: {reason}"
    assert e.fields["evidence_checked"] == [
        "scar-reports/task-1-scar.yaml",
        "scar-reports/task-2-scar.yaml",
        "index.yaml",
    ]
    assert e.fields["uncertainty"]["level"] == "low"
    assert not e.problems
    code, out, _ = _run(["gate", "entry", str(f), "--answer", "a", "--json", "--auto-entry"], capsys)
    assert code == 0 and json.loads(out)["answer"] == "enter"
    assert (f / "index.yaml").read_text() == original
    assert [x.fields["decision"] for x in _entries(f)] == ["accept_gap", "proceed"]


def test_entry_skip_creates_index_yaml_when_absent(tmp_path):
    f = samsara_feature(tmp_path, index=None)
    gates.record(gates.gather("entry", f), "skip", "small feature; validate-and-ship covers it", user=USER)
    data = yaml.safe_load((f / "index.yaml").read_text())
    assert data["feature"] == f.name and "iteration skipped by alice" in data["iteration_skip_record"]


def test_entry_skip_needs_a_specific_reason(tmp_path, capsys):
    f = samsara_feature(tmp_path)
    before = tree_hashes(tmp_path)
    code, _, err = _run(["gate", "entry", str(f), "--answer", "skip", "--reason", "ok"], capsys)
    assert code == 4 and "generic" in err
    assert tree_hashes(tmp_path) == before


# ---------------------------------------------------------------- round-continue


def test_round_continue_without_an_open_round_is_a_usage_error(tmp_path, capsys):
    f = samsara_feature(tmp_path)
    code, _, err = _run(["gate", "round-continue", str(f), "--answer", "continue"], capsys)
    assert code == 2 and "no round is open" in err


def test_round_continue_stop_closes_the_round_in_iteration_log(tmp_path, capsys):
    f = samsara_feature(tmp_path)
    retry = item_id(f, "Retry count is hard-coded to 3")
    _open_round(f, (retry, "fix"))
    ev = gates.gather("round-continue", f)
    assert (
        ev.workflow_prompt
        == "Round 1 完成。signal_lost: 5 → 5。修復了 0 個 items，剩餘 5 個。\n\n(A) 繼續下一輪 (B) 停止，進入 Validation"
    )  # a fix decision is not a fix: its item is still listed
    resolve_in_report(f, "Retry count is hard-coded to 3")  # the implementer's fix lands
    ev = gates.gather("round-continue", f)
    assert (
        ev.workflow_prompt
        == "Round 1 完成。signal_lost: 5 → 4。修復了 1 個 items，剩餘 4 個。\n\n(A) 繼續下一輪 (B) 停止，進入 Validation"
    )  # K: the fixes that resolved their item, as the round writes them (fixes_applied)
    assert ".scars/journal.jsonl (decisions and the open round)" in ev.files_read
    reason = "the fix needs the vendor SDK; the other four are cross-feature"
    argv = ["gate", "round-continue", str(f), "--answer", "B", "--reason", reason, "--json", "--auto-entry"]
    code, out, _ = _run(argv, capsys)
    assert code == 0
    obj = json.loads(out)
    assert (obj["answer"], obj["decision"], obj["round_decision"]) == ("stop", "proceed", "stop")
    assert "iteration-log.yaml" in obj["recorded"]
    [r] = _log(f)["rounds"]
    assert (r["round"], r["decision"], r["decision_reason"]) == (1, "stop", reason)
    assert r["triage_result"]["fix"] == ["Retry count is hard-coded to 3"]
    assert (r["signal_lost_before"], r["signal_lost_after"], r["fixes_applied"]) == (5, 4, 1)
    triage, e = _entries(f)  # the round's triage has no entry yet: it comes first
    assert triage.gate_id == "triage"
    assert e.gate_id == "round-continuation" and e.fields["rationale"] == reason
    assert e.fields["workflow_prompt"] == ev.workflow_prompt  # written as one escaped line, read back equal
    assert "\\n" in (f / "auto-decisions.md").read_text(encoding="utf-8")


def test_round_continue_continue_has_a_specific_generated_reason(tmp_path):
    f = samsara_feature(tmp_path)
    _open_round(f)
    res = gates.record(gates.gather("round-continue", f), "continue", None, user=USER, auto_entry=True)
    assert res.extra["round_decision"] == "continue"
    [r] = _log(f)["rounds"]
    assert r["decision"] == "continue"
    assert r["decision_reason"] == "user chose to continue: signal_lost 5 → 5, 5 remaining"
    [e] = _entries(f)
    assert e.fields["gatekeeper_answer"].startswith("(A) 繼續下一輪 (")  # the figures make it question-specific


# ---------------------------------------------------------------- safety-valve


def _flat_rounds(f, n):
    for _ in range(n):
        _open_round(f)
        gates.record(gates.gather("round-continue", f), "continue", "still looking for the root cause", user=USER)


def test_safety_valve_without_an_active_valve_points_to_round_continue(tmp_path):
    f = samsara_feature(tmp_path)
    _open_round(f)
    with pytest.raises(UsageError, match="round-continue"):
        gates.gather("safety-valve", f)


def test_stagnation_fires_and_continuing_needs_a_reason(tmp_path, capsys):
    f = samsara_feature(tmp_path)
    _flat_rounds(f, 1)
    _open_round(f)
    ev = gates.gather("safety-valve", f)
    assert ev.workflow_prompt.startswith(
        "signal_lost 連續 2 輪未下降（5 → 5）。Iteration 可能在原地轉圈。建議停止。\n\nRound 2 完成。"
    )
    assert ev.default == "stop"
    rc = gates.gather("round-continue", f)  # a fired valve makes it the safety valve's decision point
    assert rc.gate.id == "safety-valve" and rc.needs_reason(rc.gate.answers[0])
    assert any("stagnation" in w for w in rc.warnings)
    assert "continue" in rc.refused  # asked as round-continue: continuing is the override's, refused here
    point = gates.gather("round-continue", f, follow_state=True)  # the decision point itself (the app's `g`)
    assert point.gate.id == "safety-valve" and not point.refused and point.warnings == ev.warnings
    code, _, err = _run(["gate", "safety-valve", str(f), "--answer", "continue"], capsys)
    assert code == 4
    code, out, _ = _run(["gate", "safety-valve", str(f), "--answer", "stop", "--json"], capsys)
    assert code == 0 and json.loads(out)["decision"] == "proceed"
    r = _log(f)["rounds"][-1]
    assert r["round"] == 2 and r["decision"] == "stop"
    assert r["decision_reason"].startswith("safety valve stagnation: user chose to stop")


def test_max_rounds_stop_is_a_forced_stop_naming_the_trigger(tmp_path):
    f = samsara_feature(tmp_path)
    _flat_rounds(f, 2)
    _open_round(f)
    ev = gates.gather("safety-valve", f)
    assert "Max rounds reached (3 of 3): forced stop" in ev.workflow_prompt
    res = gates.record(ev, "stop", None, user=USER)
    assert res.extra["round_decision"] == "forced_stop"
    r = _log(f)["rounds"][-1]
    assert r["decision"] == "forced_stop" and re.search(r"max rounds", r["decision_reason"])


def test_forced_stop_lists_the_remaining_items_not_the_rule(tmp_path):
    """Seed 002: "If reached → forced stop with remaining items listed" — the gate lists them
    (each id and text; a fixed item is not among them), and the auto entry names them."""
    f = samsara_feature(tmp_path, auto=True)
    retry = item_id(f, "Retry count is hard-coded to 3")
    _flat_rounds(f, 2)
    _open_round(f, (retry, "fix"))
    resolve_in_report(f, "Retry count is hard-coded to 3")
    ev = gates.gather("safety-valve", f)
    left = [it for it in read_feature(f).items if it.counted]
    assert len(left) == 4 and retry not in {it.id for it in left}
    (warning,) = [w for w in ev.warnings if w.startswith("safety valve max_rounds")]
    lines = warning.splitlines()
    assert lines[0].endswith("forced stop with the 4 remaining item(s) listed:")
    assert lines[1:] == [f"  - {it.id} [{it.category}] {it.text}" for it in left]
    assert "If reached" not in ev.workflow_prompt and all(it.id in ev.workflow_prompt for it in left)
    gates.record(ev, "stop", "four rounds of nothing: stop and ship with these", user=USER)
    (listed,) = [c for c in _entries(f)[-1].fields["consequences"] if "remaining item(s) listed" in c]
    assert listed == "4 remaining item(s) listed: " + ", ".join(it.id for it in left)


def test_safety_valve_continue_with_reason(tmp_path):
    f = samsara_feature(tmp_path)
    _flat_rounds(f, 1)
    _open_round(f)
    res = gates.record(
        gates.gather("safety-valve", f), "continue", "the last fix lands tomorrow; one more round", user=USER
    )
    assert res.decision == "accept_gap"
    r = _log(f)["rounds"][-1]
    assert r["decision"] == "continue" and "stagnation" in r["decision_reason"]


# ---------------------------------------------------------------- blocked-fix


def test_blocked_fix_records_the_outcome(tmp_path, capsys):
    f = samsara_feature(tmp_path)
    retry = item_id(f, "Retry count is hard-coded to 3")
    _open_round(f, (retry, "fix"))
    ctx = "paste src/retry.py and the config loader into the dispatch"
    code, out, _ = _run(
        [
            "gate",
            "blocked-fix",
            str(f),
            "--item",
            retry,
            "--blocked",
            "NEEDS_CONTEXT: config source unknown",
            "--answer",
            "retry",
            "--reason",
            ctx,
            "--json",
            "--auto-entry",
        ],
        capsys,
    )
    assert code == 0
    obj = json.loads(out)
    assert (obj["answer"], obj["decision"], obj["outcome"], obj["item"]) == (
        "retry",
        "revise",
        "retry_with_context",
        retry,
    )
    with FeatureSession.open(f, read_only=True) as s:
        d = s.decisions[retry]
    assert d.blocked_outcome == "retry_with_context"
    triage, e = _entries(f)  # one blocked-fix entry (after the round's triage entry), not two
    assert (triage.gate_id, e.gate_id) == ("triage", "blocked-fix")
    assert e.fields["workflow_prompt"] == (
        'Fix item "Retry count is hard-coded to 3" 被 implementer 回報 BLOCKED: NEEDS_CONTEXT: config source unknown。'
        "(A) 提供更多 context 重試 (B) 重新分類為 defer"
    )
    assert e.fields["evidence_checked"][0] == f"scar-reports/task-1-scar.yaml (item {retry})"


def test_blocked_fix_needs_an_item_decided_fix(tmp_path, capsys):
    f = samsara_feature(tmp_path)
    retry = item_id(f, "Retry count is hard-coded to 3")
    code, _, err = _run(["gate", "blocked-fix", str(f), "--answer", "b", "--reason", "vendor API unreachable"], capsys)
    assert code == 2 and "--item" in err
    code, _, err = _run(
        [
            "gate",
            "blocked-fix",
            str(f),
            "--item",
            retry,
            "--answer",
            "defer",
            "--reason",
            "vendor API unreachable from CI",
        ],
        capsys,
    )
    assert code == 4 and "not decided fix" in err
    code, _, err = _run(["gate", "blocked-fix", str(f), "--item", "ks-0000000000", "--answer", "b"], capsys)
    assert code == 2 and "no item" in err


# ---------------------------------------------------------------- triage and answers files


def _answers(tmp_path, f, text_by_key):
    p = tmp_path / "answers.yaml"
    p.write_text(yaml.safe_dump(text_by_key, allow_unicode=True))
    return p


def test_answers_file_replays_triage_and_its_gates(tmp_path, capsys):
    f = samsara_feature(tmp_path)
    retry = item_id(f, "Retry count is hard-coded to 3")
    utf8 = item_id(f, "Config is UTF-8")
    tz = item_id(f, "Timezone-naive timestamps compare as UTC")
    _open_round(f)
    p = _answers(
        tmp_path,
        f,
        {
            retry: "fix",
            utf8: {
                "action": "accept",
                "re_review_signal": "a non-UTF-8 config is reported",
                "owner": "config team",
                "rationale": "every shipped config is generated as UTF-8",
            },
            tz: {"action": "defer", "reason": "needs the scheduler rework"},
            "round-continue": {"answer": "stop", "reason": "one fix in flight; the rest is accepted or deferred"},
        },
    )
    code, out, err = _run(["gate", "triage", str(f), "--answers", str(p), "--json", "--auto-entry"], capsys)
    assert code == 0, err
    obj = json.loads(out)
    assert obj["gate"] == "triage" and obj["decision"] == "revise"  # 2 items left undecided
    assert obj["counts"] == {"fix": 1, "accept": 1, "defer": 1} and obj["undecided"] == 2
    assert [r["gate"] for r in obj["replayed"]] == ["round-continue"]
    with FeatureSession.open(f, read_only=True) as s:
        ds = s.decisions
    assert (
        ds[retry].action == "fix" and ds[utf8].owner == "config team" and ds[tz].reason == "needs the scheduler rework"
    )
    [r] = _log(f)["rounds"]
    assert r["decision"] == "stop"
    assert r["triage_result"]["accept"] == [
        {
            "description": "Config is UTF-8",
            "re_review_signal": "a non-UTF-8 config is reported",
            "owner": "config team",
            "rationale": "every shipped config is generated as UTF-8",
            "decided_by": "alice",  # extra key: who decided (upstream readers ignore it)
        }
    ]
    entries = _entries(f)
    assert [e.gate_id for e in entries] == ["triage", "round-continuation"]
    assert entries[0].fields["decision"] == "revise"
    with FeatureSession.open(f, read_only=True) as s:  # how the answer came is in the journal
        assert [r.get("source") for r in s.records if r["type"] == "auto_decision"] == ["answers file answers.yaml"]


@pytest.mark.parametrize(
    "bad",
    [
        {"accept_without_owner": True},
        {"unknown_item": True},
        {"generic_stop": True},
    ],
)
def test_an_invalid_answers_file_changes_no_file(tmp_path, capsys, bad):
    f = samsara_feature(tmp_path / "repo")
    retry = item_id(f, "Retry count is hard-coded to 3")
    utf8 = item_id(f, "Config is UTF-8")
    _open_round(f)
    answers = {retry: "fix", "round-continue": {"answer": "stop", "reason": "the rest is accepted with owners"}}
    if "accept_without_owner" in bad:
        answers[utf8] = {"action": "accept", "re_review_signal": "a non-UTF-8 config", "rationale": "generated"}
    if "unknown_item" in bad:
        answers["ks-00000000ff"] = "fix"
    if "generic_stop" in bad:
        answers["round-continue"] = {"answer": "stop", "reason": "ok"}
    p = _answers(tmp_path, f, answers)
    before = tree_hashes(tmp_path)
    code, _, err = _run(["gate", "triage", str(f), "--answers", str(p)], capsys)
    assert code == 4, err
    assert "nothing was recorded" in err
    assert tree_hashes(tmp_path) == before


def test_triage_without_a_terminal_or_answers_exits_3(tmp_path, capsys):
    f = samsara_feature(tmp_path)
    code, _, err = _run(["gate", "triage", str(f)], capsys)
    assert code == 3 and f"scars gate triage {f} --answers ANSWERS.yaml" in err


def test_lock_held_on_the_feature_exits_5_and_records_nothing(tmp_path, capsys):
    f = samsara_feature(tmp_path)
    with FeatureLock(f, user="bob"):
        code, _, err = _run(["gate", "entry", str(f), "--answer", "enter"], capsys)
    assert code == 5 and "bob" in err
    assert not (f / "auto-decisions.md").exists()


def test_environment_answer_for_a_samsara_gate(tmp_path, capsys, monkeypatch):
    f = samsara_feature(tmp_path)
    _open_round(f)
    monkeypatch.setenv("SCARS_ANSWER_ROUND_CONTINUE", "continue")
    code, out, _ = _run(["gate", "round-continue", str(f), "--json"], capsys)
    assert code == 0 and json.loads(out)["answer"] == "continue"
    assert _log(f)["rounds"][0]["decision"] == "continue"


# ---------------------------------------------------------------- at a terminal


def _interactive(monkeypatch, keys, argv, capsys):
    monkeypatch.setattr(gate_cmd, "_is_interactive", lambda: True)
    with create_pipe_input() as inp:
        inp.send_text(keys)
        with create_app_session(input=inp, output=DummyOutput()):
            code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_terminal_round_continue_letter_and_reason(tmp_path, monkeypatch, capsys):
    f = samsara_feature(tmp_path)
    _open_round(f)
    code, out, _ = _interactive(
        monkeypatch,
        "b\r" + "continue\r" + "\x7f" * 8 + "nothing actionable is left this round\r" + "none\r" * 3,
        ["gate", "round-continue", str(f), "--json"],
        capsys,
    )
    assert code == 0
    obj = json.loads(out.strip().splitlines()[-1])
    assert (obj["answer"], obj["reason"]) == ("stop", "nothing actionable is left this round")
    assert "Round 1 完成" in out
    # Rule 3 is asked at the terminal; "none" records none, explicitly (not "not given").
    [r] = _log(f)["rounds"]
    assert (r["budget_spent"], r["evidence_gained"], r["residual_risk"]) == ({}, [], [])
    assert "rule3_not_given" not in r


def test_terminal_entry_enter_with_one_key(tmp_path, monkeypatch, capsys):
    f = samsara_feature(tmp_path)
    code, out, _ = _interactive(monkeypatch, "a\r", ["gate", "entry", str(f), "--json"], capsys)
    assert code == 0 and json.loads(out.strip().splitlines()[-1])["answer"] == "enter"


def test_terminal_blocked_fix_defer(tmp_path, monkeypatch, capsys):
    f = samsara_feature(tmp_path)
    retry = item_id(f, "Retry count is hard-coded to 3")
    _open_round(f, (retry, "fix"))
    code, out, _ = _interactive(
        monkeypatch,
        "b\rthe vendor sandbox is down until March\r",
        ["gate", "blocked-fix", str(f), "--item", retry, "--json"],
        capsys,
    )
    assert code == 0
    assert json.loads(out.strip().splitlines()[-1])["outcome"] == "reclassify_as_defer"


def test_terminal_safety_valve_stop(tmp_path, monkeypatch, capsys):
    f = samsara_feature(tmp_path)
    _flat_rounds(f, 1)
    _open_round(f)
    code, out, _ = _interactive(monkeypatch, "\r" + "\r" * 3, ["gate", "safety-valve", str(f), "--json"], capsys)
    assert code == 0 and json.loads(out.strip().splitlines()[-1])["answer"] == "stop"  # the default
    r = _log(f)["rounds"][-1]  # Rule 3 left empty at the terminal: recorded as none, and said
    assert r["rule3_not_given"] == ["budget_spent", "evidence_gained", "residual_risk"]


def test_terminal_triage_opens_the_app_then_records_the_gate(tmp_path, monkeypatch, capsys):
    from scars.tui.cli.commands import triage as triage_cmd

    f = samsara_feature(tmp_path)
    retry = item_id(f, "Retry count is hard-coded to 3")
    seen = {}

    def fake_app(args):  # stands in for the full-screen app: one decision, then quit
        seen["feature_dir"] = args.feature_dir
        with FeatureSession.open(args.feature_dir, user=USER) as s:
            s.decide(retry, "fix")
        return 0

    monkeypatch.setattr(triage_cmd, "run", fake_app)
    monkeypatch.setattr(gate_cmd, "_is_interactive", lambda: True)
    code, out, _ = _run(["gate", "triage", str(f), "--json", "--auto-entry"], capsys)
    assert code == 0 and seen["feature_dir"] == str(f.resolve())
    obj = json.loads(out)
    assert obj["counts"] == {"fix": 1, "accept": 0, "defer": 0} and obj["undecided"] == 4
    [e] = _entries(f)
    assert e.gate_id == "triage" and e.fields["gatekeeper_answer"].startswith(
        "Triage recorded: round 1: fix 1, accept 0, defer 0 (5 items remaining); 4 undecided"
    )


def test_answers_file_like_the_readme_example(tmp_path, capsys):
    f = samsara_feature(tmp_path)
    retry = item_id(f, "Retry count is hard-coded to 3")
    utf8 = item_id(f, "Config is UTF-8")
    tz = item_id(f, "Timezone-naive timestamps compare as UTC")
    _open_round(f)
    p = tmp_path / "answers.yaml"
    p.write_text(
        f"{retry}: fix\n"
        f'{utf8}: {{action: accept, re_review_signal: "a second writer appears", owner: "ops", rationale: "single writer today"}}\n'
        f'{tz}: {{action: defer, reason: "needs the scheduler rework"}}\n'
        "entry: enter\n"
        'round-continue: {answer: stop, reason: "the 3 left are accepted or deferred with owners"}\n'
        f'blocked-fix: {{answer: defer, item: {retry}, reason: "the vendor API is not reachable from CI"}}\n'
    )
    code, out, err = _run(["gate", "round-continue", str(f), "--answers", str(p), "--json", "--auto-entry"], capsys)
    assert code == 0, err
    obj = json.loads(out)
    assert obj["gate"] == "round-continue" and obj["round_decision"] == "stop"
    assert [r["gate"] for r in obj["replayed"]] == ["entry", "triage", "blocked-fix"]
    assert [e.gate_id for e in _entries(f)] == ["entry", "triage", "blocked-fix", "round-continuation"]
    with FeatureSession.open(f, read_only=True) as s:
        assert s.decisions[retry].blocked_outcome == "reclassify_as_defer"


def test_entry_default_skip_is_confirmed_without_a_reason(tmp_path):
    from tests.factories import report, write_feature

    f = write_feature(
        tmp_path,
        {"task-1-scar.yaml": report("task-1", ks=['description: "One small shortcut"'])},
        files={"index.yaml": "feature: small\n"},
    )
    ev = gates.gather("entry", f)
    assert dict(ev.figures)["entry verdict"] == "skip" and ev.default == "skip"
    res = gates.record(ev, "skip", None, user=USER)
    assert res.decision == "accept_gap" and res.reason is None
    record = yaml.safe_load((f / "index.yaml").read_text())["iteration_skip_record"]
    assert record.startswith("signal_lost=1") and record.endswith(f"— confirmed by {USER}")
    assert gates.GATES["entry"].prompt.startswith("Iteration entry: signal_lost={signal_lost}")


# ---------------------------------------------------------------- auto-decisions entries: when, how many


def test_no_auto_entry_in_auto_mode_writes_none_and_auto_entry_is_samsara_only(tmp_path, capsys):
    f = samsara_feature(tmp_path / "a", auto=True)
    _open_round(f)
    argv = ["gate", "round-continue", str(f), "--answer", "continue", "--no-auto-entry", "--json"]
    code, out, _ = _run(argv, capsys)
    assert code == 0 and json.loads(out)["recorded"] == ["iteration-log.yaml", ".scars/journal.jsonl"]
    assert not (f / "auto-decisions.md").exists()
    from tests.factories import loop_spec_feature

    d = loop_spec_feature(tmp_path / "b")
    code, _, err = _run(
        ["gate", "spec", str(d), "--answer", "reopen", "--reason", "the spec never defines offline", "--no-auto-entry"],
        capsys,
    )
    assert code == 2 and "apply to samsara gates" in err


def test_round_continue_at_max_rounds_is_the_safety_valves_forced_stop(tmp_path):
    f = samsara_feature(tmp_path, auto=True)
    _flat_rounds(f, 2)
    _open_round(f)
    ev = gates.gather("round-continue", f)  # asked by the round-continue name …
    assert ev.gate.id == "safety-valve" and ev.facts["valves"][0] == "max_rounds"
    res = gates.record(ev, "stop", None, user=USER)
    assert res.extra["round_decision"] == "forced_stop"  # … it is the safety valve's decision point
    assert _log(f)["rounds"][-1]["decision"] == "forced_stop"
    assert [e.gate_id for e in _entries(f)][-1] == "safety-valve"


def test_the_triage_entry_is_written_once_per_triage(tmp_path, capsys):
    f = samsara_feature(tmp_path, auto=True)
    retry = item_id(f, "Retry count is hard-coded to 3")
    tz = item_id(f, "Timezone-naive timestamps compare as UTC")
    _open_round(f, (retry, "fix"))
    p = _answers(tmp_path, f, {tz: {"action": "defer", "reason": "needs the scheduler rework"}})
    assert _run(["gate", "triage", str(f), "--answers", str(p)], capsys)[0] == 0
    # the blocked-fix outcome is its own decision point: no second triage entry before it
    argv = ["gate", "blocked-fix", str(f), "--item", retry, "--answer", "retry", "--reason", "the SDK docs arrived"]
    assert _run(argv, capsys)[0] == 0
    assert [e.gate_id for e in _entries(f)] == ["triage", "blocked-fix"]
    with FeatureSession.open(f, user=USER) as s:  # a triage decision after the triage entry …
        s.decide(item_id(f, "Config is UTF-8"), "defer", reason="not this feature")
    assert _run(["gate", "round-continue", str(f), "--answer", "continue"], capsys)[0] == 0
    # … is recorded by a new triage entry before the round's own
    assert [e.gate_id for e in _entries(f)] == ["triage", "blocked-fix", "triage", "round-continuation"]
    assert "defer 2" in _entries(f)[2].fields["gatekeeper_answer"]


def test_scars_decide_blocked_is_the_blocked_fix_gate(tmp_path, capsys):
    f = samsara_feature(tmp_path, auto=True)
    retry = item_id(f, "Retry count is hard-coded to 3")
    _open_round(f, (retry, "fix"))
    code, _, err = _run(["decide", retry, "--blocked", "retry", "--feature", str(f)], capsys)
    assert code == 4 and "needs a reason" in err  # as the gate: the context of the retry is the reason
    argv = ["decide", retry, "--blocked", "reclassify", "--reason", "vendor API unreachable", "--feature", str(f)]
    assert _run(argv, capsys)[0] == 0
    assert [e.gate_id for e in _entries(f)] == ["triage", "blocked-fix"]  # one blocked-fix entry, not two
    with FeatureSession.open(f, read_only=True) as s:
        assert s.decisions[retry].blocked_outcome == "reclassify_as_defer"


def test_a_round_started_without_its_signal_takes_the_series_point_before_it(tmp_path):
    from scars.core.samsara.feature import read_feature
    from scars.core.samsara.rounds import round_figures, signal_before_round

    f = samsara_feature(tmp_path)
    (f / "iteration-log.yaml").write_text(
        "feature: demo\nsignal_lost_initial: 9\nrounds:\n  - round: 1\n    signal_lost_before: 9\n"
        "    signal_lost_after: 7\n    decision: continue\n    decision_reason: one more\n",
        encoding="utf-8",
    )
    feature = read_feature(f)
    assert round_figures(feature, {"round": 2, "signal_lost_before": 6}, {}).signal_lost_before == 6  # recorded
    fig = round_figures(feature, {"round": 2}, {})  # a round_start record without it
    assert fig.signal_lost_before == signal_before_round(feature.iteration_log, 2, feature.signal_lost) == 7
