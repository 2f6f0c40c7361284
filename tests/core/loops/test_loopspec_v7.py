"""loop-spec 7.x's run state, read where 7.x keeps it (``<state home>/<repo id>/<slug>/``), and its
question answered as ``loop-spec answer`` answers it.

The shapes are 7.x's as read upstream (aztechead/loop-spec ``skills/loop-spec/program/loop_spec/``:
``paths.py`` and ``state.py`` @06a9ffa — the state home, the repo id, ``state.json`` and its
``state.digest``; ``questions.py`` @05581a2 and ``cli.py`` @0d9e8b9 — ``ask`` / ``answer``;
``schemas/question.json`` @489df87 and ``schemas/answer.json`` @421db3a; ``budget.py`` @489df87;
``ids.py`` @421db3a — the digest and ``now_iso``); the builders are ``tests/factories.py``'s
``loop_spec_7_run``.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from scars.core import gates, settings
from scars.core.errors import DecisionRefused, PathNotFound, UsageError
from scars.core.gates.inbox import gate_call
from scars.core.loops import discover_loops
from scars.core.loops.loopspec import v7
from tests.factories import BLOCKED_QUESTION, clean_env, git_repo, loop_spec_7_run


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    clean_env(monkeypatch)
    monkeypatch.setenv("LOOP_SPEC_HOME", str(tmp_path / "state-home"))  # this test's own state home


def test_repo_id_is_of_the_first_root_commit(tmp_path):
    repo = git_repo(tmp_path / "app")
    root = subprocess.run(
        ["git", "-C", str(repo), "rev-list", "--max-parents=0", "HEAD"], capture_output=True, text=True
    )
    expected = hashlib.sha256(root.stdout.strip().encode()).hexdigest()[:16]
    assert v7.repo_id(repo) == (expected, f"of the root commit {root.stdout.strip()[:12]}")
    # No git history: the project's real path.
    plain = tmp_path / "plain"
    plain.mkdir()
    assert v7.repo_id(plain)[0] == hashlib.sha256(str(plain.resolve()).encode()).hexdigest()[:16]


def test_a_pinned_repo_id_is_7x_s_but_only_as_one_path_part(tmp_path):
    repo = git_repo(tmp_path / "app")
    subprocess.run(["git", "-C", str(repo), "config", "--local", "loop-spec.repoId", "0123abcd0123abcd"], check=True)
    assert v7.repo_id(repo)[0] == "0123abcd0123abcd"
    subprocess.run(["git", "-C", str(repo), "config", "--local", "loop-spec.repoId", "../../elsewhere"], check=True)
    rid, how = v7.repo_id(repo)
    assert rid is None and "not a repo id" in how


def test_the_state_home_is_loop_spec_home_else_the_default(tmp_path, monkeypatch):
    assert v7.state_home() == Path(os.environ["LOOP_SPEC_HOME"])
    monkeypatch.delenv("LOOP_SPEC_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    settings.clear()
    assert v7.state_home() == tmp_path / ".loop-spec"


def test_scars_loops_finds_a_7x_run_outside_the_repository(tmp_path):
    repo = git_repo(tmp_path / "app")
    fj = loop_spec_7_run(repo)
    [state] = discover_loops(repo)
    assert (state.kind, state.name, state.path) == ("loop-spec", "add-a-json-flag", str(fj))
    assert state.details["loop_spec_version"] == {
        "line": "7.x",
        "version": "7.8.2",
        "why": "state.json in the state home, loopSpecVersion 7.8.2",
    }
    assert state.budget.to_dict()["used"] == 1 and state.budget.limit == 2 and state.budget.unit == "rewinds"
    assert state.details["judge"]["verdict"] == "unmet" and state.details["prior_gaps"]
    assert not state.waiting_for_human and state.parse_failures == ()
    assert any("loop-spec 7.8.2 rules assumed" in r for r in state.stop_rule.reasons)
    # The state file handed directly is a loop state file too (it was "not a loop state file").
    assert discover_loops(fj)[0].name == "add-a-json-flag"


def test_a_subfolder_holding_7x_results_is_a_7x_project(tmp_path):
    mono = tmp_path / "mono"
    repo = git_repo(mono / "svc")
    (repo / ".loop-spec" / "results" / "add-a-json-flag").mkdir(parents=True)
    loop_spec_7_run(repo)
    assert [s.name for s in discover_loops(mono)] == ["add-a-json-flag"]


def test_the_rewind_budget_by_version(tmp_path, monkeypatch):
    repo = git_repo(tmp_path / "app")
    loop_spec_7_run(repo)
    monkeypatch.setenv("LOOP_SPEC_REWIND_BUDGET", "5")
    settings.clear()
    assert discover_loops(repo)[0].budget.limit == 5  # 7.0–7.8: the variable is the limit
    loop_spec_7_run(repo, "later", loopSpecVersion="7.9.0")
    later = {s.name: s for s in discover_loops(repo)}["later"]
    assert later.budget.limit is None and "since 7.9.0" in later.details["rewind_limit_from"]
    loop_spec_7_run(repo, "earlier", loopSpecVersion="7.8.9")
    assert {s.name: s for s in discover_loops(repo)}["earlier"].budget.limit == 5


def test_an_open_question_waits_and_names_its_gate(tmp_path):
    repo = git_repo(tmp_path / "app")
    fj = loop_spec_7_run(repo, question=BLOCKED_QUESTION)
    [state] = discover_loops(repo)
    assert state.waiting_for_human and state.details["question"]["options"][1]["value"] == "fix-and-re-enter"
    assert state.reason.startswith("question (blocked, iterate): The judge step was rejected")
    call = gate_call(state, repo)
    assert (call.gate, call.path) == ("question", repo)  # the repository names its one waiting run
    assert gates.gather(call.gate, call.path).state_file == fj
    # Two runs asking: each gate call names its own state.json (the repository would be ambiguous).
    other = loop_spec_7_run(repo, "other", question=BLOCKED_QUESTION)
    calls = {s.name: gate_call(s, repo) for s in discover_loops(repo)}
    assert {n: c.path for n, c in calls.items()} == {"add-a-json-flag": fj, "other": other}
    assert gates.gather("question", calls["other"].path).state_file == other


def test_an_edited_state_is_said_and_its_question_refused(tmp_path):
    repo = git_repo(tmp_path / "app")
    fj = loop_spec_7_run(repo, question=BLOCKED_QUESTION)
    data = json.loads(fj.read_text())
    data["budget"]["spent"] = 0  # an edit outside the program
    fj.write_text(json.dumps(data))
    [state] = discover_loops(repo)
    assert any("state.digest does not match" in p.message for p in state.parse_failures)
    ev = gates.gather("question", fj)
    with pytest.raises(DecisionRefused, match="loop-spec refuses this state"):
        gates.record(ev, "stop", None, user="alice")


def test_a_link_or_a_foreign_folder_is_never_followed(tmp_path):
    repo = git_repo(tmp_path / "app")
    fj = loop_spec_7_run(repo)
    base = fj.parent.parent
    elsewhere = tmp_path / "elsewhere"
    fj.parent.rename(elsewhere)
    (base / "add-a-json-flag").symlink_to(elsewhere)
    assert discover_loops(repo) == []
    # A state.json that is a link out of its run folder is not read either.
    (base / "add-a-json-flag").unlink()
    (base / "run").mkdir()
    (base / "run" / "state.json").symlink_to(elsewhere / "state.json")
    [state] = discover_loops(repo)
    assert state.stop_rule.met is None and "state.json unusable" in state.reason


def answered(fj: Path, tmp_path: Path) -> dict:
    ev = gates.gather("question", fj)
    assert [a.value for a in ev.gate.answers] == ["stop", "fix-and-re-enter"]
    assert ev.default == "stop" and ev.workflow_prompt.startswith("The judge step was rejected 3 times")
    result = gates.record(ev, "fix-and-re-enter", None, user="alice")
    assert result.decision == "revise"
    return json.loads(fj.read_text())


def test_the_answer_is_what_loop_spec_answer_writes(tmp_path):
    repo = git_repo(tmp_path / "app")
    fj = loop_spec_7_run(repo, question=BLOCKED_QUESTION, request={"text": "Größe der Ausgabe", "digest": "sha256:0"})
    state = answered(fj, tmp_path)
    qid = BLOCKED_QUESTION["questionId"]
    record = state["questions"]["answered"][qid]
    assert record == {
        "value": "fix-and-re-enter",
        "scope": "question",
        "answeredAt": record["answeredAt"],
        "by": "human",
        "phase": "iterate",
        "attempt": BLOCKED_QUESTION["attempt"],
    }
    assert record["answeredAt"].endswith("+00:00") and len(record["answeredAt"]) == 25
    assert state["questions"]["open"] is None and state["questions"]["retired"] == [qid]
    answer = json.loads((fj.parent / "attempts" / BLOCKED_QUESTION["attempt"] / "answer.json").read_text())
    assert answer == {
        "questionId": qid,
        "value": "fix-and-re-enter",
        "scope": "question",
        "answeredAt": record["answeredAt"],
        "by": "human",
    }
    # Written as 7.x writes it (jsonio.atomic_write_json: key-sorted, indent 2, non-ASCII as itself),
    # with its digest (ids.digest: sha256 of the compact key-sorted JSON): the program opens it.
    assert fj.read_bytes() == (json.dumps(state, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()
    compact = json.dumps(state, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    assert (fj.parent / "state.digest").read_text() == "sha256:" + hashlib.sha256(compact).hexdigest() + "\n"
    assert "Größe" in fj.read_text() and "\\u00f6" not in fj.read_text()
    [after] = discover_loops(repo)
    assert not after.waiting_for_human and after.parse_failures == ()
    assert "## Decision 001 - iteration.question" in (fj.parent / "auto-decisions.md").read_text()
    # Nothing was written into the repository.
    assert sorted(p.name for p in repo.iterdir()) == [".git"]


def test_a_question_answered_meanwhile_is_not_answered_again(tmp_path):
    repo = git_repo(tmp_path / "app")
    fj = loop_spec_7_run(repo, question=BLOCKED_QUESTION)
    ev = gates.gather("question", fj)
    answered(fj, tmp_path)
    with pytest.raises(Exception, match="changed|no longer open"):
        gates.record(ev, "stop", None, user="alice")


def test_the_project_names_its_one_waiting_run(tmp_path):
    repo = git_repo(tmp_path / "app")
    with pytest.raises(PathNotFound, match="no loop-spec 7.x run"):
        gates.gather("question", repo)
    loop_spec_7_run(repo, "idle")
    with pytest.raises(PathNotFound, match="has an open question"):
        gates.gather("question", repo)
    fj = loop_spec_7_run(repo, question=BLOCKED_QUESTION)
    assert gates.gather("question", repo).state_file == fj
    loop_spec_7_run(repo, "other", question=BLOCKED_QUESTION)
    with pytest.raises(UsageError, match="several"):
        gates.gather("question", repo)


def test_a_text_question_is_left_to_loop_spec_answer(tmp_path):
    repo = git_repo(tmp_path / "app")
    fj = loop_spec_7_run(repo, question={**BLOCKED_QUESTION, "kind": "text", "options": [], "defaultValue": None})
    with pytest.raises(UsageError, match="loop-spec answer"):
        gates.gather("question", fj)
