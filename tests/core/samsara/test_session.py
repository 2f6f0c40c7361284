"""FeatureSession: decisions, batches, undo, sign-off, blocked fixes, rounds, resume, lock."""

from __future__ import annotations

import pytest
import yaml

from scars.core.errors import ChangedOnDisk, DecisionRefused, LockHeld, UsageError
from scars.core.formats.auto_decisions import parse_auto_decisions
from scars.core.samsara.session import FeatureSession
from scars.core.storage.journal import journal_path, read_journal
from tests.factories import ACCEPT, add_report, csv_feature, decision_entry


@pytest.fixture
def feature(tmp_path):
    return csv_feature(tmp_path)


def ids(session):
    return [i.id for i in session.feature.items]


def test_decide_is_durable_and_resumes(feature):
    with FeatureSession.open(feature) as s:
        a, b, c, d = ids(s)
        s.decide(a, "fix")
        s.decide(b, "accept", **ACCEPT)
        s.decide(c, "defer", reason="waiting for the tz library", revisit_when="v2")
        state = s.decisions
    with FeatureSession.open(feature) as s2:
        assert s2.decisions == state
        assert s2.decisions[b].owner == "export team"
        assert s2.decisions[b].decided_by == "test-user"
        assert s2.decisions[c].revisit_when == "v2"


def test_refused_accept_names_the_field_and_writes_nothing(feature):
    with FeatureSession.open(feature) as s:
        a = ids(s)[0]
        with pytest.raises(DecisionRefused) as info:
            s.decide(a, "accept", **dict(ACCEPT, owner="  n/a "))
        assert [e.field for e in info.value.errors] == ["owner"]
        assert "owner" in str(info.value)
        with pytest.raises(DecisionRefused, match="no item .ks-0000000000"):
            s.decide("ks-0000000000", "fix")
        assert s.decisions == {}
    assert not journal_path(feature).exists() or journal_path(feature).read_bytes() == b""


def test_batch_is_undone_as_one(feature):
    with FeatureSession.open(feature) as s:
        a, b, c, d = ids(s)
        s.decide(a, "fix")
        batch = s.decide_many([b, c, b], "defer", reason="next quarter")
        assert [x.item_id for x in batch] == [b, c]
        assert batch[0].batch_id and batch[0].batch_id == batch[1].batch_id
        assert sorted(s.undo()) == sorted([b, c])
        assert set(s.decisions) == {a}
        assert s.undo() == [a]
        assert s.undo() == []
    with FeatureSession.open(feature) as s:
        assert s.decisions == {}


def test_undo_restores_the_previous_decision_and_history(feature):
    with FeatureSession.open(feature) as s:
        a = ids(s)[0]
        s.decide(a, "fix")
        s.decide(a, "defer", reason="blocked by the API")
        assert [h["action"] for h in s.history(a)] == ["fix"]
        assert s.undo() == [a]
        assert s.decisions[a].action == "fix"


def test_sign_off_needs_a_second_person(feature):
    with FeatureSession.open(feature, user="alice") as s:
        a = ids(s)[0]
        s.decide(a, "accept", **ACCEPT)
        with pytest.raises(DecisionRefused, match="second person"):
            s.sign_off(a, "Alice")
        assert s.sign_off(a, "bob").reviewed_by == "bob"
        assert s.undo() == [a]
        assert s.decisions[a].reviewed_by is None


def test_blocked_fix_outcomes(feature):
    with FeatureSession.open(feature) as s:
        a, b = ids(s)[:2]
        with pytest.raises(DecisionRefused, match="decided fix"):
            s.record_blocked_fix(a, "retry_with_context")
        s.decide(a, "fix")
        s.decide(b, "fix")
        assert s.record_blocked_fix(a, "retry_with_context").blocked_outcome == "retry_with_context"
        d = s.record_blocked_fix(b, "reclassify_as_defer", "needs a design decision")
        assert (d.action, d.reason, d.blocked_outcome) == ("defer", "needs a design decision", "reclassify_as_defer")
    with FeatureSession.open(feature) as s:
        assert s.decisions[b].action == "defer"


def test_second_writer_is_refused_and_read_only_works(feature):
    with FeatureSession.open(feature, user="alice") as s:
        s.decide(ids(s)[0], "fix")
        with pytest.raises(LockHeld) as info:
            FeatureSession.open(feature, user="bob")
        assert info.value.holder["user"] == "alice"
        with FeatureSession.open(feature, read_only=True) as ro:
            assert ro.lock_holder["user"] == "alice"
            assert ro.decisions == s.decisions
            with pytest.raises(UsageError, match="read-only"):
                ro.decide(ids(ro)[1], "fix")


