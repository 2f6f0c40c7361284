"""The published pre-commit hook runs `scars log verify` on staged loop logs."""

from __future__ import annotations

import re

import yaml

from scars.tui.cli.main import COMMANDS
from tests.factories import ROOT


def _hooks() -> list[dict]:
    return yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))


def test_hook_definition():
    (hook,) = _hooks()
    assert hook["id"] == "scars-log-verify"
    assert hook["language"] == "python"
    assert hook["pass_filenames"] is False
    assert hook["entry"].split() == ["scars", "log", "verify"]
    assert ("log", "scars.tui.cli.commands.log") in {(name, module) for name, module, _summary in COMMANDS}
    # The console script the entry names is the one the package installs.
    assert 'scars = "scars.tui.cli.main:entry"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_hook_file_filter():
    (hook,) = _hooks()
    pattern = re.compile(hook["files"])  # pre-commit applies it with re.search to staged paths
    for path in ("changes/2026-07-02_x/iteration-log.yaml", "changes/a/auto-decisions.md", "iteration-log.yaml"):
        assert pattern.search(path), path
    for path in (
        "changes/a/my-iteration-log.yaml",
        "changes/a/iteration-log.yaml.bak",
        "docs/auto-decisions.md.txt",
        "changes/a/scar-reports/task-1-scar.yaml",
    ):
        assert not pattern.search(path), path
