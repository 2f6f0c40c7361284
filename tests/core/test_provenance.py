"""Provably human (issue 27 §4): every decision and gate answer keeps where it came from; in
human-in-the-loop mode an agent's answer never passes for the person's; a request a repository
ships is never taken for one posted in this checkout."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from scars.core import settings
from scars.core.errors import AgentAnswerRefused, DecisionRefused
from scars.core.formats.auto_decisions import parse_auto_decisions
from scars.core.gates import gather, verify_feature
from scars.core.gates import requests as rq
from scars.core.provenance import Provenance, decided_by, provenance
from scars.core.samsara.session import FeatureSession
from scars.core.storage.journal import journal_path, read_journal
from scars.tui.cli import main as cli
from tests.factories import clean_env, item_id, loop_spec_feature, samsara_feature

REASON = "the vendor sandbox is down until March"


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_env(monkeypatch)


def _tty(monkeypatch, on: bool) -> None:
    """A person at this command's terminal (stdin and stdout), or not (the suite never has one)."""
    monkeypatch.setattr("scars.tui.cli.commands._feature.attended", lambda: on)
    monkeypatch.setattr("scars.tui.cli.commands.gate.attended", lambda: on)


def _claude(monkeypatch) -> None:
    monkeypatch.setenv("CLAUDECODE", "1")
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "s-42")


def _records(f: Path) -> list[dict]:
    return read_journal(journal_path(f)).records


def _feature(tmp_path: Path, *, auto: bool = False) -> tuple[Path, str]:
    f = samsara_feature(tmp_path, auto=auto)
    return f, item_id(f, "Retry count is hard-coded to 3")


# ----------------------------------------------------------------------------- the agent's variables


@pytest.mark.parametrize(
    ("env", "agent", "session"),
    [
        ({"CLAUDECODE": "1", "CLAUDE_CODE_SESSION_ID": "abc"}, "claude-code", "abc"),
        ({"CLAUDECODE": "1"}, "claude-code", None),
        ({"CODEX_THREAD_ID": "t-9"}, "codex", "t-9"),
        ({"CODEX_SANDBOX": "seatbelt"}, "codex", None),
        ({"CODEX_SANDBOX_NETWORK_DISABLED": "1"}, "codex", None),
        ({"GEMINI_CLI": "1"}, "gemini-cli", None),
        ({"CLAUDECODE": "0", "GEMINI_CLI": "0"}, None, None),
        ({}, None, None),
    ],
)
def test_the_agent_session_is_read_from_the_variables_the_agents_set(env, agent, session):
    s = settings.from_environ({"HOME": "/nonexistent", **env})
    assert (s.agent, s.agent_session) == (agent, session)
    p = provenance("flag", tty=False, env=s)
    assert (p.agent, p.agent_session) == (agent, session)


def test_a_provenance_round_trips_through_its_record_and_refuses_junk():
    p = Provenance("request-app", True, "codex", "t-1", "request r (app)")
    assert Provenance.from_record(p.to_record()) == p
    for junk in (None, "app", {"channel": "phone", "tty": True}, {"channel": "app", "tty": "yes"}):
        assert Provenance.from_record(junk) is None
    with pytest.raises(ValueError):
        Provenance("phone", True)


def test_the_one_rule_of_who_decides():
    agent = Provenance("flag", False, "claude-code", "s-42")
    allowed = settings.from_environ({"HOME": "/x", "SCARS_ALLOW_AGENT_ANSWERS": "1"})
    strict = settings.from_environ({"HOME": "/x"})
    with pytest.raises(AgentAnswerRefused, match="scars gate … --wait"):
        decided_by("alice", agent, human_mode=True, env=strict)
    assert decided_by("alice", agent, human_mode=True, env=allowed) == "claude-code (session s-42) for alice"
    assert decided_by("alice", agent, human_mode=False, env=strict) == "alice"  # auto: the gatekeeper
    at_terminal = Provenance("flag", True, "claude-code", "s-42")
    assert decided_by("alice", at_terminal, human_mode=True, env=strict) == "alice"
    assert AgentAnswerRefused.exit_code == 7


