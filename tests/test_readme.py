"""The README's Quick start is a promise: CI runs exactly its test command."""

from __future__ import annotations

import re

from tests.factories import ROOT


def _quick_start_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", section)


def test_quick_start_has_exactly_two_commands():
    commands = _quick_start_commands()
    assert len(commands) == 2
    assert "scars demo" in commands[0]
    assert "[test]" in commands[1] and "pytest" in commands[1]


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _quick_start_commands()[1] in ci.splitlines()
