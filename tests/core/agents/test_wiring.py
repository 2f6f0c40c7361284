"""`scars init`'s plan (scars.core.agents.wiring): what it adds to each agent's file, that the
user's bytes stay, that a second run changes nothing and that --remove gives the bytes back."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

from scars.core.agents import jsonedit, wiring
from scars.core.agents.instructions import BEGIN, END, MCP_TOOLS, section
from scars.core.errors import OutsideRepository, UsageError
from scars.core.loops.registry import GATES

ALL_FILES = {t.rel for t in wiring.TARGETS}


def files(repo: Path) -> dict[str, bytes]:
    return {str(p.relative_to(repo)): p.read_bytes() for p in sorted(repo.rglob("*")) if p.is_file()}


def init(repo: Path, agents=None, *, remove: bool = False) -> list[wiring.FileChange]:
    changes = wiring.plan(repo, agents, remove=remove)
    wiring.apply(repo, changes)
    return changes


def test_an_empty_repository_gets_every_file_and_remove_leaves_it_empty(tmp_path):
    init(tmp_path)
    assert set(files(tmp_path)) == ALL_FILES
    assert json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["scars"] == {
        "command": "scars",
        "args": ["mcp"],
    }
    assert json.loads((tmp_path / ".gemini/settings.json").read_text())["mcpServers"]["scars"]["args"] == ["mcp"]
    codex = tomllib.loads((tmp_path / ".codex/config.toml").read_text())
    assert codex["mcp_servers"]["scars"] == {"command": "scars", "args": ["mcp"]}
    hooks = json.loads((tmp_path / ".claude/settings.json").read_text())["hooks"]["PreToolUse"]
    assert hooks == [wiring.HOOK] and "Bash" in hooks[0]["matcher"].split("|") and "Edit" in hooks[0]["matcher"]
    for md in ("CLAUDE.md", "AGENTS.md", "GEMINI.md"):
        assert (tmp_path / md).read_text() == section()
    init(tmp_path, remove=True)
    assert files(tmp_path) == {}
    assert sorted(os.listdir(tmp_path)) == []  # the folders it made are gone too


def test_a_second_run_changes_nothing(tmp_path):
    init(tmp_path)
    before = files(tmp_path)
    again = wiring.plan(tmp_path)
    assert not any(c.changed for c in again)
    assert {c.note for c in again} == {"already there"}
    wiring.apply(tmp_path, again)
    assert files(tmp_path) == before


USER_MCP = '{\n    "mcpServers": {\n        "other": {"command": "x", "args": []}\n    },\n    "zeta": [1, 2, 3]\n}\n'
USER_SETTINGS = (
    '{"permissions": {"allow": ["Bash(ls:*)"]},\n'
    ' "hooks": {"PreToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": "x"}]}]}}'
)
USER_CLAUDE = "# My project\n\nUse tabs.\n"


def existing(repo: Path) -> dict[str, bytes]:
    (repo / ".mcp.json").write_text(USER_MCP)
    (repo / ".claude").mkdir()
    (repo / ".claude/settings.json").write_text(USER_SETTINGS)
    (repo / "CLAUDE.md").write_text(USER_CLAUDE)
    return files(repo)


def test_existing_files_keep_every_byte_the_user_wrote(tmp_path):
    before = existing(tmp_path)
    init(tmp_path, ["claude-code"])
    mcp = (tmp_path / ".mcp.json").read_text()
    # the user's text is all there, in order, untouched: scars only inserted text
    assert mcp.startswith('{\n    "mcpServers": {\n        "other": {"command": "x", "args": []}')
    assert mcp.endswith('\n    },\n    "zeta": [1, 2, 3]\n}\n')
    assert '        "scars": {\n            "command": "scars",' in mcp  # the file's own 4-space indent
    data = json.loads(mcp)
    assert data["mcpServers"]["other"] == {"command": "x", "args": []} and data["zeta"] == [1, 2, 3]
    settings = json.loads((tmp_path / ".claude/settings.json").read_text())
    assert settings["permissions"] == {"allow": ["Bash(ls:*)"]}
    assert settings["hooks"]["PreToolUse"][0] == {"matcher": "Read", "hooks": [{"type": "command", "command": "x"}]}
    assert settings["hooks"]["PreToolUse"][1] == wiring.HOOK
    assert (tmp_path / "CLAUDE.md").read_text() == USER_CLAUDE + "\n" + section()
    assert set(files(tmp_path)) == {".mcp.json", ".claude/settings.json", "CLAUDE.md"}  # --agent claude-code only
    init(tmp_path, ["claude-code"], remove=True)
    assert files(tmp_path) == before


def test_remove_gives_back_a_file_without_a_final_newline(tmp_path):
    (tmp_path / "CLAUDE.md").write_bytes(b"# mine\nno newline")
    (tmp_path / ".mcp.json").write_bytes(b"{}")
    before = files(tmp_path)
    init(tmp_path, ["claude-code"])
    assert (tmp_path / "CLAUDE.md").read_bytes().startswith(b"# mine\nno newline\n" + BEGIN.encode())
    init(tmp_path, ["claude-code"], remove=True)
    assert files(tmp_path) == before


def test_an_empty_object_of_the_user_is_kept_by_remove(tmp_path):
    """`"hooks": {}` was the user's: the removal takes the PreToolUse list scars put in it, not it."""
    (tmp_path / ".claude").mkdir()
    original = b'{"hooks": {}, "model": "opus"}\n'
    (tmp_path / ".claude/settings.json").write_bytes(original)
    init(tmp_path, ["claude-code"])
    assert json.loads((tmp_path / ".claude/settings.json").read_text())["hooks"]["PreToolUse"] == [wiring.HOOK]
    init(tmp_path, ["claude-code"], remove=True)
    assert (tmp_path / ".claude/settings.json").read_bytes() == original