def test_config_toml_allows_agent_answers_and_the_environment_wins(tmp_path):
    cfg = tmp_path / "scars" / "config.toml"
    cfg.parent.mkdir()
    cfg.write_text("allow_agent_answers = true\n")
    assert settings.read_config(cfg) == {"config_allow_agent_answers": True}
    s = settings.Settings(config_allow_agent_answers=True)
    assert s.allow_agent_answers
    assert not settings.Settings(config_allow_agent_answers=True, env_allow_agent_answers=False).allow_agent_answers
    cfg.write_text('allow_agent_answers = "yes"\n')
    assert "must be true or false" in settings.read_config(cfg)["config_problems"][0]


# ----------------------------------------------------------------------------- scars decide


def test_an_agent_without_a_terminal_is_refused_in_human_mode_and_nothing_is_written(tmp_path, monkeypatch, capsys):
    f, item = _feature(tmp_path)
    with FeatureSession.open(f, user="setup") as s:
        s.start_round()
    before = journal_path(f).read_bytes()
    _claude(monkeypatch)
    _tty(monkeypatch, False)
    code = cli.main(["decide", item, "--defer", "--reason", REASON, "--feature", str(f)])
    assert code == 7
    assert "human-in-the-loop" in capsys.readouterr().err
    assert journal_path(f).read_bytes() == before


def test_with_a_terminal_it_is_the_persons_and_the_provenance_says_both(tmp_path, monkeypatch):
    f, item = _feature(tmp_path)
    _claude(monkeypatch)
    _tty(monkeypatch, True)
    assert cli.main(["decide", item, "--defer", "--reason", REASON, "--feature", str(f)]) == 0
    [rec] = [r for r in _records(f) if r["type"] == "decision"]
    assert rec["by"] == "alice" and rec["decisions"][0]["decided_by"] == "alice"
    assert rec["provenance"] == {
        "channel": "flag",
        "tty": True,
        "agent": "claude-code",
        "agent_session": "s-42",
        "via": "scars decide",
    }


def test_in_auto_mode_the_agents_answer_is_recorded_as_the_gatekeepers(tmp_path, monkeypatch):
    f, item = _feature(tmp_path, auto=True)
    _claude(monkeypatch)
    _tty(monkeypatch, False)
    assert cli.main(["decide", item, "--defer", "--reason", REASON, "--feature", str(f)]) == 0
    [rec] = [r for r in _records(f) if r["type"] == "decision"]
    assert rec["by"] == "alice"
    assert (rec["provenance"]["agent"], rec["provenance"]["tty"]) == ("claude-code", False)


def test_allowed_agent_answers_are_recorded_as_the_agents_and_log_verify_says_so(tmp_path, monkeypatch, capsys):
    f, item = _feature(tmp_path)
    _claude(monkeypatch)
    _tty(monkeypatch, False)
    monkeypatch.setenv("SCARS_ALLOW_AGENT_ANSWERS", "1")
    assert cli.main(["decide", item, "--defer", "--reason", REASON, "--feature", str(f)]) == 0
    [rec] = [r for r in _records(f) if r["type"] == "decision"]
    assert rec["decisions"][0]["decided_by"] == "claude-code (session s-42) for alice"
    v = verify_feature(f)
    assert v.outcome == "failure"
    assert any("agent session" in p.message for p in v.findings if p.severity == "failure")


# ----------------------------------------------------------------------------- gates


