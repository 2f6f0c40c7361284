"""The command line as a daily tool: examples in every --help, a fast --version, one JSON error
object for every --json command, and shell completion made from the parser."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from scars.tui.cli import main as cli
from tests.factories import run_cli

COMMANDS = [name for name, _module, _summary in cli.COMMANDS]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_help_has_examples(command, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main([command, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "Examples:\n  scars " + command in out


@pytest.mark.parametrize("sub", ["start", "close", "status", "flush"])
def test_round_subcommands_describe_themselves(sub, capsys):
    with pytest.raises(SystemExit):
        cli.main(["round", sub, "--help"])
    out = capsys.readouterr().out
    description = out.split("\n\n")[1]
    assert not description.startswith(("options", "positional")) and len(description) > 40


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_loads_no_command(flag):
    code = (
        f"import sys; from scars.tui.cli.main import main; rc = main([{flag!r}]); "
        "print(rc, [m for m in sys.modules if m.startswith('scars.tui.cli.commands')])"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    first, last = p.stdout.splitlines()
    assert first.startswith("scars ") and last == "0 []"


@pytest.mark.parametrize(
    "argv",
    [
        ["status", "/nonexistent/dir", "--json"],
        ["loops", "/nonexistent/dir", "--json"],
        ["export", "/nonexistent/dir", "--json"],
        ["status", "--no-such-flag", "--json"],
        ["undo", "--feature", "/nonexistent/dir", "--json"],
    ],
    ids=["status", "loops", "export", "usage", "undo"],
)
def test_every_json_command_prints_one_json_error(argv, capsys, tmp_path):
    code, out, err = run_cli(argv, capsys)
    assert code == 2, err
    obj = json.loads(out)
    assert obj["ok"] is False and obj["exit_code"] == 2 and obj["message"]


def completions(script: str, *words: str) -> list[str]:
    probe = (
        f"source {script}\n"
        f"COMP_WORDS=({' '.join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}; _scars; "
        'printf "%s\\n" "${COMPREPLY[@]}"'
    )
    p = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout.split()


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_bash_completion_of_commands_subcommands_options_and_choices(tmp_path, capsys):
    code, out, _ = run_cli(["completion", "bash"], capsys)
    assert code == 0
    script = tmp_path / "scars.bash"
    script.write_text(out, encoding="utf-8")
    assert completions(script, "scars", "ro") == ["round"]
    assert "close" in completions(script, "scars", "round", "c")
    assert completions(script, "scars", "round", "close", "--dec") == ["--decision"]
    assert completions(script, "scars", "round", "close", "--decision", "s") == ["stop"]
    assert completions(script, "scars", "gate", "round-c") == ["round-continue"]
    assert completions(script, "scars", "export", "x", "--format", "o") == ["openvex"]
    assert completions(script, "scars", "status", "--j") == ["--json"]


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_scripts_name_every_command(shell, capsys):
    code, out, _ = run_cli(["completion", shell], capsys)
    assert code == 0 and all(name in out for name in COMMANDS)
    if shutil.which(shell):
        p = subprocess.run([shell, "-n"], input=out, capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr


def test_one_spelling_per_meaning():
    """Issue 16: gate --feature named a bkit feature where every other --feature is a directory;
    watch check took --user where every other command takes --as; export had no default format."""
    parser = cli.build_parser()
    assert parser.parse_args(["gate", "pdca-continue", "--bkit-feature", "auth"]).feature == "auth"
    assert parser.parse_args(["gate", "pdca-continue", "--feature", "auth"]).feature == "auth"  # earlier spelling
    assert parser.parse_args(["watch", "check", "--as", "ann"]).user == "ann"
    assert parser.parse_args(["watch", "check", "--user", "ann"]).user == "ann"
    assert parser.parse_args(["export"]).format == "json"


def test_a_missing_path_is_said_one_way_by_every_command(tmp_path, capsys):
    """Issue 16: status said 'does not exist', loops 'no such file or directory', triage 'no such
    directory'. One wording (errors.PathNotFound.missing), exit 2, whichever command was given it."""
    gone = tmp_path / "gone"
    for argv in (
        ["status", str(gone)],
        ["loops", str(gone)],
        ["advise", str(gone)],
        ["triage", str(gone)],
        ["requests", str(gone)],
        ["log", "verify", str(gone)],
        ["gate", "spec", str(gone), "--answer", "ship"],
    ):
        code = cli.main(argv)
        err = capsys.readouterr().err
        assert code == 2 and f"{gone} does not exist" in err, (argv, code, err)


def _help(argv, capsys, monkeypatch, columns: int) -> str:
    monkeypatch.setenv("COLUMNS", str(columns))
    with pytest.raises(SystemExit) as exc:
        cli.main([*argv, "--help"])
    assert exc.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("command", [*COMMANDS, "round close"])
@pytest.mark.parametrize("columns", [80, 120])
def test_help_is_wrapped_to_the_terminal_never_inside_a_word(command, columns, capsys, monkeypatch):
    """Descriptions were one line of up to 1,335 characters that broke mid-word at 80 columns."""
    out = _help(command.split(), capsys, monkeypatch, columns)
    body = out.split("\n\n", 1)[1]  # after argparse's usage block (it keeps an option group whole)
    too_long = [line for line in body.splitlines() if len(line) > columns and len(line.split()) > 1]
    assert too_long == []
    modules = {name: module for name, module, _ in cli.COMMANDS}
    if command in modules:
        description = cli._import_command(command, modules[command]).DESCRIPTION
        assert " ".join(description.split()) in " ".join(out.split())  # every word whole, in order


@pytest.mark.parametrize(
    ("word", "hint"),
    [
        ("stauts", "did you mean 'status'?"),
        ("gates", "did you mean 'gate'?"),
        ("xyzzy", None),
        ("requets", "did you mean 'requests'?"),
    ],
)
def test_an_unknown_command_says_what_it_may_have_meant(word, hint, capsys):
    code, out, err = run_cli([word, "--json"], capsys)
    assert code == 2 and f"unknown command {word!r}" in err and "`scars --help` lists the commands" in err
    assert (hint in err) if hint else ("did you mean" not in err)
    assert json.loads(out)["exit_code"] == 2


def _commands_of(parser) -> list[str]:
    import argparse

    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return list(sub.choices)


def test_a_command_line_builds_the_parser_of_its_command_only_and_help_lists_them_all():
    from scars.tui.cli import main as cli

    every = [name for name, _module, _summary in cli.COMMANDS]
    assert _commands_of(cli.build_parser(load=("status",))) == ["status"]
    assert _commands_of(cli.build_parser(load=())) == every
    assert _commands_of(cli.build_parser()) == every
