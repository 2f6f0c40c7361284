"""The one rule of when a round opens (issue 27 §3; README "When a round opens"), in core:
a decision made while no round is open opens the next one — marked as opened by a decision, so
an undo that leaves it holding nothing takes its start back — unless the iteration stopped, where
going on is an explicit round start; past max_rounds only with the valve's override."""

from __future__ import annotations

import json

import pytest

from scars.core.errors import DecisionRefused, IterationStopped
from scars.core.samsara.decisions import replay
from scars.core.samsara.session import FeatureSession
from scars.core.storage.journal import journal_path, read_journal
from tests.factories import ACCEPT, item_id, samsara_feature

REASON = "the rest is accepted with owners"


@pytest.fixture
def feature(tmp_path):
    return samsara_feature(tmp_path)


def ids(feature) -> tuple[str, str, str]:
    return (
        item_id(feature, "Retry count is hard-coded to 3"),
        item_id(feature, "Config is UTF-8"),
        item_id(feature, "Timezone-naive timestamps compare as UTC"),
    )


def journal_bytes(feature) -> bytes:
    p = journal_path(feature)
    return p.read_bytes() if p.is_file() else b""


def closed(feature, decision: str, reason: str = REASON, **fields) -> None:
    """Round 1 opened explicitly and closed with ``decision``."""
    with FeatureSession.open(feature, user="alice") as s:
        s.start_round()
        s.close_round(decision, reason, **fields)


def test_a_decision_with_no_round_open_opens_the_next_one_first(feature):
    a, b, _ = ids(feature)
    with FeatureSession.open(feature, user="alice") as s:
        assert s.current_round() is None
        s.decide(a, "fix")
        assert s.current_round() == 1
        s.decide(b, "accept", **ACCEPT)  # the round is open: no second start
        kinds = [(r["type"], r.get("round"), r.get("opened_by")) for r in s.records]
    assert kinds == [("round_start", 1, "decision"), ("decision", 1, None), ("decision", 1, None)]


def test_a_batch_opens_the_round_as_one_decision_does(feature):
    a, b, _ = ids(feature)
    with FeatureSession.open(feature, user="alice") as s:
        s.decide_many([a, b], "defer", reason="needs the v2 API")
        assert [r["type"] for r in s.records] == ["round_start", "decision"]


def test_a_refused_decision_opens_no_round(feature):
    a, b, _ = ids(feature)
    with FeatureSession.open(feature, user="alice") as s:
        with pytest.raises(DecisionRefused):
            s.decide(a, "accept", owner="tbd")
        assert s.current_round() is None
        with pytest.raises(DecisionRefused):
            s.decide_many([a, b], "accept", owner="tbd")
        assert s.current_round() is None
    assert journal_bytes(feature) == b"" or read_journal(journal_path(feature)).records == []


@pytest.mark.parametrize("decision", ["stop", "forced_stop"])
def test_after_a_stop_a_decision_is_refused_until_the_round_is_started_explicitly(feature, decision):
    a, _, _ = ids(feature)
    closed(feature, decision, "max rounds reached and the rest is owned" if decision == "forced_stop" else REASON)
    before = journal_bytes(feature)
    with FeatureSession.open(feature, user="alice") as s:
        assert s.stopped() == (1, decision)
        with pytest.raises(IterationStopped) as exc:
            s.decide(a, "fix")
        assert (exc.value.round, exc.value.decision, exc.value.exit_code) == (1, decision, 4)
        assert f"stopped after round 1 ({decision})" in str(exc.value) and "`scars round start`" in str(exc.value)
        with pytest.raises(IterationStopped):
            s.decide_many([a], "fix")
        assert journal_bytes(feature) == before  # nothing written
        s.start_round()  # the explicit way on
        assert s.stopped() is None
        s.decide(a, "fix")
        assert s.current_round() == 2 and "opened_by" not in s.open_round()


@pytest.mark.parametrize("decision", ["continue", "interrupted"])
def test_a_round_that_did_not_stop_the_iteration_lets_a_decision_open_the_next(feature, decision):
    a, _, _ = ids(feature)
    closed(feature, decision, "the next item is actionable now")
    with FeatureSession.open(feature, user="alice") as s:
        assert s.stopped() is None
        s.decide(a, "fix")
        assert s.current_round() == 2 and s.open_round()["opened_by"] == "decision"


def test_stopped_reads_the_latest_round_of_the_log_and_the_journal(feature):
    (feature / "iteration-log.yaml").write_text(
        "feature: demo\nsignal_lost_initial: 5\nbudget:\n  max_rounds: 3\n  reviewer_retry_limit: 2\n"
        "rounds:\n  - round: 1\n    decision: stop\n    decision_reason: a loop's own stop\n",
        encoding="utf-8",
    )
    with FeatureSession.open(feature, user="alice") as s:
        assert s.stopped() == (1, "stop")  # a stop the loop recorded, with no journal at all
        s.start_round()
        assert s.stopped() is None  # a round is open
        s.close_round("continue", "the next item is actionable now")
        assert s.stopped() is None  # round 2 (the journal's and the log's latest) continued