def test_round_close_writes_the_seed_form(feature):
    with FeatureSession.open(feature) as s:
        a, b, c, d = ids(s)
        info = s.start_round()
        assert info["round"] == 1 and info["signal_lost_before"] == 4
        assert set(info["budget_context"]) == {
            "remaining_rounds_at_start",
            "stagnation_count_at_start",
            "net_rot_previous_round",
            "strategy_hint",
        }
        with pytest.raises(UsageError, match="already open"):
            s.start_round()
        s.decide(a, "fix")
        s.decide(b, "accept", **ACCEPT, watch="path-changed: src/export/**")
        s.decide(c, "defer", reason="later on")
        # the fix lands: item a resolved in its report, and a new scar item appears
        rpt = feature / "scar-reports" / "task-1-scar.yaml"
        rpt.write_text(
            rpt.read_text().replace(
                '  - description: "Retry count is hard-coded to 3"\n',
                '  - description: "Retry count is hard-coded to 3"\n    status: resolved\n    resolution: "configurable"\n',
            )
        )
        add_report(feature, "The new retry config is not validated")
        entry = s.close_round(
            "continue",
            "two items may still be actionable",
            evidence_gained=["death test"],
            budget_spent={"implementer_dispatches": 1},
        )
        assert s.current_round() is None
    log = yaml.safe_load((feature / "iteration-log.yaml").read_text())
    assert log["feature"] == "csv-export" and log["signal_lost_initial"] == 4
    assert log["budget"] == {"max_rounds": 3, "reviewer_retry_limit": 2}
    r = log["rounds"][0]
    assert list(r) == [
        "round",
        "signal_lost_before",
        "budget_context",
        "items_triaged",
        "triage_result",
        "fixes_applied",
        "fixes_scar_count",
        "budget_spent",
        "evidence_gained",
        "residual_risk",  # Rule 3: every round records all three
        "signal_lost_after",
        "decision",
        "decision_reason",
        "rule3_not_given",  # extra keys from here on (upstream readers ignore them)
        "counted_by",  # the figures are scars' recount
        "items_undecided",
        "undecided_outcome",
        "triaged_by",
    ]
    assert r["counted_by"] == "scars"
    # Rule 3: residual_risk was not given (no flag, no fix-round report): written as none, and said.
    assert (r["residual_risk"], r["rule3_not_given"]) == ([], ["residual_risk"])
    assert r["evidence_gained"] == ["death test"] and r["budget_spent"] == {"implementer_dispatches": 1}
    # The undecided items (d and the fix's new item) are carried to round 2, as the gate said; who
    # decided each item is kept.
    assert (r["items_undecided"], r["undecided_outcome"]) == (2, "carried to round 2: triaged there")
    assert [t["action"] for t in r["triaged_by"]] == ["fix", "accept", "defer"]
    assert all(t["decided_by"] == s.user for t in r["triaged_by"])
    assert r["triage_result"]["fix"] == ["Retry count is hard-coded to 3"]
    assert r["triage_result"]["accept"] == [
        {
            "description": "Only one writer at a time",
            **ACCEPT,
            "watch": "path-changed: src/export/**",
            "decided_by": s.user,
        }
    ]
    assert r["triage_result"]["defer"] == ["Timezone-naive timestamps compare as UTC"]
    assert (r["items_triaged"], r["fixes_applied"], r["fixes_scar_count"]) == (3, 1, 1)
    assert (r["signal_lost_before"], r["signal_lost_after"]) == (4, 4)  # one resolved, one new
    assert r["decision"] == "continue" and entry["round"] == 1
    with FeatureSession.open(feature) as s:
        info = s.start_round()
        assert info["round"] == 2
        assert s.round_triage() == {}  # decisions of round 1 are not re-reported
        assert s.undo() == []  # and cannot be undone any more
        before = (feature / "iteration-log.yaml").read_bytes()
        s.close_round("forced_stop", "the user stopped", trigger="stagnation")
    after = (feature / "iteration-log.yaml").read_bytes()
    assert after.startswith(before)
    r2 = yaml.safe_load(after)["rounds"][1]
    assert r2["decision"] == "forced_stop" and "stagnation" in r2["decision_reason"]


def test_round_close_refusals(feature):
    with FeatureSession.open(feature) as s:
        with pytest.raises(UsageError, match="no round is open"):
            s.close_round("stop", "done")
        s.start_round()
        with pytest.raises(DecisionRefused) as info:
            s.close_round("forced_stop", "we stopped")
        assert info.value.errors[0].field == "decision_reason"
        with pytest.raises(DecisionRefused):
            s.close_round("maybe", "x y")
        with pytest.raises(DecisionRefused):
            s.close_round("stop", "  ")
        assert s.current_round() == 1
    assert not (feature / "iteration-log.yaml").exists()


