"""The auto-mode record (issue 29): the triage entry written when the triage is decided, with
the round's own counts, and checked against its round by `scars log verify`; the accept-ratio
watch counting the fixes that landed; a blocked-fix outcome in iteration-log.yaml; the round
before a switch to auto mode; the triage prompt preserved."""

from __future__ import annotations

import json

from scars.core.samsara.feature import read_feature
from scars.core.samsara.rounds import evaluate_valves
from scars.core.samsara.session import FeatureSession
from tests.core.gates.test_honest_round import _entries, _env, _log  # noqa: F401 (_env: the autouse fixture)
from tests.factories import item_id, resolve_in_report, run_cli, samsara_feature

USER = "alice"
ACCEPT = {"re_review_signal": "a non-UTF-8 config is reported", "owner": "config team", "rationale": "all generated"}
RETRY = "Retry count is hard-coded to 3"


def _others(f):
    return [it.id for it in read_feature(f).items if it.counted and it.text != RETRY]


def _close(f, capsys, decision="stop", reason="the accepted rest waits for v2"):
    code, out, err = run_cli(
        ["round", "close", "--decision", decision, "--reason", reason, "--feature", str(f)], capsys
    )
    assert code == 0, err
    return out


# ---------------------------------------------------------------- the accept-ratio watch


def _ratio(f):
    with FeatureSession.open(f, user=USER, read_only=True) as s:
        return next(v for v in evaluate_valves(s.feature, s.decisions) if v.id == "accept_ratio")


def test_a_fix_that_landed_is_a_fix_for_the_accept_ratio(tmp_path, capsys):
    f = samsara_feature(tmp_path, auto=True)
    with FeatureSession.open(f, user=USER) as s:
        s.start_round()
        s.decide(item_id(f, RETRY), "fix")
        s.decide_many(_others(f), "accept", **ACCEPT)
    resolve_in_report(f, RETRY)  # the fix landed: its item left the remaining set
    v = _ratio(f)
    assert not v.active and v.figures["fix"] == 1 and v.figures["fixes_applied"] == 1
    assert v.message == "4 of 5 triaged items accepted (80%), 1 fixes."
    _close(f, capsys)
    assert "cargo-cult" not in (f / "auto-decisions.md").read_text(encoding="utf-8")


def test_accepting_all_with_no_fix_still_fires_and_is_recorded(tmp_path, capsys):
    f = samsara_feature(tmp_path, auto=True)
    with FeatureSession.open(f, user=USER) as s:
        s.start_round()
        s.decide_many([item_id(f, RETRY), *_others(f)], "accept", **ACCEPT)
    v = _ratio(f)
    assert v.active and v.message == "5 of 5 triaged items accepted (100%) with zero fixes: cargo-cult triage?"
    _close(f, capsys)
    assert "cargo-cult triage?" in (f / "auto-decisions.md").read_text(encoding="utf-8")


# ---------------------------------------------------------------- blocked-fix outcomes in the log


def test_a_blocked_fix_outcome_is_logged_with_its_round(tmp_path, capsys):
    f = samsara_feature(tmp_path, auto=True)
    retry, utf8 = item_id(f, RETRY), item_id(f, "Config is UTF-8")
    with FeatureSession.open(f, user=USER) as s:
        s.start_round()
        s.decide(retry, "fix")
        s.decide(utf8, "fix")
    for item, answer, why in ((retry, "b", "the vendor API is unreachable from CI"), (utf8, "a", "the SDK docs came")):
        argv = ["gate", "blocked-fix", str(f), "--item", item, "--answer", answer, "--reason", why]
        assert run_cli(argv, capsys)[0] == 0
    _close(f, capsys)
    [r] = _log(f)["rounds"]
    assert r["blocked_fixes"] == [
        {
            "description": RETRY,
            "outcome": "reclassify_as_defer",
            "reason": "the vendor API is unreachable from CI",
            "decided_by": USER,
        },
        {
            "description": "Config is UTF-8",
            "outcome": "retry_with_context",
            "reason": "the SDK docs came",
            "decided_by": USER,
        },
    ]
    assert r["triage_result"]["defer"] == [RETRY] and r["triage_result"]["fix"] == ["Config is UTF-8"]
    code, out, _ = run_cli(["log", "verify", str(f)], capsys)
    assert code == 0, out  # the loop's reading tolerates the key: scars' own verify included


