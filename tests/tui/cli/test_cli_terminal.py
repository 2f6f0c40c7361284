"""The app's terminal check: what `scars triage` and bare `scars` say and do without a terminal
that can draw the app (no TTY, or TERM=dumb on a real pseudo-terminal)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.factories import app_repo, scars_process


@pytest.fixture
def feature_dir(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    return app_repo(root)


def test_triage_without_a_tty_names_the_commands_as_they_are_spelled(feature_dir):
    p = scars_process("triage", str(feature_dir), cwd=feature_dir)
    assert p.returncode == 2
    assert "scars triage: needs an interactive terminal" in p.stderr
    assert "scars decide ITEM --fix --feature FEATURE_DIR" in p.stderr
    assert "scars decide FEATURE ITEM" not in p.stderr


def test_bare_scars_without_a_tty_says_scars_not_scars_space(feature_dir):
    p = scars_process(cwd=feature_dir.parents[1])
    assert p.returncode == 2
    assert "\nscars: needs an interactive terminal" in p.stderr and "scars :" not in p.stderr


def test_term_dumb_on_a_real_terminal_does_not_start_the_app(feature_dir):
    leader, follower = pty.openpty()
    try:
        p = subprocess.run(
            [sys.executable, "-m", "scars.tui", "triage", str(feature_dir)],
            stdin=follower,
            stdout=follower,
            stderr=follower,
            timeout=60,
            env={**os.environ, "TERM": "dumb"},
        )
        os.close(follower)
        follower = -1
        out = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
    finally:
        if follower != -1:
            os.close(follower)
        os.close(leader)
    assert p.returncode == 2
    text = out.decode("utf-8", "replace")
    assert "TERM=dumb cannot draw the full-screen app" in text and "\x1b[?1049h" not in text
