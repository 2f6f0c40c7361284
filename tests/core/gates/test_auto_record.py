"""The auto-mode record (issue 29): the triage entry written when the triage is decided, with
the round's own counts, and checked against its round by `scars log verify`; the accept-ratio
watch counting the fixes that landed; a blocked-fix outcome in iteration-log.yaml; the round
before a switch to auto mode; the triage prompt preserved."""

from __future__ import annotations

import pytest
import yaml

from scars.core import gates
from scars.core.formats.auto_decisions import parse_auto_decisions
from scars.core.samsara.feature import read_feature
from scars.core.samsara.rounds import evaluate_valves
from scars.core.samsara.session import FeatureSession
from tests.factories import clean_env, item_id, resolve_in_report, run_cli, samsara_feature

USER = "alice"
ACCEPT = {"re_review_signal": "a non-UTF-8 config is reported", "owner": "config team", "rationale": "all generated"}
RETRY = "Retry count is hard-coded to 3"


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_env(monkeypatch)


def _log(feature):
    p = feature / "iteration-log.yaml"
    return yaml.safe_load(p.read_text(encoding="utf-8")) if p.is_file() else None


def _entries(feature):
    p = feature / "auto-decisions.md"
    return parse_auto_decisions(p.read_text(encoding="utf-8")) if p.is_file() else []


def _others(f):
    return [it.id for it in read_feature(f).items if it.counted and it.text != RETRY]


def _close(f, capsys, decision="stop", reason="the accepted rest waits for v2"):
    code, out, err = run_cli(["round", "close", "--decision", decision, "--reason", reason, "--feature", str(f)], capsys)
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
        {"description": "Config is UTF-8", "outcome": "retry_with_context", "reason": "the SDK docs came", "decided_by": USER},
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
