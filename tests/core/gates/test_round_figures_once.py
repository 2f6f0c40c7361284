"""A round gate's figures are computed once per answer (issue 30): `scars gate round-continue
--answer B` gathers them, and its record and the round's close use those very figures while what
they were computed from holds — the files (the feature cache's token: the Feature stored from
them), the round's start, its triage and the decisions. A file changed in between is read again
and the round written from it, as before."""

from __future__ import annotations

import pytest
import yaml

from scars.core import gates
from scars.core.samsara import session as session_module
from scars.core.samsara.session import FeatureSession
from scars.core.storage import cache
from scars.tui.cli import main as cli
from tests.factories import ACCEPT, clean_env, item_id, resolve_in_report, samsara_feature

REASON = "the fix needs the vendor SDK; the other four are cross-feature"


@pytest.fixture(autouse=True)
def _env(tmp_path, monkeypatch):
    clean_env(monkeypatch)
    monkeypatch.setenv("SCARS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SCARS_NO_CACHE", raising=False)
    # The files just written are stored at once (no racy window to wait out): every change these
    # tests make is a rewrite of another size, which the fingerprint sees whatever the clock says.
    monkeypatch.setattr(cache, "RACY_NS", 0)


@pytest.fixture
def counted(monkeypatch):
    """Every computation of a round's figures, counted."""
    calls: list[int] = []
    real = session_module.round_figures

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(session_module, "round_figures", counting)
    return calls


def _round_with_a_landed_fix(tmp_path):
    f = samsara_feature(tmp_path)
    with FeatureSession.open(f, user="alice") as s:
        s.start_round()
        s.decide(item_id(f, "Retry count is hard-coded to 3"), "fix")
    resolve_in_report(f, "Retry count is hard-coded to 3")
    return f


def _answer(f, *extra):
    return cli.main(["gate", "round-continue", str(f), "--answer", "B", "--reason", REASON, "--json", *extra])


def _round(f):
    [r] = yaml.safe_load((f / "iteration-log.yaml").read_text(encoding="utf-8"))["rounds"]
    return r


@pytest.mark.parametrize("auto_entry", [False, True])
def test_answering_the_round_gate_computes_its_figures_once(tmp_path, counted, capsys, auto_entry):
    f = _round_with_a_landed_fix(tmp_path)
    assert _answer(f, *(["--auto-entry"] if auto_entry else [])) == 0, capsys.readouterr().err
    assert len(counted) == 1
    r = _round(f)
    assert (r["decision"], r["signal_lost_before"], r["signal_lost_after"], r["fixes_applied"]) == ("stop", 5, 4, 1)


def test_a_report_changed_after_the_gate_was_gathered_is_read_again(tmp_path, counted, capsys, monkeypatch):
    """The fix lands while the question is open: the record computes the figures again from the
    reports as they are, and the round says so (fixed 1, 4 remaining), not what was shown."""
    f = samsara_feature(tmp_path)
    with FeatureSession.open(f, user="alice") as s:
        s.start_round()
        s.decide(item_id(f, "Retry count is hard-coded to 3"), "fix")
    real_record = gates.record

    def landing_first(evidence, *args, **kwargs):
        assert evidence.facts["fixed"] == 0  # what the gate showed
        resolve_in_report(f, "Retry count is hard-coded to 3")
        return real_record(evidence, *args, **kwargs)

    monkeypatch.setattr(gates, "record", landing_first)
    assert _answer(f) == 0, capsys.readouterr().err
    assert len(counted) == 2  # gathered, then once more from the changed report (the close reuses that)
    r = _round(f)
    assert (r["signal_lost_after"], r["fixes_applied"]) == (4, 1)


def test_a_report_changed_under_the_lock_before_the_close_is_read_again(tmp_path, counted, capsys, monkeypatch):
    """A file changed between the record's evidence and the round's close (an editor that takes no
    lock): the close reads the feature again, sees the change and writes the figures of the files."""
    f = samsara_feature(tmp_path)
    with FeatureSession.open(f, user="alice") as s:
        s.start_round()
        s.decide(item_id(f, "Retry count is hard-coded to 3"), "fix")
    real_refresh = FeatureSession._refresh_feature

    def landing_first(self):
        resolve_in_report(f, "Retry count is hard-coded to 3")
        real_refresh(self)

    monkeypatch.setattr(FeatureSession, "_refresh_feature", landing_first)
    assert _answer(f) == 0, capsys.readouterr().err
    assert len(counted) == 2  # gathered (and reused by the record), then again at the close
    r = _round(f)
    assert (r["signal_lost_after"], r["fixes_applied"]) == (4, 1)


def test_without_the_cache_nothing_says_the_files_are_unchanged(tmp_path, counted, capsys, monkeypatch):
    """With the cache off no Feature carries a token: the figures are computed at each step, as
    before (never reused on a guess)."""
    monkeypatch.setenv("SCARS_NO_CACHE", "1")
    f = _round_with_a_landed_fix(tmp_path)
    assert _answer(f) == 0, capsys.readouterr().err
    assert len(counted) == 3
    assert _round(f)["fixes_applied"] == 1


def test_a_decision_made_after_the_gate_was_gathered_is_counted(tmp_path, counted, capsys, monkeypatch):
    """Someone decides an item while the question is open (the journal moves; no feature file
    does): the record's figures are computed again and the round counts the accept."""
    f = _round_with_a_landed_fix(tmp_path)
    real_record = gates.record

    def deciding_first(evidence, *args, **kwargs):
        assert evidence.facts["accepted"] == 0
        with FeatureSession.open(f, user="bob") as s:
            s.decide(item_id(f, "Shared cache key"), "accept", **ACCEPT)
        return real_record(evidence, *args, **kwargs)

    monkeypatch.setattr(gates, "record", deciding_first)
    assert _answer(f) == 0, capsys.readouterr().err
    assert len(counted) == 2
    assert _round(f)["triage_result"]["accept"]