def test_the_agent_cannot_answer_the_entry_or_round_gate_in_human_mode(tmp_path, monkeypatch, capsys):
    f, _ = _feature(tmp_path)
    _claude(monkeypatch)
    _tty(monkeypatch, False)
    index = (f / "index.yaml").read_bytes()
    assert cli.main(["gate", "entry", str(f), "--answer", "enter"]) == 7
    assert cli.main(["gate", "entry", str(f), "--answer", "skip", "--reason", REASON]) == 7
    assert (f / "index.yaml").read_bytes() == index and not journal_path(f).exists()
    monkeypatch.delenv("CLAUDECODE")
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID")
    with FeatureSession.open(f, user="setup") as s:
        s.start_round()
    before = journal_path(f).read_bytes()
    _claude(monkeypatch)
    assert cli.main(["gate", "round-continue", str(f), "--answer", "stop", "--reason", REASON]) == 7
    assert journal_path(f).read_bytes() == before and not (f / "iteration-log.yaml").exists()


def test_a_human_mode_gate_answer_without_a_record_of_its_own_keeps_one_with_its_provenance(tmp_path, monkeypatch):
    f, _ = _feature(tmp_path)
    _tty(monkeypatch, True)
    assert cli.main(["gate", "entry", str(f), "--answer", "enter"]) == 0
    [rec] = _records(f)
    assert (rec["type"], rec["gate"], rec["answer"]) == ("gate_answer", "entry", "enter")
    assert rec["provenance"]["channel"] == "flag" and rec["provenance"]["tty"] is True
    assert verify_feature(f).outcome != "failure"


def test_the_round_gates_provenance_goes_into_iteration_log_and_auto_decisions(tmp_path, monkeypatch):
    f, item = _feature(tmp_path, auto=True)
    _claude(monkeypatch)
    with FeatureSession.open(f, user="setup") as s:
        s.start_round()
        s.decide(item, "defer", reason=REASON)
    assert cli.main(["gate", "round-continue", str(f), "--answer", "stop", "--reason", REASON]) == 0
    round_ = yaml.safe_load((f / "iteration-log.yaml").read_text(encoding="utf-8"))["rounds"][-1]
    assert round_["provenance"]["channel"] == "flag" and round_["provenance"]["agent"] == "claude-code"
    entries = parse_auto_decisions((f / "auto-decisions.md").read_text(encoding="utf-8"))
    said = entries[-1].fields["principles_used"][-1]
    assert said.endswith("at the round-continuation gate (flag, no terminal, in claude-code (session s-42))")
    assert not any(e.problems for e in entries)


def test_another_loops_gate_refuses_the_agent_and_its_entry_says_whence(tmp_path, monkeypatch):
    fdir = loop_spec_feature(tmp_path)
    _claude(monkeypatch)
    _tty(monkeypatch, False)
    before = (fdir / "feature.json").read_bytes()
    assert cli.main(["gate", "spec", str(fdir), "--answer", "ship", "--reason", "offline sync is v2 scope"]) == 7
    assert (fdir / "feature.json").read_bytes() == before and not (fdir / "auto-decisions.md").exists()
    _tty(monkeypatch, True)
    assert cli.main(["gate", "spec", str(fdir), "--answer", "ship", "--reason", "offline sync is v2 scope"]) == 0
    [entry] = parse_auto_decisions((fdir / "auto-decisions.md").read_text(encoding="utf-8"))
    assert entry.fields["principles_used"][-1].endswith("(flag, at a terminal, in claude-code (session s-42))")


# ----------------------------------------------------------------------------- rounds and watches


def _round_commands(f: Path) -> dict[str, list[str]]:
    return {
        "start": ["round", "start", "--feature", str(f)],
        "close": ["round", "close", "--decision", "stop", "--reason", REASON, "--feature", str(f)],
        "flush": ["round", "flush", "--feature", str(f)],
    }


def _with_a_round_to_flush(f: Path) -> None:
    """Round 1 closed in the journal, not in iteration-log.yaml (its write was refused)."""
    (f / "iteration-log.yaml").write_text("feature: x\nrounds: {not: a list}\n", encoding="utf-8")
    with FeatureSession.open(f, user="setup") as s:
        s.start_round()
        with pytest.raises(Exception, match="recorded in the journal"):
            s.close_round("stop", REASON)
    (f / "iteration-log.yaml").unlink()