def test_a_level_scars_added_whole_goes_with_remove(tmp_path):
    original = b'{\n  "model": "opus"\n}\n'
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude/settings.json").write_bytes(original)
    init(tmp_path, ["claude-code"])
    assert '"hooks": {\n    "PreToolUse": [' in (tmp_path / ".claude/settings.json").read_text()
    init(tmp_path, ["claude-code"], remove=True)
    assert (tmp_path / ".claude/settings.json").read_bytes() == original


def test_a_server_of_the_users_own_under_scars_name_is_kept(tmp_path):
    mine = b'{"mcpServers": {"scars": {"command": "/opt/scars/bin/scars", "args": ["mcp"]}}}'
    (tmp_path / ".mcp.json").write_bytes(mine)
    (tmp_path / ".codex").mkdir()
    toml_mine = b'[mcp_servers.scars]\ncommand = "/opt/bin/scars"\nargs = ["mcp"]\n'
    (tmp_path / ".codex/config.toml").write_bytes(toml_mine)
    changes = {c.target.rel: c for c in init(tmp_path)}
    assert (tmp_path / ".mcp.json").read_bytes() == mine and not changes[".mcp.json"].changed
    assert changes[".mcp.json"].note.startswith("kept")
    assert (tmp_path / ".codex/config.toml").read_bytes() == toml_mine and changes[
        ".codex/config.toml"
    ].note.startswith("kept")
    init(tmp_path, remove=True)  # never scars' to take out
    assert (tmp_path / ".mcp.json").read_bytes() == mine
    assert (tmp_path / ".codex/config.toml").read_bytes() == toml_mine


def test_codex_config_gets_a_table_that_reads_with_the_users(tmp_path):
    (tmp_path / ".codex").mkdir()
    mine = b'model = "o3"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'
    (tmp_path / ".codex/config.toml").write_bytes(mine)
    init(tmp_path, ["codex"])
    data = tomllib.loads((tmp_path / ".codex/config.toml").read_text())
    assert data["model"] == "o3" and set(data["mcp_servers"]) == {"docs", "scars"}
    assert (tmp_path / ".codex/config.toml").read_bytes().startswith(mine)
    init(tmp_path, ["codex"], remove=True)
    assert (tmp_path / ".codex/config.toml").read_bytes() == mine


def test_a_section_with_other_words_is_replaced_in_place(tmp_path):
    old = f"# top\n\n{BEGIN}\nold words\n{END}\n\n# after\n"
    (tmp_path / "AGENTS.md").write_text(old)
    init(tmp_path, ["codex"])
    text = (tmp_path / "AGENTS.md").read_text()
    assert text == "# top\n\n" + section() + "\n# after\n"
    assert text.count(BEGIN) == 1