def test_past_max_rounds_the_decision_needs_the_valves_override(feature):
    a, b, _ = ids(feature)
    for _ in range(3):
        with FeatureSession.open(feature, user="alice") as s:
            s.start_round(override_max_rounds=None)
            s.close_round("continue", "the next item is actionable now")
    before = journal_bytes(feature)
    with FeatureSession.open(feature, user="alice") as s:
        with pytest.raises(DecisionRefused) as exc:
            s.decide(a, "fix")
        assert [e.field for e in exc.value.errors] == ["override_max_rounds"]
        assert "round 4 would pass max_rounds 3" in str(exc.value)
        assert journal_bytes(feature) == before
        s.decide(a, "fix", override_max_rounds="the owner asked for one last fix")
        assert s.open_round()["valve_override"]["reason"] == "the owner asked for one last fix"
        s.decide(b, "fix")  # the round is open: no override asked again


def test_undoing_all_a_round_opened_by_a_decision_holds_takes_its_start_back(feature):
    a, b, c = ids(feature)
    with FeatureSession.open(feature, user="alice") as s:
        s.decide(a, "fix")
        s.decide(b, "accept", **ACCEPT)
        start = s.open_round()["seq"]
        assert s.undo() == [b]
        assert s.current_round() == 1  # a still holds it
        assert s.undo() == [a]
        assert s.current_round() is None
        assert s.records[-1]["withdraws_round"] == start
        assert s.records[-2].get("withdraws_round") is None
    with FeatureSession.open(feature, user="alice") as s:  # replayed from disk: the same
        assert s.current_round() is None and s.next_round_number() == 1
        s.decide(c, "fix")  # the next decision opens round 1 again (the number is not spent)
        assert s.current_round() == 1


def test_undo_item_of_one_of_two_decisions_keeps_the_round(feature):
    a, b, _ = ids(feature)
    with FeatureSession.open(feature, user="alice") as s:
        s.decide(a, "fix")
        s.decide(b, "fix")
        assert s.undo_item(a) == [a]
        assert s.current_round() == 1
        assert s.undo_item(b) == [b]  # now empty: withdrawn
        assert s.current_round() is None


def test_a_round_started_explicitly_stays_open_after_every_undo(feature):
    a, _, _ = ids(feature)
    with FeatureSession.open(feature, user="alice") as s:
        s.start_round()
        s.decide(a, "fix")
        s.undo()
        assert s.current_round() == 1
        assert "withdraws_round" not in s.records[-1]


def test_a_round_holding_anything_else_stays_open(feature):
    """A gate answer recorded in the round is something the round holds: the undo of its only
    decision keeps it."""
    a, _, _ = ids(feature)
    with FeatureSession.open(feature, user="alice") as s:
        s.decide(a, "fix")
        s.record_gate_answer("triage", "done", None)
        s.undo()
        assert s.current_round() == 1


def test_a_withdrawal_the_replay_cannot_trust_changes_nothing(feature):
    """A journal is untrusted input: an undo naming another record, or `true` (which equals 1),
    withdraws no round."""
    a, _, _ = ids(feature)
    with FeatureSession.open(feature, user="alice") as s:
        s.decide(a, "fix")
        records = [dict(r) for r in s.records]
    start = records[0]["seq"]
    for bad in (True, start + 1, str(start), None):
        undo = {"type": "undo", "seq": 99, "target": 98, "items": [], "withdraws_round": bad}
        assert replay([*records, undo]).open_round is not None, bad
    assert replay([*records, {**undo, "withdraws_round": start}]).open_round is None


def test_the_journal_says_which_round_a_decision_opened(feature):
    """The record as written: the round start first, marked, then the decision in that round."""
    a, _, _ = ids(feature)
    with FeatureSession.open(feature, user="alice") as s:
        s.decide(a, "fix")
    lines = [json.loads(ln.split(" ", 1)[1]) for ln in journal_path(feature).read_text().splitlines()]
    assert [(r["type"], r["round"]) for r in lines] == [("round_start", 1), ("decision", 1)]
    assert lines[0]["opened_by"] == "decision"


def test_the_round_a_decision_opens_starts_from_the_feature_it_is_made_on(feature, monkeypatch):
    """No second read of every report before the first decision of a round (bench: decision save
    p99 ≤ 10 ms); an explicit start reads them again (it may come long after the session opened)."""
    import scars.core.samsara.session as session_module

    a, b, _ = ids(feature)
    reads: list = []
    real = session_module._read_feature
    monkeypatch.setattr(session_module, "_read_feature", lambda *args, **kw: reads.append(args) or real(*args, **kw))
    with FeatureSession.open(feature, user="alice") as s:
        opened = len(reads)
        s.decide(a, "fix")
        assert len(reads) == opened
        assert s.open_round()["signal_lost_before"] == s.feature.signal_lost
        assert s.open_round()["item_ids"] == [i.id for i in s.feature.items if i.counted]
        s.undo()
        s.start_round()
        assert len(reads) == opened + 1