@pytest.mark.parametrize("command", ["start", "close", "flush"])
def test_an_agent_cannot_start_close_or_flush_a_human_round(command, tmp_path, monkeypatch, capsys):
    """`scars round start | close | flush` from an agent's session without a terminal, at a
    human-in-the-loop feature: refused as a decision is (the one rule, exit 7, the same message),
    nothing written — not even what opening a feature writes by itself; a person at a terminal
    in the same agent session records it, as the agent's with SCARS_ALLOW_AGENT_ANSWERS."""
    f, _ = _feature(tmp_path)
    if command == "close":
        with FeatureSession.open(f, user="setup") as s:
            s.start_round()
    if command == "flush":
        _with_a_round_to_flush(f)
    before = journal_path(f).read_bytes() if journal_path(f).exists() else b""
    _claude(monkeypatch)
    _tty(monkeypatch, False)
    args = _round_commands(f)[command]
    assert cli.main(args) == 7
    err = capsys.readouterr().err
    assert "claude-code (session s-42) session without a terminal" in err and "human-in-the-loop" in err
    assert "SCARS_ALLOW_AGENT_ANSWERS=1" in err and "Nothing was recorded" in err
    assert (journal_path(f).read_bytes() if journal_path(f).exists() else b"") == before
    assert not (f / "iteration-log.yaml").exists()

    monkeypatch.setenv("SCARS_ALLOW_AGENT_ANSWERS", "1")
    settings.clear()
    assert cli.main(args) == 0, capsys.readouterr().err
    assert (f / "iteration-log.yaml").exists() is (command != "start")
    if command != "flush":  # a flush writes no journal record: the rounds it writes keep their close's
        rec = _records(f)[-1]
        assert rec["type"] == f"round_{command}"
        assert rec["by"] == "claude-code (session s-42) for alice"
        assert rec["provenance"] == {
            "channel": "flag",
            "tty": False,
            "agent": "claude-code",
            "agent_session": "s-42",
            "via": f"scars round {command}",
        }
        v = verify_feature(f)
        assert any(
            p.severity == "failure" and f"round_{command}" in p.message and "agent session" in p.message
            for p in v.findings
        ), v.findings


@pytest.mark.parametrize("command", ["start", "close", "flush"])
def test_a_person_at_a_terminal_or_an_auto_mode_agent_runs_the_round_commands(command, tmp_path, monkeypatch, capsys):
    for auto, tty in ((False, True), (True, False)):
        f, _ = _feature(tmp_path / f"{auto}", auto=auto)
        if command == "close":
            with FeatureSession.open(f, user="setup") as s:
                s.start_round()
        if command == "flush":
            _with_a_round_to_flush(f)
        _claude(monkeypatch)
        _tty(monkeypatch, tty)
        assert cli.main(_round_commands(f)[command]) == 0, capsys.readouterr().err
        if command != "flush":
            rec = _records(f)[-1]
            assert rec["by"] == "alice"
            assert (rec["provenance"]["tty"], rec["provenance"]["agent"]) == (tty, "claude-code")


def test_log_verify_reports_a_human_round_start_no_person_made(tmp_path, monkeypatch):
    f, _ = _feature(tmp_path)
    _tty(monkeypatch, False)  # a script, or an agent nobody detected
    assert cli.main(_round_commands(f)["start"]) == 0
    findings = [p for p in verify_feature(f).findings if "round_start" in p.message]
    assert [p.severity for p in findings] == ["unknown"] and "without a terminal" in findings[0].message
    _tty(monkeypatch, True)
    assert cli.main(_round_commands(f)["close"]) == 0
    assert not [p for p in verify_feature(f).findings if "round_close" in p.message]


