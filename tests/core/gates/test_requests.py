"""Gate requests (core): post, answer, apply exactly once, refuse a moved-on loop, withdraw, wait."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from scars.core.errors import ChangedOnDisk, DecisionRefused, HumanNeeded, PathNotFound, UsageError
from scars.core.formats.auto_decisions import parse_auto_decisions
from scars.core.gates import gather
from scars.core.gates import requests as rq
from scars.core.storage import intent
from tests.factories import GATE_ANSWERS, clean_env, gate_state, loop_spec_feature, mechanist_state

REASON = "offline sync is v2 scope and on the backlog"


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_env(monkeypatch)


def _entries(directory: Path) -> list:
    f = directory / "auto-decisions.md"
    return parse_auto_decisions(f.read_text(encoding="utf-8")) if f.exists() else []


def _spec(tmp_path: Path) -> tuple[Path, Path, rq.Request]:
    (tmp_path / ".git").mkdir()
    fdir = loop_spec_feature(tmp_path)
    req = rq.post_request(gather("spec", fdir), fdir, user="agent")
    return tmp_path, fdir, req


def test_a_posted_request_holds_the_gate_its_evidence_who_asks_and_the_loop_files_fingerprint(tmp_path):
    root, fdir, req = _spec(tmp_path)
    data = json.loads((root / ".scars" / "requests" / f"{req.id}.json").read_text())
    assert data["status"] == "pending" and data["gate"] == "spec" and data["loop"] == "loop-spec"
    assert data["path"] == ".loop-spec/features/sync" and data["asked_by"] == "agent"
    assert data["evidence"] == gather("spec", fdir).as_json()
    assert data["fingerprint"][".loop-spec/features/sync/feature.json"] != "absent"
    assert data["fingerprint"][".loop-spec/features/sync/auto-decisions.md"] == "absent"
    assert [r.id for r in rq.list_requests(root)[0]] == [req.id]
    assert (root / ".scars" / "requests" / ".gitignore").read_text().splitlines()[-1] == "*"


def test_an_answer_is_checked_like_one_given_in_place(tmp_path):
    root, _, req = _spec(tmp_path)
    with pytest.raises(DecisionRefused, match="needs a reason"):
        rq.answer_request(root, req.id, "ship", None, user="bob", source="test")
    with pytest.raises(DecisionRefused, match="not a valid answer"):
        rq.answer_request(root, req.id, "maybe", REASON, user="bob", source="test")
    assert rq.load_request(root, req.id).status == "pending"


def test_answer_then_apply_records_once_with_the_answerers_identity(tmp_path):
    root, fdir, req = _spec(tmp_path)
    answered = rq.answer_request(root, req.id, "s", REASON, user="bob", source="app")
    assert answered.status == "answered" and answered.answer["answer"] == "ship" and answered.answer["by"] == "bob"
    assert _entries(fdir) == []  # answering records nothing in the loop's files: the applier does
    result = rq.apply_request(root, req.id)
    assert (result.gate, result.answer, result.decided_by) == ("spec", "ship", "bob")
    assert result.source == f"request {req.id} (app)"
    assert len(_entries(fdir)) == 1
    again = rq.apply_request(root, req.id)  # a second applier (a re-attached waiter) gets the stored result
    assert again.as_json() == {**result.as_json()}
    assert len(_entries(fdir)) == 1
    assert rq.load_request(root, req.id).status == "applied"


def test_a_second_answerer_is_told_who_answered_what(tmp_path):
    root, _, req = _spec(tmp_path)
    rq.answer_request(root, req.id, "ship", REASON, user="bob", source="app")
    with pytest.raises(DecisionRefused, match=r"answered already: bob answered 'ship' \(offline sync"):
        rq.answer_request(root, req.id, "reopen", "the gap is in the spec itself", user="carol", source="shell")


def test_an_answer_to_a_loop_that_moved_on_is_refused_naming_the_files(tmp_path):
    root, fdir, req = _spec(tmp_path)
    data = json.loads((fdir / "feature.json").read_text())
    data["iterate"]["used"] = 3  # the loop ran another judge pass meanwhile
    (fdir / "feature.json").write_text(json.dumps(data))
    with pytest.raises(
        DecisionRefused, match=r"changed since the request was posted \(\.loop-spec/features/sync/feature\.json\)"
    ):
        rq.answer_request(root, req.id, "ship", REASON, user="bob", source="shell")
    view = rq.inspect_request(root, rq.load_request(root, req.id))
    assert view.state == "expired" and view.changed == [".loop-spec/features/sync/feature.json"]
    # the app shows the gate gathered again; an answer to what it showed is taken
    rq.answer_request(root, req.id, "ship", REASON, user="bob", source="app", shown=view.fingerprint)
    assert rq.apply_request(root, req.id).answer == "ship"


def _loop_moves_on_and_the_answer_is_refused(root, fdir, req):
    """The loop itself moves feature.json on after bob's answer: applying it is refused, nothing
    recorded, the request marked refused."""
    before = (fdir / "feature.json").read_bytes()
    (fdir / "feature.json").write_bytes(before.replace(b'"used": 2', b'"used": 3'))
    with pytest.raises(DecisionRefused, match="changed since bob answered"):
        rq.apply_request(root, req.id)
    assert _entries(fdir) == []
    assert rq.load_request(root, req.id).status == "refused"


def test_an_answered_request_whose_loop_moved_on_before_it_was_applied_is_refused_not_recorded(tmp_path):
    root, fdir, req = _spec(tmp_path)
    rq.answer_request(root, req.id, "ship", REASON, user="bob", source="app")
    _loop_moves_on_and_the_answer_is_refused(root, fdir, req)
    with pytest.raises(DecisionRefused, match="was refused"):
        rq.apply_request(root, req.id)


def _interrupted(root: Path, rid: str, fingerprint: dict) -> None:
    """The request as a process left it when killed between its marker and its result."""
    f = root / ".scars" / "requests" / f"{rid}.json"
    data = json.loads(f.read_text())
    data["applying"] = {"at": "2026-11-30T12:00:00+00:00", "pid": 1, "fingerprint": fingerprint}
    f.write_text(json.dumps(data))


def test_a_record_interrupted_after_it_was_written_is_not_written_again(tmp_path):
    root, fdir, req = _spec(tmp_path)
    rq.answer_request(root, req.id, "ship", REASON, user="bob", source="app")
    seen = rq.load_request(root, req.id).answer["fingerprint"]
    rq.apply_request(root, req.id)  # recorded …
    _interrupted(root, req.id, seen)  # … but the process died before it kept the result
    data = json.loads((root / ".scars" / "requests" / f"{req.id}.json").read_text())
    data["status"] = "answered"
    data["result"] = None
    (root / ".scars" / "requests" / f"{req.id}.json").write_text(json.dumps(data))
    result = rq.apply_request(root, req.id)
    assert "stopped before it could keep the result" in result.extra["note"]
    assert len(_entries(fdir)) == 1


def test_a_record_interrupted_before_it_was_written_is_written_once(tmp_path):
    root, fdir, req = _spec(tmp_path)
    rq.answer_request(root, req.id, "ship", REASON, user="bob", source="app")
    _interrupted(root, req.id, rq.load_request(root, req.id).answer["fingerprint"])
    assert rq.apply_request(root, req.id).answer == "ship"
    assert len(_entries(fdir)) == 1


def test_an_append_killed_between_creating_auto_decisions_and_writing_it_is_recorded_once(tmp_path):
    # The first entry's append creates the file, then writes it: killed between the two, the file
    # is there and empty — nothing was recorded, so the next applier records it (once).
    root, fdir, req = _spec(tmp_path)
    rq.answer_request(root, req.id, "ship", REASON, user="bob", source="app")
    _interrupted(root, req.id, rq.load_request(root, req.id).answer["fingerprint"])
    (fdir / "auto-decisions.md").write_bytes(b"")
    result = rq.apply_request(root, req.id)
    assert "note" not in result.extra
    assert len(_entries(fdir)) == 1
    assert rq.load_request(root, req.id).status == "applied"


def test_another_writer_after_the_marker_is_not_taken_for_the_record(tmp_path):
    # Killed after its marker, before its entry; then the loop itself moved feature.json: the
    # answer was not recorded and is for another situation now — refused, never marked applied.
    root, fdir, req = _spec(tmp_path)
    rq.answer_request(root, req.id, "ship", REASON, user="bob", source="app")
    _interrupted(root, req.id, rq.load_request(root, req.id).answer["fingerprint"])
    _loop_moves_on_and_the_answer_is_refused(root, fdir, req)


def test_an_empty_file_is_no_change_and_one_byte_is():
    empty = rq.EMPTY
    one = hashlib.sha256(b"\n").hexdigest()
    assert rq.changed_files({"a": "absent"}, {"a": empty}) == []
    assert rq.changed_files({}, {"a": empty}) == []
    assert rq.changed_files({"a": empty}, {"a": "absent"}) == []
    assert rq.changed_files({"a": "absent"}, {"a": one}) == ["a"]
    assert rq.changed_files({"a": empty}, {"a": one}) == ["a"]


def test_pending_and_withdrawn_requests_are_not_applied(tmp_path):
    root, fdir, req = _spec(tmp_path)
    with pytest.raises(HumanNeeded, match="not answered yet"):
        rq.apply_request(root, req.id)
    assert rq.withdraw_request(root, req.id, user="agent").status == "withdrawn"
    with pytest.raises(HumanNeeded, match="withdrawn by agent"):
        rq.apply_request(root, req.id)
    with pytest.raises(DecisionRefused, match="is withdrawn; this answer was not taken"):
        rq.answer_request(root, req.id, "ship", REASON, user="bob", source="app")
    assert _entries(fdir) == []


def test_withdrawing_an_answered_request_keeps_its_answer(tmp_path):
    root, _, req = _spec(tmp_path)
    rq.answer_request(root, req.id, "ship", REASON, user="bob", source="app")
    assert rq.withdraw_request(root, req.id, user="agent").status == "answered"


def test_one_waiter_per_request_and_who_waits_is_visible(tmp_path):
    root, _, req = _spec(tmp_path)
    assert rq.waiter_of(root, req.id) is None
    with rq.waiting(root, req.id):
        assert rq.waiter_of(root, req.id)["pid"] == os.getpid()
        with pytest.raises(UsageError, match="already waits"), rq.waiting(root, req.id):
            pass
    assert rq.waiter_of(root, req.id) is None


def test_waiting_times_out_and_leaves_the_request_pending(tmp_path):
    root, _, req = _spec(tmp_path)
    now = [0.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    with pytest.raises(HumanNeeded, match="still pending after 1 s"):
        rq.wait_for_answer(root, req.id, timeout=1.0, poll=0.25, clock=lambda: now[0], sleep=sleep)
    assert slept == [0.25] * 4
    assert rq.load_request(root, req.id).status == "pending"


def test_waiting_returns_the_answered_request(tmp_path):
    root, _, req = _spec(tmp_path)

    def answer_meanwhile(_s: float) -> None:
        rq.answer_request(root, req.id, "ship", REASON, user="bob", source="app")

    got = rq.wait_for_answer(root, req.id, timeout=5, sleep=answer_meanwhile)
    assert got.status == "answered" and got.answer["by"] == "bob"


def test_the_requests_root_is_the_repository_the_app_shows(tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    fdir = loop_spec_feature(tmp_path / "app")
    assert rq.requests_root(fdir, cwd=elsewhere) == tmp_path / "app"  # .loop-spec marks it
    stage = mechanist_state(tmp_path / "paper")
    assert rq.requests_root(stage, cwd=elsewhere) == stage  # no marker, outside the current directory
    monkeypatch.chdir(tmp_path)
    assert rq.requests_root(stage) == tmp_path  # no marker: the current directory it is under
    (tmp_path / "paper" / ".git").mkdir()
    assert rq.requests_root(stage, cwd=elsewhere) == tmp_path / "paper"
    assert rq.requests_root(stage / "REVIEW_STATE.json", cwd=elsewhere) == tmp_path / "paper"


def test_unreadable_request_files_are_listed_as_problems_never_applied(tmp_path):
    root, _, req = _spec(tmp_path)
    inbox = root / ".scars" / "requests"
    (inbox / "bad-000001.json").write_text("{not json")
    (inbox / "other-000002.json").write_text(json.dumps({**json.loads((inbox / f"{req.id}.json").read_text())}))
    outside = json.loads((inbox / f"{req.id}.json").read_text())
    (inbox / "spec-000003.json").write_text(json.dumps({**outside, "id": "spec-000003", "path": "../../elsewhere"}))
    (inbox / "spec-000004.json").write_text(json.dumps({**outside, "id": "spec-000004", "path": "/etc"}))
    found, problems = rq.list_requests(root)
    assert [r.id for r in found] == [req.id]
    assert len(problems) == 4 and any("does not match its file name" in p for p in problems)
    assert sum("is not inside the repository" in p for p in problems) == 2  # never applied elsewhere
    with pytest.raises(UsageError, match="not a request id"):
        rq.load_request(root, "../../etc/passwd")
    with pytest.raises(PathNotFound, match="no request spec-ffffff"):
        rq.load_request(root, "spec-ffffff")


def test_triage_through_a_request_records_the_triage_gate_after_the_item_decisions(tmp_path):
    from scars.core.samsara.session import FeatureSession
    from tests.factories import item_id, samsara_feature

    f = samsara_feature(tmp_path, auto=True)
    root = rq.requests_root(f)
    req = rq.post_request(gather("triage", f), f, user="agent")
    with FeatureSession.open(f, user="bob") as s:  # the person triages (the app does this)
        s.decide(item_id(f, "Retry count is hard-coded to 3"), "fix")
    view = rq.inspect_request(root, rq.load_request(root, req.id))
    assert view.state == "expired"  # the decisions changed the journal: answered against what is shown now
    rq.answer_request(root, req.id, "done", None, user="bob", source="app", shown=view.fingerprint)
    with FeatureSession.open(f, user="bob") as s:  # the app holding the feature records it through its session
        result = rq.apply_request(root, req.id, session=s)
    assert (result.gate, result.answer, result.decided_by) == ("triage", "done", "bob")
    assert [e.gate_id for e in _entries(f)] == ["triage"]
    assert rq.apply_request(root, req.id).answer == "done"  # the waiter then gets the stored result
    assert [e.gate_id for e in _entries(f)] == ["triage"]


@pytest.mark.parametrize("gate", list(GATE_ANSWERS))
def test_every_gate_of_every_loop_through_a_request(gate, tmp_path):
    path, decisions_dir, extra = gate_state(gate, tmp_path / "w")
    answer, reason = GATE_ANSWERS[gate]
    options = {"item": extra.get("item")}
    root = tmp_path / "w"
    req = rq.post_request(gather(gate, path, **options), path, user="agent", options=options, root=root)
    rq.answer_request(root, req.id, answer, reason, user="bob", source="test")
    result = rq.apply_request(root, req.id)
    assert (result.gate, result.answer, result.reason, result.decided_by) == (gate, answer, reason, "bob")
    entries = _entries(decisions_dir)
    assert [e.gate_id for e in entries][-1] == rq.GATES[gate].entry_id
    count = len(entries)
    assert rq.apply_request(root, req.id).answer == answer
    assert len(_entries(decisions_dir)) == count


def test_a_round_gates_rule3_fields_given_with_the_answer_are_recorded_by_the_waiter(tmp_path):
    """Before: Rule-3 flags given to `scars gate round-continue --answer …` while a process waited
    on that gate answered its request without them, and the waiter recorded them as not given."""
    from scars.core.formats.iteration_log import read_iteration_log
    from scars.core.gates import round_fields

    path, _, _ = gate_state("round-continue", tmp_path / "w")
    root = tmp_path / "w"
    req = rq.post_request(gather("round-continue", path), path, user="agent", root=root)
    fields = round_fields(evidence_gained="the retry path is covered by a death test", residual_risk="none")
    rq.answer_request(
        root,
        req.id,
        "stop",
        "nothing actionable is left this round",
        user="bob",
        source="flag --answer",
        round_fields=fields,
    )
    rq.apply_request(root, req.id)  # the waiter wakes and records
    log = read_iteration_log(path / "iteration-log.yaml")
    last = log.rounds[-1].raw
    assert last["evidence_gained"] == ["the retry path is covered by a death test"]
    assert last["residual_risk"] == [] and "evidence_gained" not in (last.get("rule3_not_given") or [])


@pytest.mark.parametrize("state", [*rq.STATUSES, "expired"])
def test_one_rule_says_where_a_request_can_still_be_answered(state):
    """Pending: anywhere; expired: only where its gate is shown as it reads now (the app), never
    from a plain shell (`scars answer`); the rest: nowhere (README, requests section)."""
    assert rq.answerable(state, shows_gate_now=True) is (state in ("pending", "expired"))
    assert rq.answerable(state, shows_gate_now=False) is (state == "pending")


def test_an_answer_the_record_refuses_when_applied_is_refused_and_says_why(tmp_path, monkeypatch):
    """The loop's files were as bob saw them when the request was applied, but another writer changed
    feature.json between the record's plan and its write: the record refuses (ChangedOnDisk, nothing
    written), and the request is refused with that reason, never left answered for a second try."""
    root, fdir, req = _spec(tmp_path)
    rq.answer_request(root, req.id, "ship", REASON, user="bob", source="app")
    commit = intent.Plan.commit

    def another_writer_first(plan):
        f = fdir / "feature.json"
        f.write_bytes(f.read_bytes().replace(b'"used": 2', b'"used": 3'))
        return commit(plan)

    monkeypatch.setattr(intent.Plan, "commit", another_writer_first)
    with pytest.raises(ChangedOnDisk, match=r"feature\.json changed since .* nothing of it was written") as exc:
        rq.apply_request(root, req.id)
    monkeypatch.setattr(intent.Plan, "commit", commit)
    assert _entries(fdir) == [] and b'"used": 3' in (fdir / "feature.json").read_bytes()
    stored = rq.load_request(root, req.id)
    assert (stored.status, stored.refusal, stored.applying) == ("refused", str(exc.value), None)
    assert rq.inspect_request(root, stored).state == "refused"
    with pytest.raises(DecisionRefused, match=rf"request {req.id} was refused: .*feature\.json changed since"):
        rq.apply_request(root, req.id)  # never recorded by a later applier
    assert _entries(fdir) == []
