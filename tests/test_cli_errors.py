"""The CLI edge: typed errors map to exit codes; a bug prints one line, not a traceback."""

from __future__ import annotations

import pytest

from scars.core.errors import LockHeld
from scars.tui import cli
from scars.tui.commands import status


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