def test_the_rounds_start_provenance_goes_into_iteration_log(tmp_path, monkeypatch):
    f, _ = _feature(tmp_path)
    _tty(monkeypatch, True)
    assert cli.main(_round_commands(f)["start"]) == 0
    _tty(monkeypatch, False)
    _claude(monkeypatch)
    monkeypatch.setenv("SCARS_ALLOW_AGENT_ANSWERS", "1")
    assert cli.main(_round_commands(f)["close"]) == 0
    round_ = yaml.safe_load((f / "iteration-log.yaml").read_text(encoding="utf-8"))["rounds"][-1]
    assert round_["start_provenance"] == {"channel": "flag", "tty": True, "via": "scars round start"}
    assert round_["provenance"]["via"] == "scars round close" and round_["provenance"]["agent"] == "claude-code"


def test_a_watch_reopen_keeps_where_the_check_ran_and_is_scars_own(tmp_path, monkeypatch, capsys):
    """`scars watch check` reopening an accept: its journal records, its auto-decisions.md entry
    ("decided by" line) and its watches.jsonl record keep the check's provenance; the reopen is
    the watch's rule, not an answer, so an agent's check is not refused, and log verify does not
    count it as a person's decision."""
    import subprocess

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    f, item = _feature(tmp_path)
    root = tmp_path
    (root / "src").mkdir()
    (root / "src" / "export.py").write_text("x = 1\n", encoding="utf-8")
    for words in (
        ["init", "-q"],
        ["add", "-A"],
        [
            "-c",
            "user.name=T",
            "-c",
            "user.email=t@e.invalid",
            "-c",
            "commit.gpgsign=false",
            "commit",
            "-q",
            "-m",
            "one",
        ],
    ):
        subprocess.run(["git", *words], cwd=root, check=True, capture_output=True)
    _tty(monkeypatch, True)
    accept = ["--accept", "--signal", "export retries", "--owner", "export team", "--rationale", REASON]
    assert cli.main(["decide", item, *accept, "--watch", "path-changed: src/export.py", "--feature", str(f)]) == 0
    (root / "src" / "export.py").write_text("x = 2\n", encoding="utf-8")
    _claude(monkeypatch)
    _tty(monkeypatch, False)
    assert cli.main(["watch", "check", str(f), "--json"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    want = {
        "channel": "flag",
        "tty": False,
        "agent": "claude-code",
        "agent_session": "s-42",
        "via": "scars watch check",
    }
    reopen = [r for r in _records(f) if r["type"] in ("reopen", "auto_decision")]
    assert [r["type"] for r in reopen] == ["reopen", "auto_decision"]
    assert all(r["provenance"] == want and r["by"] == "alice" for r in reopen)
    [entry] = parse_auto_decisions((f / "auto-decisions.md").read_text(encoding="utf-8"))
    assert entry.fields["principles_used"][-1].endswith("(flag, no terminal, in claude-code (session s-42))")
    from scars.core.samsara.watches import read_watch_log

    [fired] = [r for r in read_watch_log(f) if r.get("type") == "fired"]
    assert fired["provenance"] == want
    assert not [p for p in verify_feature(f).findings if p.severity in ("failure", "unknown")]


# ----------------------------------------------------------------------------- requests


def _posted(tmp_path: Path) -> tuple[Path, Path, rq.Request]:
    root = tmp_path / "mine"
    (root / ".git").mkdir(parents=True)
    fdir = loop_spec_feature(root)
    return root, fdir, rq.post_request(gather("spec", fdir), fdir, user="agent")


def test_a_request_shipped_in_a_clone_is_listed_as_planted_and_never_applied(tmp_path):
    root, _, req = _posted(tmp_path)
    rq.answer_request(root, req.id, "ship", "offline sync is v2 scope", user="alice", source="app")
    clone = tmp_path / "clone"
    shutil.copytree(root, clone)  # `git add -f .scars/requests/…`, then cloned
    cfdir = clone / ".loop-spec" / "features" / "sync"
    before = (cfdir / "feature.json").read_bytes()
    request_file = clone / ".scars" / "requests" / f"{req.id}.json"
    shipped = request_file.read_bytes()
    with pytest.raises(DecisionRefused, match=r"not posted here \(posted in another checkout"):
        rq.apply_request(clone, req.id)
    assert (cfdir / "feature.json").read_bytes() == before and not (cfdir / "auto-decisions.md").exists()
    assert request_file.read_bytes() == shipped  # not even the request is written
    view = rq.inspect_request(clone, rq.load_request(clone, req.id))
    assert view.state == "planted" and not rq.answerable(view.state, shows_gate_now=True)
    assert any("never answered or applied here" in line for line in view.lines())
    # in its own checkout it applies
    assert rq.apply_request(root, req.id).decided_by == "alice"


def test_an_unsigned_or_edited_request_or_answer_is_never_applied(tmp_path):
    root, fdir, req = _posted(tmp_path)
    f = root / ".scars" / "requests" / f"{req.id}.json"
    data = json.loads(f.read_text())
    unsigned = {k: v for k, v in data.items() if k != "signature"}
    f.write_text(json.dumps(unsigned))
    assert rq.inspect_request(root, rq.load_request(root, req.id)).foreign == (
        "not posted here (no signature: written by an older scars or by hand)"
    )
    with pytest.raises(DecisionRefused, match="no signature"):
        rq.answer_request(root, req.id, "ship", "offline sync is v2 scope", user="alice", source="app")
    f.write_text(json.dumps(data))
    rq.answer_request(root, req.id, "ship", "offline sync is v2 scope", user="alice", source="app")
    answered = json.loads(f.read_text())
    answered["answer"]["by"] = "mallory"  # an answer changed by hand
    f.write_text(json.dumps(answered))
    with pytest.raises(DecisionRefused, match="its answer was not given here"):
        rq.apply_request(root, req.id)
    assert not (fdir / "auto-decisions.md").exists()


def test_another_users_request_key_is_refused(tmp_path):
    root, _, req = _posted(tmp_path)
    key = settings.current().state_dir / "request-key"
    key.chmod(0o644)
    view = rq.inspect_request(root, rq.load_request(root, req.id))
    assert view.state == "planted" and "nobody else can read" in (view.foreign or "")
    key.chmod(0o600)
    assert rq.inspect_request(root, rq.load_request(root, req.id)).state == "pending"


def test_an_agent_cannot_answer_a_human_gates_request_with_scars_answer(tmp_path, monkeypatch, capsys):
    root, fdir, req = _posted(tmp_path)
    _claude(monkeypatch)
    _tty(monkeypatch, False)
    argv = ["answer", req.id, "--answer", "ship", "--reason", "offline sync is v2 scope", "--path", str(root)]
    assert cli.main(argv) == 7
    assert rq.load_request(root, req.id).status == "pending"
    _tty(monkeypatch, True)
    assert cli.main(argv) == 0
    answered = rq.load_request(root, req.id)
    assert answered.answer["provenance"]["channel"] == "request-answer"
    result = rq.apply_request(root, req.id)  # the waiter (no terminal) records the person's answer
    assert result.decided_by == "alice" and result.extra["provenance"]["tty"] is True


def test_log_verify_says_when_nothing_shows_a_person_decided_and_notes_records_without_provenance(
    tmp_path, monkeypatch
):
    f, item = _feature(tmp_path)
    _tty(monkeypatch, False)  # a script, or an agent nobody detected: a flag without a terminal
    assert cli.main(["decide", item, "--defer", "--reason", REASON, "--feature", str(f)]) == 0
    v = verify_feature(f)
    assert any(p.severity == "unknown" and "without a terminal" in p.message for p in v.findings)
    with FeatureSession.open(f, user="older-scars") as s:  # as scars wrote before provenance
        s.decide(item_id(f, "Shared cache key"), "defer", reason=REASON)
    notes = [p.message for p in verify_feature(f).findings if p.severity == "note"]
    assert "1 decision record(s) from before provenance was kept: no provenance recorded" in notes