def test_an_undone_blocked_fix_outcome_is_not_logged(tmp_path, capsys):
    f = samsara_feature(tmp_path)
    retry = item_id(f, RETRY)
    with FeatureSession.open(f, user=USER) as s:
        s.start_round()
        s.decide(retry, "fix")
        s.record_blocked_fix(retry, "reclassify_as_defer", "the vendor API is unreachable")
        s.undo()
        s.close_round("stop", "nothing else this round")
    [r] = _log(f)["rounds"]
    assert "blocked_fixes" not in r and r["triage_result"]["fix"] == [RETRY]


# ---------------------------------------------------------------- the triage entry, when decided


def _decide(f, capsys, ids, *flags):
    code, _, err = run_cli(["decide", *ids, *flags, "--feature", str(f)], capsys)
    assert code == 0, err


def _accept_flags():
    flags = {"--signal": "re_review_signal", "--owner": "owner", "--rationale": "rationale"}
    return ["--accept", *(x for flag, key in flags.items() for x in (flag, ACCEPT[key]))]


def _verify(f, capsys):
    code, out, _ = run_cli(["log", "verify", str(f), "--json"], capsys)

    return code, json.loads(out)


def test_the_triage_entry_is_written_when_the_last_item_is_classified(tmp_path, capsys):
    """Seed 002: the gatekeeper's triage is recorded before the classification is applied — so at
    the `scars decide` that classifies the round's last item, not at the next gate."""
    f = samsara_feature(tmp_path, auto=True)
    retry, others = item_id(f, RETRY), _others(f)
    _decide(f, capsys, [retry], "--fix")
    _decide(f, capsys, others[:-1], *_accept_flags())
    assert _entries(f) == []  # still being classified: no entry yet
    _decide(f, capsys, others[-1:], *_accept_flags())
    [e] = _entries(f)  # there now, before any fix is applied or gate answered
    assert e.gate_id == "triage"
    assert e.fields["gatekeeper_answer"].startswith(
        "Triage recorded: round 1: fix 1, accept 4, defer 0 (5 items remaining)"
    )
    resolve_in_report(f, RETRY)  # the fix lands
    _close(f, capsys)
    assert [x.gate_id for x in _entries(f)] == ["triage", "round-continuation"]  # not written twice
    [r] = _log(f)["rounds"]
    assert (len(r["triage_result"]["fix"]), len(r["triage_result"]["accept"]), r["fixes_applied"]) == (1, 4, 1)
    assert _verify(f, capsys)[1]["outcome"] != "failure"


def test_a_human_mode_decision_writes_no_triage_entry(tmp_path, capsys):
    f = samsara_feature(tmp_path)
    _decide(f, capsys, [item_id(f, RETRY)], "--fix")
    _decide(f, capsys, _others(f), *_accept_flags())
    assert not (f / "auto-decisions.md").exists()


def test_the_app_writes_the_triage_entry_when_its_triage_is_decided(tmp_path):
    from scars.tui.app.backend import Backend

    f = samsara_feature(tmp_path, auto=True)
    b = Backend.open(f, user=USER)
    try:
        others = _others(f)
        b.decide_many(others[:3], "accept", **ACCEPT)
        b.decide(item_id(f, RETRY), "defer", reason="the scheduler rework comes first")
        assert _entries(f) == []
        b.decide_many(others[3:], "accept", **ACCEPT)
        [e] = _entries(f)
        assert "round 1: fix 0, accept 4, defer 1" in e.fields["gatekeeper_answer"]
        b.decide(item_id(f, RETRY), "fix")  # the triage changed after its entry: a new one
        e = _entries(f)[-1]
        assert "round 1: fix 1, accept 4, defer 0" in e.fields["gatekeeper_answer"]
    finally:
        b.session.close()