def test_dry_run_diff_and_no_write(tmp_path):
    before = existing(tmp_path)
    changes = wiring.plan(tmp_path, ["claude-code"])
    text = wiring.diff(changes)
    assert "--- a/.mcp.json\n+++ b/.mcp.json\n" in text
    assert '+        "scars": {\n' in text
    assert "+" + BEGIN + "\n" in text
    assert files(tmp_path) == before
    assert wiring.diff(wiring.plan(tmp_path, ["claude-code"], remove=True)) == ""  # nothing of scars' to remove


def test_a_new_file_shows_as_created_in_the_diff(tmp_path):
    text = wiring.diff(wiring.plan(tmp_path, ["gemini"]))
    assert "--- /dev/null\n+++ b/.gemini/settings.json\n" in text and "--- /dev/null\n+++ b/GEMINI.md\n" in text


def test_a_symlinked_mcp_json_leading_out_is_refused_and_nothing_is_written(tmp_path):
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    repo.mkdir()
    outside.mkdir()
    (outside / "mcp.json").write_text('{"mine": 1}')
    (repo / ".mcp.json").symlink_to(outside / "mcp.json")
    with pytest.raises(OutsideRepository):
        wiring.plan(repo)
    assert (outside / "mcp.json").read_text() == '{"mine": 1}'
    assert sorted(os.listdir(repo)) == [".mcp.json"]


def test_a_symlink_inside_the_repository_is_followed(tmp_path):
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf/mcp.json").write_text("{}")
    (tmp_path / ".mcp.json").symlink_to("conf/mcp.json")
    init(tmp_path, ["claude-code"])
    assert (tmp_path / ".mcp.json").is_symlink()
    assert "scars" in json.loads((tmp_path / "conf/mcp.json").read_text())["mcpServers"]


@pytest.mark.parametrize("text", ['["not", "an", "object"]', '{"mcpServers": []}', "{broken"])
def test_json_scars_cannot_merge_into_is_refused_unchanged(tmp_path, text):
    (tmp_path / ".mcp.json").write_text(text)
    with pytest.raises(UsageError):
        wiring.plan(tmp_path, ["claude-code"])
    assert (tmp_path / ".mcp.json").read_text() == text


def test_unknown_agent_is_a_usage_error():
    with pytest.raises(UsageError):
        wiring.agents_of(["cursor"])
    assert wiring.agents_of(None) == wiring.AGENTS
    assert wiring.agents_of(["gemini", "codex"]) == ("codex", "gemini")


def test_the_section_names_every_gate_a_person_answers_and_every_tool():
    text = section()
    for g in GATES.values():
        assert (f"`{g.id}`" in text) == g.cli, g.id
    for name, _what in MCP_TOOLS:
        assert f"`{name}`" in text
    assert "request_gate" in text and "wait_for_answer" in text and "--wait" in text
    assert text.startswith(BEGIN + "\n") and text.endswith(END + "\n")


@pytest.mark.parametrize(
    "doc",
    ["{}", "{ }", '{"a": 1}', '{\n\t"a": {\n\t\t"b": []\n\t}\n}', '[1, {"x": []}]', '{"a": [], "b": {}}'],
)
def test_jsonedit_add_then_remove_is_the_identity(doc):
    root = jsonedit.parse(doc)
    target = root if root.kind == "object" else root.items[1]
    added = jsonedit.add_member(doc, target, "scars", {"k": [1, 2]}, jsonedit.indent_unit(doc, root))
    assert json.loads(added) is not None
    again = jsonedit.parse(added)
    target2 = again if again.kind == "object" else again.items[1]
    assert jsonedit.value_of(added, target2.member("scars")) == {"k": [1, 2]}
    assert jsonedit.remove_member(added, target2, "scars") == doc


def test_jsonedit_a_one_line_object_gets_its_member_on_the_same_line():
    doc = '{"a": 1}'
    added = jsonedit.add_member(doc, jsonedit.parse(doc), "b", 2, "  ")
    assert added == '{"a": 1, "b": 2}'
    doc = '{\n  "a": 1\n}'
    assert jsonedit.add_member(doc, jsonedit.parse(doc), "b", 2, "  ") == '{\n  "a": 1,\n  "b": 2\n}'
