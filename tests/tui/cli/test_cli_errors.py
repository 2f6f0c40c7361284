"""The CLI edge: typed errors map to exit codes; a bug prints one line, not a traceback."""

from __future__ import annotations

import sys

import pytest

from scars.core.errors import LockHeld
from scars.tui.cli import main as cli
from scars.tui.cli.commands import status


def test_unexpected_error_is_one_line_and_exit_1(monkeypatch, capsys, tmp_path):
    def boom(args):
        raise RuntimeError("kaputt")

    monkeypatch.delenv("SCARS_DEBUG", raising=False)
    monkeypatch.setattr(status, "run", boom)
    assert cli.main(["status", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "internal error: RuntimeError: kaputt" in err
    assert "Traceback" not in err


def test_scars_debug_shows_the_traceback(monkeypatch, tmp_path):
    monkeypatch.setenv("SCARS_DEBUG", "1")
    monkeypatch.setattr(status, "run", lambda args: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        cli.main(["status", str(tmp_path)])


def test_typed_error_maps_to_its_exit_code(monkeypatch, capsys, tmp_path):
    def held(args):
        raise LockHeld("held by pid 1")

    monkeypatch.setattr(status, "run", held)
    assert cli.main(["status", str(tmp_path)]) == 5
    assert "held by pid 1" in capsys.readouterr().err


@pytest.mark.parametrize("source", [None, "raise RuntimeError('half-installed')\n"], ids=["missing", "broken"])
def test_a_missing_or_broken_command_module_fails_loudly(monkeypatch, capsys, tmp_path, source):
    """No command is silently left out of `scars --help` (a broken installation says so)."""
    module_name = "scars_test_ghost_command"
    if source is not None:
        (tmp_path / f"{module_name}.py").write_text(source, encoding="utf-8")
        monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, module_name, raising=False)
    monkeypatch.setattr(cli, "COMMANDS", cli.COMMANDS + (("ghost", module_name, "a command that cannot load"),))
    monkeypatch.delenv("SCARS_DEBUG", raising=False)
    with pytest.raises(cli.CommandModuleError, match=f"'ghost' command cannot be loaded .*{module_name}"):
        cli._load_commands()
    assert cli.main(["ghost"]) == 1
    err = capsys.readouterr().err
    assert module_name in err and "Traceback" not in err
    # `scars --help` imports no command module: it lists the command from its summary, and
    # every other command still runs (it imports its own module only).
    with pytest.raises(SystemExit) as exc:
        cli.main(["--help"])
    assert exc.value.code == 0 and "ghost" in capsys.readouterr().out
    assert cli.main(["status", str(tmp_path)]) == 2  # not a feature: status ran


def test_every_listed_command_loads():
    assert [name for name, _ in cli._load_commands()] == [name for name, _module, _summary in cli.COMMANDS]
