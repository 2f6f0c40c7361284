"""`scars config` says what each configuration path is (issue 32: a FIFO, a directory or a device
was reported as "not there")."""

from __future__ import annotations

import json
import os

import pytest

from scars.core import settings
from tests.factories import run_cli


@pytest.fixture
def config_home(tmp_path, monkeypatch):
    home = tmp_path / "xdg"
    (home / "scars").mkdir(parents=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    settings.clear()
    return home / "scars"


@pytest.mark.parametrize(
    ("make", "kind", "said"),
    [
        (None, "missing", "(not there: defaults apply)"),
        (lambda p: p.write_text('theme = "nord"\n'), "file", None),
        (lambda p: p.mkdir(), "directory", "(a directory, not a file: ignored, defaults apply)"),
        (lambda p: os.mkfifo(p), "fifo", "(a FIFO, not a file: ignored, defaults apply)"),
        (lambda p: p.symlink_to("/dev/null"), "device", "(a device, not a file: ignored, defaults apply)"),
    ],
)
def test_each_path_is_said_as_what_it_is(config_home, capsys, make, kind, said):
    for name in ("config.toml", "keymap.toml"):
        if make is not None:
            make(config_home / name)
    settings.clear()
    code, out, _ = run_cli(["config", "--json"], capsys)
    got = json.loads(out)
    assert code == 0 and got["config_file_kind"] == kind == got["keymap_file_kind"]
    assert got["config_file_exists"] is (kind == "file")
    code, out, _ = run_cli(["config"], capsys)
    lines = {line.split()[0]: line for line in out.splitlines()}
    for name in ("config.toml", "keymap.toml"):
        assert lines[name].endswith(said) if said else lines[name].endswith(name)


@pytest.mark.parametrize(("theme", "known"), [("nord", True), ("Nord", False), ("no-such-theme", False)])
def test_an_unknown_theme_is_flagged_by_name(config_home, capsys, theme, known):
    """Before: `scars config` showed any theme as set; only the app said it was unknown."""
    (config_home / "config.toml").write_text(f'theme = "{theme}"\n')
    settings.clear()
    code, out, _ = run_cli(["config", "--json"], capsys)
    got = json.loads(out)
    assert code == 0 and got["values"]["theme"] == theme
    flagged = [p for p in got["problems"] if f"unknown theme '{theme}'" in p]
    assert bool(flagged) is not known
    code, _out, err = run_cli(["config"], capsys)
    assert (f"unknown theme '{theme}': the app uses textual-dark" in err) is not known


def test_the_theme_list_is_the_apps():
    """core's list (the CLI may not import Textual) is the app's: textual is pinned exactly."""
    from scars.tui.app.app import ScarsApp

    assert set(settings.THEMES) == set(ScarsApp(None).available_themes)
    assert settings.DEFAULT_THEME in settings.THEMES
