"""A loop folder whose name holds escape sequences (issue 27, smaller defects): bare `scars` without
a terminal and `scars gate` printed the name raw to stderr (ESC, BEL, U+202E). Every path printed
goes through the one sanitiser; a path inside a command a person copies is ANSI-C quoted
(``sanitize.shell_word``), inert on the terminal and still the same argument when pasted into bash.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest

from scars.core.sanitize import UNSAFE, shell_join, shell_word
from tests.factories import clean_env, loop_spec_feature
from tests.hostile.probe import run_cli

NAME = "feat\x1b[2J\x07\u202ex"


@pytest.fixture
def hostile_spec(tmp_path: Path, monkeypatch) -> Path:
    clean_env(monkeypatch)
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    feature = loop_spec_feature(root)
    return feature.rename(feature.with_name(NAME))


def test_bare_scars_without_a_terminal_names_the_loop_inert(hostile_spec, monkeypatch):
    monkeypatch.chdir(hostile_spec.parents[2])
    res = run_cli([])
    assert res["rc"] == 2 and not res["traceback"]  # no terminal: the app is not started
    assert res["raw_control"] == [], res["stderr"]
    assert "scars gate spec $'" in res["stderr"] and "\\e[2J\\a\\u202ex" in res["stderr"]


def test_a_gate_that_needs_a_human_names_its_path_inert(hostile_spec):
    res = run_cli(["gate", "spec", str(hostile_spec)])
    assert res["rc"] == 3 and res["raw_control"] == [], res["stderr"]
    assert shell_word(str(hostile_spec)) in res["stderr"]


def test_every_error_message_is_said_inert(hostile_spec):
    """An error whose message holds the name (here: a path that does not exist) is inert too."""
    res = run_cli(["status", str(hostile_spec / "missing\x1b]0;owned\x07")])
    assert res["rc"] == 2 and res["raw_control"] == [], res["stderr"]


WORDS = [NAME, "it's\x1b\\", "a\nb\tc", "tag\U000e0041", "c1\x9b", "\x7f\x01", "plain", "with space", ""]


@pytest.mark.parametrize("word", WORDS, ids=repr)
def test_a_shell_word_is_inert_and_pastes_as_the_same_argument(word):
    quoted = shell_word(word)
    assert UNSAFE.search(quoted) is None and "\n" not in quoted and "\t" not in quoted
    env = {**os.environ, "LC_ALL": "C.UTF-8"}
    out = subprocess.run(["bash", "-c", "printf %s " + quoted], capture_output=True, env=env, check=True)
    assert out.stdout.decode("utf-8") == word


def test_plain_words_are_quoted_as_shlex_quotes_them():
    words = ["scars", "gate", "spec", "/a b/c", "it's"]
    assert shell_join(words) == shlex.join(words)