def test_round_survives_an_unwritable_log_and_is_flushed_later(feature):
    (feature / "iteration-log.yaml").write_text("feature: x\nrounds: {not: a list}\n")
    with FeatureSession.open(feature) as s:
        s.start_round()
        with pytest.raises(ChangedOnDisk, match="recorded in the journal"):
            s.close_round("stop", "nothing left to do")
        assert s.current_round() is None  # closed in the journal
    (feature / "iteration-log.yaml").unlink()
    with FeatureSession.open(feature) as s:  # reopening writes the pending round
        assert s.problems == []
    log = yaml.safe_load((feature / "iteration-log.yaml").read_text())
    assert [r["round"] for r in log["rounds"]] == [1]


FLOW_LOG = (
    'feature: "csv-export"\n'
    "signal_lost_initial: 4\n"
    "\n"
    "budget:\n"
    "  max_rounds: 3\n"
    "  reviewer_retry_limit: 2\n"
    "\n"
    # A flow-style list with odd spacing: no text insertion point, and load + dump would
    # normalise the spacing, so the canary refuses the ruamel rewrite.
    'rounds: [ {round: 1,  signal_lost_before: 4, signal_lost_after: 4, decision: continue,   decision_reason: "one more"} ]\n'
)


def test_canary_refuses_a_rewrite_and_keeps_the_round_in_the_journal(feature):
    from scars.core.samsara.decisions import feature_state

    log = feature / "iteration-log.yaml"
    log.write_text(FLOW_LOG, encoding="utf-8")
    before = log.read_bytes()
    with FeatureSession.open(feature) as s:
        s.start_round()
        number = s.current_round()
        assert number == 2
        with pytest.raises(ChangedOnDisk) as info:
            s.close_round("stop", "nothing left to do")
        message = str(info.value)
        assert "round 2 (stop): recorded in the journal" in message and "iteration-log.yaml NOT written" in message
        assert "load + dump is not byte-identical" in message and "scars will not rewrite it" in message
        assert s.current_round() is None  # closed: the round is durable in the journal
    assert log.read_bytes() == before  # not one byte rewritten
    closed = feature_state(feature).closed_rounds
    assert [r["round"] for r in closed] == [2]
    assert closed[0]["entry"]["decision"] == "stop"
    assert closed[0]["entry"]["decision_reason"] == "nothing left to do"
    # Reopening retries the flush, refuses again (reported, not raised) and still keeps both.
    with FeatureSession.open(feature) as s:
        assert any("round 2: recorded in the journal" in p for p in s.problems)
        with pytest.raises(ChangedOnDisk, match="not byte-identical"):
            s.flush()
    assert log.read_bytes() == before
    assert [r["round"] for r in feature_state(feature).closed_rounds] == [2]


def test_entries_ride_on_their_journal_record_and_are_written_once(tmp_path):
    feature = csv_feature(tmp_path, auto=True)
    md = feature / "auto-decisions.md"
    with FeatureSession.open(feature) as s:
        a, b = ids(s)[:2]
        s.start_round()
        s.decide(a, "fix")
        s.decide(b, "fix")
        s.record_blocked_fix(
            b, "reclassify_as_defer", "needs a design decision", entries=[decision_entry("blocked-fix", "B: defer it")]
        )
        s.close_round(
            "stop",
            "no fix-class items remain",
            entries=[
                decision_entry("triage", "T"),
                decision_entry("round-continuation", "Stop: no fix-class items remain"),
            ],
        )
        assert (
            s.append_auto_decision(
                decision_entry("round-continuation", "Continue: one more", supersedes=3), source="flag"
            )
            == 4
        )
        kinds = [(r["type"], [e["gate_id"] for e in r.get("entries", [])]) for r in s.records if r.get("entries")]
    assert kinds == [
        ("blocked_fix", ["blocked-fix"]),
        ("round_close", ["triage", "round-continuation"]),
        ("auto_decision", ["round-continuation"]),
    ]
    entries = parse_auto_decisions(md.read_text())
    assert [(e.number, e.gate_id) for e in entries] == [
        (1, "blocked-fix"),
        (2, "triage"),
        (3, "round-continuation"),
        (4, "round-continuation"),
    ]
    assert all(not e.problems for e in entries), [e.problems for e in entries]
    assert entries[3].fields["rationale"].startswith("supersedes decision-003")
    with FeatureSession.open(feature) as s:  # reopening adds nothing: the entries are there
        assert s.problems == []
    assert len(parse_auto_decisions(md.read_text())) == 4


def test_an_entry_refused_writes_nothing(tmp_path):
    feature = csv_feature(tmp_path, auto=True)
    with FeatureSession.open(feature) as s:
        s.start_round()
        with pytest.raises(DecisionRefused, match="gatekeeper_answer"):
            s.close_round("stop", "no fix-class items remain", entries=[decision_entry("round-continuation", "ok")])
        assert s.open_round() is not None and s.closed_rounds() == []
    assert not (feature / "auto-decisions.md").exists() and not (feature / "iteration-log.yaml").exists()


