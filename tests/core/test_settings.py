"""scars.core.settings: every environment variable scars reads, read once per command, and no
other module reading the environment."""

from __future__ import annotations

import re
from pathlib import Path

from scars.core import settings
from scars.core.settings import env_var, from_environ
from tests.factories import ROOT, run_cli


def test_every_variable_is_taken_from_the_environment_given():
    env = {
        "SCARS_USER": "ann",
        "SCARS_NO_CACHE": "yes",
        "SCARS_CACHE_DIR": "/c",
        "SCARS_WORKERS": "3",
        "SCARS_DEBUG": "1",
        "XDG_CONFIG_HOME": "/cfg",
        "SCARS_ANSWER_ROUND_CONTINUE": "stop",
        "SCARS_REASON_ROUND_CONTINUE": "nothing to fix",
        "LOOP_SPEC_BACKLOG_FILE": "/b.md",
        "LOOP_SPEC_NON_INTERACTIVE": "1",
        "LOOP_SPEC_ANSWER_ITERATE_SPEC": "ship",
        "LOGNAME": "ann-login",
        "GIT_DIR": "/elsewhere/.git",
        "GIT_CONFIG_GLOBAL": "/g",
    }
    s = from_environ(env)
    assert (s.user, s.login, s.cache_enabled, s.cache_dir, s.workers, s.debug, s.config_home) == (
        "ann",
        "ann-login",
        False,
        Path("/c"),
        3,
        True,
        Path("/cfg"),
    )
    assert (s.gate_answer("round-continue"), s.gate_reason("round-continue"), s.gate_answer("spec")) == (
        "stop",
        "nothing to fix",
        None,
    )
    assert (s.loop_spec_backlog_file, s.loop_spec_non_interactive, s.loop_spec_iterate_spec_answer) == (
        "/b.md",
        True,
        "ship",
    )
    assert "GIT_DIR" not in s.git_env and s.git_env["GIT_CONFIG_GLOBAL"] == "/g"
    assert s.git_env["GIT_TERMINAL_PROMPT"] == "0" and s.git_env["LC_ALL"] == "C"


def test_defaults_and_edges():
    home = Path.home()
    s = from_environ({"XDG_CACHE_HOME": "relative/dir", "SCARS_WORKERS": "two", "LOOP_SPEC_NON_INTERACTIVE": "0"})
    assert s.cache_dir == home / ".cache" / "scars"  # a relative XDG_CACHE_HOME is ignored
    assert s.workers is None and not s.loop_spec_non_interactive and s.cache_enabled
    assert from_environ({"XDG_CACHE_HOME": "/x"}).cache_dir == Path("/x/scars")
    assert from_environ({}).config_home == home / ".config"
    assert from_environ({"XDG_STATE_HOME": "relative"}).state_dir == home / ".local" / "state" / "scars"
    assert from_environ({"XDG_STATE_HOME": "/st"}).state_dir == Path("/st/scars")
    assert from_environ({"XDG_STATE_HOME": "/st", "SCARS_STATE_DIR": "/mine"}).state_dir == Path("/mine")
    assert from_environ({"XDG_STATE_HOME": "/st", "SCARS_STATE_DIR": "rel"}).state_dir == Path("/st/scars")
    assert env_var("round-continue", "REASON") == "SCARS_REASON_ROUND_CONTINUE"


def test_read_once_per_command(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SCARS_USER", "first")
    assert settings.current().user == "first"
    monkeypatch.setenv("SCARS_USER", "second")
    assert settings.current().user == "first"  # a running command keeps the environment it started with
    # Each command takes its own snapshot: `scars` run again sees the new value.
    feature = tmp_path / "changes" / "2026-01-01_x" / "scar-reports"
    feature.mkdir(parents=True)
    run_cli(["status", str(tmp_path), "--json"], capsys)
    assert settings.current().user == "second"


def test_no_module_but_settings_reads_the_environment():
    readers = re.compile(r"os\.environ|os\.getenv|getenv\(|getpass\.")
    found = [
        f"{p.relative_to(ROOT)}:{n}"
        for top in ("core", "tui")
        for p in sorted((ROOT / top).rglob("*.py"))
        if p.name != "settings.py" or p.parent.name != "core"
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if readers.search(line)
    ]
    assert found == []


def test_the_docs_table_lists_every_variable_read():
    source = (ROOT / "core" / "settings.py").read_text(encoding="utf-8")
    names = set(re.findall(r'get\("([A-Z_]+)"\)', source)) | {"SCARS_ANSWER_<GATE>", "SCARS_REASON_<GATE>"}
    assert {"SCARS_USER", "SCARS_WORKERS", "XDG_CONFIG_HOME", "LOOP_SPEC_BACKLOG_FILE"} <= names
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")  # moved from the README
    table = page.split("\n## Environment variables\n", 1)[1].split("\n## ", 1)[0]
    assert [n for n in sorted(names) if f"`{n}`" not in table] == []


def test_config_file_values_problems_and_the_environment_winning(tmp_path, monkeypatch):
    from scars.core.samsara.decisions import resolve_user

    cfg = tmp_path / "scars" / "config.toml"
    cfg.parent.mkdir()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("SCARS_USER", raising=False)
    assert settings.load().config_problems == () and settings.current().theme is None  # no file: no problem
    cfg.write_text('user = "ann"\ntheme = "nord"\ncolumns = ["task", "decision"]\n', encoding="utf-8")
    s = settings.load()
    assert (s.config_user, s.theme, s.columns, s.config_problems) == ("ann", "nord", ("decision", "task"), ())
    assert resolve_user() == "ann"
    monkeypatch.setenv("SCARS_USER", "bob")
    settings.load()
    assert resolve_user() == "bob"  # the environment wins over the file
    cfg.write_text('columns = ["colour"]\nthemes = "x"\n', encoding="utf-8")
    s = settings.load()
    assert s.columns == settings.COLUMNS and len(s.config_problems) == 2
    assert "'columns' must be a list of decision, category, task" in s.config_problems[0]
    assert "unknown key 'themes'" in s.config_problems[1]
    cfg.write_text("user = \n", encoding="utf-8")
    assert "not valid TOML" in settings.load().config_problems[0]


def test_scars_config_says_where_the_configuration_lives(tmp_path, monkeypatch, capsys):
    import json

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    (tmp_path / "scars").mkdir()
    (tmp_path / "scars" / "config.toml").write_text('theme = "nord"\n', encoding="utf-8")
    code, out, _ = run_cli(["config", "--json"], capsys)
    obj = json.loads(out)
    assert code == 0 and obj["config_file"] == str(tmp_path / "scars" / "config.toml") and obj["config_file_exists"]
    assert obj["keymap_file"] == str(tmp_path / "scars" / "keymap.toml") and obj["values"]["theme"] == "nord"
    code, out, _ = run_cli(["config"], capsys)
    assert f"config.toml  {tmp_path / 'scars' / 'config.toml'}" in out