def test_a_later_rounds_triage_entry_counts_that_round_only(tmp_path, capsys):
    """Round 2's entry says round 2's classification, not the remaining items' decisions summed
    over the rounds (issue 29: "fix 0, accept 10, defer 2" beside fix 1 / accept 9 / defer 0)."""
    f = samsara_feature(tmp_path, auto=True)
    tz = item_id(f, "Timezone-naive timestamps compare as UTC")
    rest = [i for i in _others(f) if i != tz]
    _decide(f, capsys, [item_id(f, RETRY)], "--fix")
    _decide(f, capsys, [tz], "--defer", "--reason", "needs the scheduler rework")
    _decide(f, capsys, rest, *_accept_flags())
    resolve_in_report(f, RETRY)
    _close(f, capsys, "continue", "the deferred item can be decided now")
    _decide(f, capsys, [tz], *_accept_flags())  # the round's only decision; the 3 accepts carry
    e = _entries(f)[-1]
    assert e.gate_id == "triage"
    assert e.fields["gatekeeper_answer"].startswith("Triage recorded: round 2: fix 0, accept 1, defer 0")
    _close(f, capsys)
    r2 = _log(f)["rounds"][1]
    assert (len(r2["triage_result"]["fix"]), len(r2["triage_result"]["accept"]), len(r2["triage_result"]["defer"])) == (
        0,
        1,
        0,
    )
    assert _verify(f, capsys)[1]["outcome"] != "failure"


def test_log_verify_catches_a_triage_entry_that_disagrees_with_its_round(tmp_path, capsys):
    f = samsara_feature(tmp_path, auto=True)
    _decide(f, capsys, [item_id(f, RETRY)], "--fix")
    _decide(f, capsys, _others(f), *_accept_flags())
    resolve_in_report(f, RETRY)
    _close(f, capsys)
    ad = f / "auto-decisions.md"
    text = ad.read_text(encoding="utf-8")
    assert _verify(f, capsys)[1]["outcome"] != "failure"
    # the old summed-over-the-rounds figure: the fix that landed left the remaining set
    ad.write_text(text.replace("round 1: fix 1, accept 4, defer 0", "round 1: fix 0, accept 4, defer 0"), "utf-8")
    code, out = _verify(f, capsys)
    assert code == 1
    assert any(
        "(iteration.triage) says fix 0, accept 4, defer 0 but iteration-log.yaml round 1 triaged fix 1, accept 4, "
        "defer 0" in x["message"]
        for x in out["reasons"]
    )
    # a hand-written answer naming no round: matched to the round whose continuation follows it
    ad.write_text(text.replace("round 1: fix 1, accept 4, defer 0", "fix 1, accept 3, defer 1"), "utf-8")
    code, out = _verify(f, capsys)
    assert code == 1 and any("round 1 triaged fix 1, accept 4, defer 0" in x["message"] for x in out["reasons"])


def test_a_blocked_fix_reclassified_after_the_triage_entry_is_no_disagreement(tmp_path, capsys):
    f = samsara_feature(tmp_path, auto=True)
    retry = item_id(f, RETRY)
    _decide(f, capsys, [retry], "--fix")
    _decide(f, capsys, _others(f), *_accept_flags())
    _decide(f, capsys, [retry], "--blocked", "reclassify", "--reason", "the vendor API is unreachable from CI")
    _close(f, capsys)
    [r] = _log(f)["rounds"]
    assert r["triage_result"]["defer"] == [RETRY]  # the entry said fix 1: the blocked-fix entry says why not
    assert _verify(f, capsys)[1]["outcome"] != "failure"