def test_auto_entries_lost_to_a_kill_are_written_on_reopen(tmp_path):
    feature = csv_feature(tmp_path, auto=True)
    with FeatureSession.open(feature) as s:
        s.start_round()
        s.decide(ids(s)[0], "fix")
        s.close_round(
            "forced_stop",
            "max rounds reached",
            entries=[decision_entry("triage", "T"), decision_entry("safety-valve", "S")],
        )
    md = feature / "auto-decisions.md"
    assert [e.gate_id for e in parse_auto_decisions(md.read_text())] == ["triage", "safety-valve"]
    md.write_text(md.read_text().split("## Decision 002")[0])  # as if the process died between the two
    with FeatureSession.open(feature) as s:
        assert s.problems == []
    entries = parse_auto_decisions(md.read_text())
    assert [(e.number, e.gate_id) for e in entries] == [(1, "triage"), (2, "safety-valve")]


def test_two_writers_at_once_one_is_refused_nothing_interleaves(feature):
    """Two processes open the same feature at the same moment: one writes, the other is refused."""
    import os

    import scars.core.samsara.rounds  # noqa: F401 - loaded before forking

    go_r, go_w = os.pipe()
    out_r, out_w = os.pipe()
    pids = []
    for n in range(2):
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                os.close(go_w)
                os.read(go_r, 1)  # both start together
                try:
                    s = FeatureSession.open(feature, user=f"writer-{n}")
                except LockHeld as exc:
                    os.write(out_w, f"refused {n} {exc.holder.get('user')}\n".encode())
                else:
                    for k in range(20):
                        s.decide(s.feature.items[k % 4].id, "fix" if k % 2 else "defer")
                    os.write(out_w, f"wrote {n}\n".encode())
                    os.read(go_r, 1)  # hold the lock until the parent lets go
                    s.close()
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        pids.append(pid)
    os.close(go_r)
    os.close(out_w)
    os.write(go_w, b"xx")
    lines = []
    with os.fdopen(out_r, "rb") as f:
        while len(lines) < 2:
            line = f.readline()
            if not line:
                break
            lines.append(line.decode().strip())
        os.write(go_w, b"yy")
        os.close(go_w)
        codes = [os.waitpid(p, 0)[1] for p in pids]
    assert codes == [0, 0]
    kinds = sorted(ln.split()[0] for ln in lines)
    assert kinds == ["refused", "wrote"], lines
    writer = next(ln.split()[1] for ln in lines if ln.startswith("wrote"))
    refused = next(ln for ln in lines if ln.startswith("refused"))
    assert refused.endswith(f"writer-{writer}")
    read = read_journal(journal_path(feature))
    assert read.problems == []
    # the first decision opened round 1 (its round_start), then the 20 decisions
    assert [r["seq"] for r in read.records] == list(range(1, 22))
    assert [r["type"] for r in read.records] == ["round_start"] + ["decision"] * 20
    assert {r["by"] for r in read.records} == {f"writer-{writer}"}


def test_reopen_sends_an_item_back_to_triage(feature):
    with FeatureSession.open(feature) as s:
        a, b = ids(s)[:2]
        s.decide(a, "accept", **ACCEPT, watch="path-changed: src/export.py")
        s.decide(b, "fix")
        with pytest.raises(DecisionRefused):
            s.reopen(ids(s)[2], cause="watch fired")
        assert s.reopen(a, cause="src/export.py changed").action == "accept"
        assert a not in s.decisions
        assert [h["action"] for h in s.history(a)] == ["accept"]
        assert s.undo() == [b]  # the reopen is not a person's decision: undo skips it
        assert a not in s.decisions
    with FeatureSession.open(feature) as s:
        assert s.decisions == {}


def test_undo_item_takes_back_an_earlier_decision_and_keeps_the_later_ones(feature):
    """Issue 16: only the latest decision could be undone."""
    with FeatureSession.open(feature) as s:
        a, b, c = ids(s)[:3]
        s.decide(a, "fix")
        s.decide_many([b, c], "defer", reason="needs the v2 API")
        s.decide(a, "accept", **ACCEPT)  # a's second decision
        assert s.undo_item(b) == [b, c]  # the batch as a whole, though a came after it
        assert s.decisions[a].action == "accept" and b not in s.decisions and c not in s.decisions
        assert s.undo_item(a) == [a]  # a's latest: the accept, so its fix is back
        assert s.decisions[a].action == "fix"
        assert s.undo_item(b) == []  # nothing of b left to undo
    with FeatureSession.open(feature, read_only=True) as s:  # as recorded: undo records, replayed
        assert {i: d.action for i, d in s.decisions.items()} == {a: "fix"}
