"""scars.core must stay pure: importing it loads no terminal library."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pytest

FORBIDDEN = ("textual", "rich", "questionary", "prompt_toolkit", "scars.tui")


def _core_modules() -> list[str]:
    import scars.core

    names = ["scars.core"]
    for info in pkgutil.walk_packages(scars.core.__path__, "scars.core."):
        names.append(info.name)
    return names


def test_importing_every_core_module_loads_no_terminal_library():
    modules = _core_modules()
    assert len(modules) > 3
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"bad = sorted(n for n in sys.modules if any(n == f or n.startswith(f + '.') for f in {FORBIDDEN!r}))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"scars.core imported: {out.stdout.strip()}"


def test_help_does_not_import_textual():
    code = (
        "import sys\n"
        "from scars.tui.cli import main as cli\n"
        "try:\n    cli.main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print('textual' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_every_command_module_exposes_the_command_protocol():
    from scars.tui.cli.main import COMMANDS

    for _name, module_name, summary in COMMANDS:
        module = importlib.import_module(module_name)  # every listed command is present
        assert callable(module.add_arguments) and callable(module.run), module_name
        assert isinstance(summary, str) and summary and not hasattr(module, "HELP"), module_name


def test_the_public_face_is_cheap_to_import_and_resolves_every_name():
    code = (
        "import sys, scars.core\n"
        "print(','.join(sorted(m for m in sys.modules if m.startswith('scars.core'))))\n"
        "import scars.core.gates, scars.core.loops, scars.core.storage\n"
        "print(','.join(sorted(m for m in sys.modules if m.startswith('scars.core'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    first, second = out.stdout.strip().splitlines()
    assert first.split(",") == ["scars.core", "scars.core.lazy"]  # nothing is read at import
    assert set(second.split(",")) == {
        "scars.core",
        "scars.core.lazy",
        "scars.core.gates",
        "scars.core.loops",
        "scars.core.storage",
    }
    import scars.core
    import scars.core.gates
    import scars.core.loops
    import scars.core.storage

    for package in (scars.core, scars.core.gates, scars.core.loops, scars.core.storage):
        for name in package.__all__:
            assert getattr(package, name) is not None, (package.__name__, name)
        assert set(package.__all__) <= set(dir(package))
    assert scars.core.gates.record.__module__ == "scars.core.gates.recording"  # the function, not a module
    # a name of the face that is another name in its module (two modules define a fingerprint)
    from scars.core.storage import cache

    assert scars.core.storage.feature_fingerprint is cache.fingerprint
    assert scars.core.storage.CACHE_MAX_TOTAL_BYTES == cache.MAX_TOTAL_BYTES
    with pytest.raises(AttributeError):
        scars.core.nothing_of_that_name  # noqa: B018


def _imports_inside_functions():
    """(module file, line, the import statement, the line above it) of every import in a function."""
    import ast
    from pathlib import Path

    import scars.core

    out = []
    for root in scars.core.__path__:
        for path in sorted(Path(root).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            lines = text.splitlines()
            for fn in ast.walk(ast.parse(text)):
                if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                    for node in ast.walk(fn):
                        if isinstance(node, ast.Import | ast.ImportFrom):
                            names = (
                                [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                            )
                            above = lines[node.lineno - 2].strip() if node.lineno > 1 else ""
                            out.append((path.name, node.lineno, names, getattr(node, "level", 0), above))
    return out


def test_core_defers_only_libraries_and_says_why():
    # docs/ARCHITECTURE.md: no own module is imported inside a function (a hidden cycle); a library
    # deferred for start-up has a "# lazy: why" line above (a group of imports: above the first).
    found = _imports_inside_functions()
    assert found, "the deferred library imports (ruamel.yaml, multiprocessing) are found"
    for file, line, names, level, _above in found:
        assert level == 0 and not any(n == "scars" or n.startswith("scars.") for n in names), (file, line, names)
    by_file: dict[str, list] = {}
    for f in found:
        by_file.setdefault(f[0], []).append(f)
    for file, imports in by_file.items():
        for k, (_f, line, names, _level, above) in enumerate(imports):
            follows = k > 0 and imports[k - 1][1] == line - 1
            assert follows or above.startswith("# lazy: "), (file, line, names)
