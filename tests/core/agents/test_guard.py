"""The PreToolUse guard (scars.core.agents.guard, `scars hook pre-tool-use`): an agent's shell call
or edit that would answer a human-mode gate is denied with a message naming request_gate; the same
in auto mode, and everything harmless, passes. Fed Claude Code's hook JSON as it sends it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scars.core.agents import guard
from scars.core.gates import recording
from tests.factories import csv_feature, loop_spec_feature

F = "changes/2026-07-10_csv-export"


def payload(repo: Path, tool: str, tool_input: dict) -> dict:
    """Claude Code's PreToolUse input (docs.claude.com/en/docs/claude-code/hooks)."""
    return {
        "session_id": "abc123",
        "transcript_path": str(repo / "transcript.jsonl"),
        "cwd": str(repo),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_01ABC123",
    }


def bash(repo: Path, command: str) -> dict:
    return payload(repo, "Bash", {"command": command, "description": "run it", "timeout": 120000})


@pytest.fixture(params=["human", "auto"])
def repo(request, tmp_path):
    (tmp_path / ".git").mkdir()
    csv_feature(tmp_path, auto=request.param == "auto")
    return tmp_path, request.param


BLOCKED_SHELL = [
    f"scars decide ks-3bef218a5a --fix --feature {F}",
    f"cd {F} && scars decide ks-3bef218a5a --fix",
    "cd changes && cd 2026-07-10_csv-export; scars round close --decision stop --reason done",
    f"SCARS_USER=alice scars round start --feature {F}",
    f"env -i SCARS_USER=bob python3 -m scars round flush --feature {F}",
    f"python -m scars.tui decide ks-1 --accept --feature {F}",
    f".venv/bin/scars gate round-continue {F} --answer stop --reason 'the rest is accepted'",
    f"scars gate entry {F} --answer=enter",
    f"SCARS_ANSWER_ENTRY=enter scars gate entry {F}",
    f"uv run scars gate triage {F} --answers answers.yaml",
    f"bash -c 'scars decide ks-1 --defer --reason later --feature {F}'",
    f"true && (scars round close --decision stop --reason x --feature {F})",
    f"echo '- round: 2' >> {F}/iteration-log.yaml",
    f"printf x | tee -a {F}/auto-decisions.md",
    f"sed -i s/a/b/ {F}/iteration-log.yaml",
]

ALLOWED_SHELL = [
    "scars status",
    f"scars status {F} --json",
    f"scars gate round-continue {F} --wait --timeout 540",
    f"scars gate entry {F}",
    f"scars round status --feature {F}",
    f"scars log verify {F}",
    "scars decide --help",
    "git commit -m 'scars decide later'",
    "echo scars decide ks-1 --fix",
    f"cat {F}/iteration-log.yaml",
    "ls -la && pytest -q",
    "python -m pytest tests",
]


@pytest.mark.parametrize("command", BLOCKED_SHELL)
def test_a_shell_call_answering_a_gate_is_denied_in_human_mode_only(repo, command):
    root, mode = repo
    verdict = guard.check_tool_call(bash(root, command))
    if mode == "human":
        assert not verdict.allowed, command
        assert "request_gate" in verdict.reason and "wait_for_answer" in verdict.reason
        out = verdict.hook_output()
        assert out["hookSpecificOutput"]["hookEventName"] == "PreToolUse"
        assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert out["hookSpecificOutput"]["permissionDecisionReason"] == verdict.reason
    else:
        assert verdict.allowed, (command, verdict.reason)
        assert verdict.hook_output() is None


@pytest.mark.parametrize("command", ALLOWED_SHELL)
def test_harmless_shell_calls_pass(repo, command):
    root, _mode = repo
    assert guard.check_tool_call(bash(root, command)).allowed, command


@pytest.mark.parametrize("tool", ["Edit", "Write", "MultiEdit"])
@pytest.mark.parametrize("name", ["iteration-log.yaml", "auto-decisions.md"])
def test_an_edit_of_a_loop_decision_file_is_denied_in_human_mode_only(repo, tool, name):
    root, mode = repo
    path = root / F / name
    tool_input = {"file_path": str(path), "old_string": "a", "new_string": "b"}
    if tool == "Write":
        tool_input = {"file_path": str(path), "content": "rounds: []\n"}
    verdict = guard.check_tool_call(payload(root, tool, tool_input))
    assert verdict.allowed == (mode == "auto")
    if mode == "human":
        assert "request_gate" in verdict.reason


def test_an_edit_of_another_file_passes(repo):
    root, _mode = repo
    for name in ("report.md", "iteration-log.yaml.bak", "scar-reports/task-1-scar.yaml"):
        p = payload(root, "Edit", {"file_path": str(root / F / name), "old_string": "a", "new_string": "b"})
        assert guard.check_tool_call(p).allowed, name


def test_the_mode_is_the_record_paths_rule(tmp_path):
    """The guard's mode of a feature is recording.human_mode of its evidence: the same answer for
    the same feature (and it follows the feature when its mode changes)."""
    (tmp_path / ".git").mkdir()
    feature = csv_feature(tmp_path)
    evidence = recording.gather("entry", feature, read_only=True)
    assert guard.human_mode_of_gate("entry", feature) is recording.human_mode(evidence) is True
    (feature / "pre-thinking.md").write_text("Execution mode: auto\n")
    assert (
        guard.human_mode_of_gate("entry", feature) is recording.human_mode(recording.gather("entry", feature)) is False
    )


def test_loop_spec_autonomous_is_auto_and_step_is_human(tmp_path):
    step = loop_spec_feature(tmp_path / "a")
    auto = loop_spec_feature(tmp_path / "b", exec_style="auto")
    for where, allowed in ((step, False), (auto, True)):
        edit = payload(where, "Write", {"file_path": str(where / "auto-decisions.md"), "content": "x"})
        assert guard.check_tool_call(edit).allowed is allowed
        answer = bash(where, f"scars gate spec {where} --answer ship --reason 'v2 scope'")
        assert guard.check_tool_call(answer).allowed is allowed


def test_an_unreadable_loop_is_human_mode(tmp_path):
    verdict = guard.check_tool_call(bash(tmp_path, "scars decide ks-1 --fix --feature nowhere"))
    assert not verdict.allowed


@pytest.mark.parametrize(
    "data",
    [None, [], "text", {"tool_name": "Read", "tool_input": {"file_path": "iteration-log.yaml"}}, {"tool_name": "Bash"}],
)
def test_what_is_not_a_shell_call_or_an_edit_passes(data):
    assert guard.check_tool_call(data).allowed


def test_an_unclosed_quote_is_still_read(tmp_path):
    assert not guard.check_tool_call(bash(tmp_path, "scars decide ks-1 --fix --reason 'oops")).allowed


def _hook(stdin: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scars.tui", "hook", "pre-tool-use"],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


def test_the_hook_speaks_claude_codes_protocol_on_stdin(tmp_path):
    (tmp_path / ".git").mkdir()
    csv_feature(tmp_path)
    denied = _hook(json.dumps(bash(tmp_path, f"cd {F} && scars decide ks-1 --fix")), tmp_path)
    assert denied.returncode == 0, denied.stderr
    out = json.loads(denied.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and "request_gate" in out["permissionDecisionReason"]
    allowed = _hook(json.dumps(bash(tmp_path, "scars status")), tmp_path)
    assert (allowed.returncode, allowed.stdout) == (0, "")
    garbage = _hook("not json {", tmp_path)
    assert (garbage.returncode, garbage.stdout) == (0, "")
