"""`scars serve` needs textual-serve, the optional `serve` extra (issue 32): without it the command
says exactly how to install it (a usage error, exit 2) and starts nothing; the modules it looks
for are the ones its server imports, and the extra it names is the one pyproject declares."""

from __future__ import annotations

import ast
import inspect
import sys
import tomllib

import pytest

from scars.tui.cli.commands import serve
from tests.factories import ROOT, run_cli


@pytest.mark.parametrize("hidden", serve.NEEDS)
def test_without_the_extra_serve_says_how_to_install_it(feature_dir, capsys, monkeypatch, hidden):
    monkeypatch.setitem(sys.modules, hidden, None)  # as if not installed: find_spec gives None
    started = []
    monkeypatch.setattr(serve, "make_server", lambda *a, **k: started.append(a))
    code, out, err = run_cli(["serve", str(feature_dir)], capsys)
    assert code == 2
    assert err == f"scars: {serve.INSTALL_HINT}\n" and out == ""
    assert "pip install 'scars[serve]'" in err
    assert started == []


def test_the_hint_comes_before_the_arguments_are_judged(feature_dir, capsys, monkeypatch):
    """A bad --port is not worth fixing before the command can run at all."""
    monkeypatch.setitem(sys.modules, "textual_serve", None)
    code, _out, err = run_cli(["serve", str(feature_dir), "--port", "0"], capsys)
    assert code == 2 and "scars[serve]" in err and "--port" not in err


def test_with_the_extra_nothing_is_missing():
    pytest.importorskip("textual_serve")
    assert serve.missing_modules() == []


def test_the_hint_names_the_extra_pyproject_declares():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert any(req.startswith("textual-serve") for req in extras["serve"])
    for form in ("pip install 'scars[serve]'", "pipx install --force 'scars[serve]'", "uv tool install 'scars[serve]'"):
        assert form in serve.INSTALL_HINT, form
    assert "'.[serve]'" in serve.INSTALL_HINT  # from a checkout, as the README installs it
    assert "scars[serve]" in serve.DESCRIPTION  # --help says so too


def test_the_modules_looked_for_are_the_ones_the_server_imports():
    """NEEDS is every third-party module make_server imports (a new import there would fail with
    a traceback instead of the hint)."""
    tree = ast.parse(inspect.getsource(serve.make_server).lstrip())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    third_party = {name for name in imported if name not in sys.stdlib_module_names and name != "scars"}
    assert third_party == set(serve.NEEDS)
