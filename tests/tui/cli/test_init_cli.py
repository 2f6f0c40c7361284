"""`scars init` and `scars hook` at the command line, in a child process without a terminal: the
dry run prints the diff and writes nothing, a run is idempotent, --remove gives the bytes back, a
symlink leading out is exit 6."""

from __future__ import annotations

import json
from pathlib import Path

from tests.factories import scars_process


def _files(repo: Path) -> dict[str, bytes]:
    return {str(p.relative_to(repo)): p.read_bytes() for p in sorted(repo.rglob("*")) if p.is_file()}


def test_dry_run_prints_the_diff_and_writes_nothing(tmp_path):
    (tmp_path / "CLAUDE.md").write_text("# mine\n")
    before = _files(tmp_path)
    done = scars_process("init", str(tmp_path), "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "--- /dev/null\n+++ b/.mcp.json\n" in done.stdout
    assert "--- a/CLAUDE.md\n+++ b/CLAUDE.md\n" in done.stdout and "+<!-- scars:begin" in done.stdout
    assert ".mcp.json: would change" in done.stdout
    assert _files(tmp_path) == before


def test_init_twice_then_remove(tmp_path):
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {"x": {"command": "y"}}}\n')
    before = _files(tmp_path)
    first = scars_process("init", str(tmp_path), "--agent", "claude-code", "--json")
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert {f["path"] for f in report["files"]} == {".mcp.json", ".claude/settings.json", "CLAUDE.md"}
    assert all(f["changed"] for f in report["files"])
    wired = _files(tmp_path)
    second = scars_process("init", str(tmp_path), "--agent", "claude-code")
    assert second.returncode == 0 and "nothing to do" in second.stdout
    assert _files(tmp_path) == wired
    gone = scars_process("init", str(tmp_path), "--remove")
    assert gone.returncode == 0, gone.stderr
    assert _files(tmp_path) == before


def test_a_symlink_leading_out_is_exit_6(tmp_path):
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    repo.mkdir()
    outside.mkdir()
    (outside / "x.json").write_text("{}")
    (repo / ".mcp.json").symlink_to(outside / "x.json")
    done = scars_process("init", str(repo))
    assert done.returncode == 6, done.stderr
    assert (outside / "x.json").read_text() == "{}"
    assert sorted(p.name for p in repo.iterdir()) == [".mcp.json"]


def test_hook_payload_option_judges_like_stdin(tmp_path):
    payload = {"tool_name": "Bash", "tool_input": {"command": "scars answer r-1 --answer ship"}, "cwd": str(tmp_path)}
    done = scars_process("hook", "pre-tool-use", "--payload", json.dumps(payload))
    assert done.returncode == 0
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    quiet = scars_process("hook", "pre-tool-use")  # stdin is /dev/null: nothing to judge
    assert (quiet.returncode, quiet.stdout) == (0, "")