# ---------------------------------------------------------------- switched to auto mode


def _switch_to_auto(f):
    (f / "pre-thinking.md").write_text("# Pre-thinking\n\nExecution mode: auto\n", encoding="utf-8")


def test_a_round_from_before_the_switch_to_auto_mode_is_a_note(tmp_path, capsys):
    f = samsara_feature(tmp_path)  # human mode
    _decide(f, capsys, [item_id(f, RETRY)], "--fix")
    resolve_in_report(f, RETRY)
    _close(f, capsys, "continue", "the rest next round")
    _switch_to_auto(f)
    _decide(f, capsys, _others(f), *_accept_flags())
    _close(f, capsys)
    code, out = _verify(f, capsys)
    assert not [x for x in out["reasons"] if "round 1" in x["message"]], out["reasons"]
    assert any("round 1 (continue) was decided before the feature went auto" in x["message"] for x in out["notes"])


def test_an_auto_round_without_its_entry_still_fails(tmp_path, capsys):
    f = samsara_feature(tmp_path, auto=True)
    _decide(f, capsys, [item_id(f, RETRY)], "--fix")
    resolve_in_report(f, RETRY)
    _close(f, capsys, "continue", "the rest next round")
    _decide(f, capsys, _others(f), *_accept_flags())
    _close(f, capsys)
    ad = f / "auto-decisions.md"
    entries = _entries(f)
    assert [e.gate_id for e in entries] == ["triage", "round-continuation", "triage", "round-continuation"]
    lines = ad.read_text(encoding="utf-8").splitlines(keepends=True)
    # round 1's continuation entry taken out (the numbering gap is a failure of its own)
    ad.write_text("".join(lines[: entries[1].line - 1] + lines[entries[2].line - 1 :]), encoding="utf-8")
    code, out = _verify(f, capsys)
    assert code == 1
    assert any("round 1 (continue) has no round-continuation" in x["message"] for x in out["reasons"])
    assert not any("before the feature went auto" in x["message"] for x in out["notes"])


# ---------------------------------------------------------------- the prompt preserved


LONG = (
    "The export retries a failed upload three times with a fixed one-second sleep, so a "
    "rate-limited bucket fails the whole export after three seconds without saying it was throttled"
)


def _folded_feature(tmp_path):
    from tests.factories import report, write_feature

    folded = "description: >\n  " + LONG[:80] + "\n  " + LONG[81:]  # a folded scalar: ends in a newline
    return write_feature(
        tmp_path,
        {"task-1-scar.yaml": report("task-1", ks=[folded, 'description: "Shared cache key"'])},
        files={"pre-thinking.md": "# Pre-thinking\n\nExecution mode: auto\n"},
    )


def test_the_triage_entry_keeps_every_item_text_whole(tmp_path, capsys):
    f = _folded_feature(tmp_path)
    items = read_feature(f).items
    long = next(it for it in items if it.text.startswith("The export"))
    assert long.text == LONG + "\n"  # as the report's folded scalar says it
    _decide(f, capsys, [long.id], "--fix")
    _decide(f, capsys, [it.id for it in items if it.id != long.id], "--defer", "--reason", "the cache rework")
    [e] = _entries(f)
    prompt = e.fields["workflow_prompt"]
    assert f"  - {LONG}\n" in prompt and "…" not in prompt  # not cut at 120 characters
    _decide(f, capsys, [long.id], "--blocked", "reclassify", "--reason", "the bucket is not reachable from CI")
    blocked = _entries(f)[-1]
    assert f'Fix item "{LONG}" 被 implementer' in blocked.fields["workflow_prompt"]
    _close(f, capsys)
    [r] = _log(f)["rounds"]
    assert r["triage_result"]["defer"][0] == LONG  # no trailing newline from the folded scalar
    assert r["blocked_fixes"][0]["description"] == LONG
    assert all(t["description"] == t["description"].strip() for t in r["triaged_by"])
