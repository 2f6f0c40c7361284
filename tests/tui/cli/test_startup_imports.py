"""What `scars --help` and `scars status` import (issue 17: start like a shell tool).

`scars --help` lists the commands from their summaries in ``COMMANDS`` and imports no command
module, no terminal library and no reader; `scars status` imports its own command module only,
and nothing asks importlib.metadata for the version (a literal, ``scars.core.__version__``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.factories import ROOT

DEMO_FEATURE = ROOT / "core" / "demo" / "repo" / "changes" / "2026-11-02_csv-export"

PROBE = """
import contextlib, io, json, sys
from scars.tui.cli.main import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        code = main(json.loads(sys.argv[1]))
    except SystemExit as exc:
        code = exc.code
print(json.dumps({"code": code, "out": out.getvalue(), "modules": sorted(sys.modules)}))
"""


def imported_by(*argv: str, cache: Path | None = None) -> tuple[int, str, set[str]]:
    env = {"PATH": "/usr/bin:/bin", "NO_COLOR": "1"}
    env.update({"SCARS_CACHE_DIR": str(cache)} if cache is not None else {"SCARS_NO_CACHE": "1"})
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(list(argv))],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.splitlines()[-1])
    return got["code"], got["out"], set(got["modules"])


def loaded(modules: set[str], *packages: str) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in packages))


HEAVY = ("rich", "textual", "questionary", "yaml", "ruamel", "importlib.metadata")


def test_help_imports_no_command_module_and_no_library():
    code, out, modules = imported_by("--help")
    assert code == 0 and "status" in out and "completion" in out
    assert loaded(modules, "scars") == [
        "scars",
        "scars.core",
        "scars.core.errors",
        "scars.core.lazy",
        "scars.tui",
        "scars.tui.cli",
        "scars.tui.cli.main",
    ]
    assert loaded(modules, *HEAVY) == []
    # what only a command that runs needs: the settings (their records, and typing); no command imports
    # dataclasses (with inspect and ast) at all
    # (json too, which this probe imports itself)
    assert loaded(modules, "dataclasses", "inspect", "ast", "typing") == []


def test_status_imports_its_own_command_only():
    code, out, modules = imported_by("status", str(DEMO_FEATURE))
    assert code == 0 and "signal_lost" in out
    assert loaded(modules, "scars.tui.cli.commands") == ["scars.tui.cli.commands", "scars.tui.cli.commands.status"]
    assert loaded(modules, "textual", "questionary", "ruamel", "importlib.metadata", "scars.tui.app") == []
    assert loaded(modules, "scars.core.gates", "scars.core.loops", "scars.core.advice") == []
    # into a pipe without FORCE_COLOR: rich's wrapping rules, not its console (render/plain.py, ~15 ms)
    assert loaded(modules, "rich.console", "rich.text", "rich.table", "rich.style") == []


def test_status_json_imports_no_terminal_library():
    code, out, modules = imported_by("status", "--json", str(DEMO_FEATURE))
    assert code == 0 and json.loads(out)["feature"] == DEMO_FEATURE.name
    assert loaded(modules, "scars.tui.cli.commands") == ["scars.tui.cli.commands", "scars.tui.cli.commands.status"]
    assert (
        loaded(modules, "rich", "textual", "questionary", "ruamel", "importlib.metadata", "scars.tui.cli.render") == []
    )


# What a warm `scars status` (its feature in the cache) needs: the cache, the model, the decisions
# in force and the report. Not the reader (YAML, the log matcher, the possible patterns), not a
# subprocess runner (git runs only when asked), not a TOML parser (no config file), not what only
# a writer needs (socket for the lock's holder, tempfile for an atomic write).
READER = (
    "yaml",
    "scars.core.samsara.feature",
    "scars.core.samsara.reports",
    "scars.core.samsara.aggregate",
    "scars.core.samsara.matching",
    "scars.core.samsara.patterns",
    "scars.core.storage.safe_read",
    "scars.core.formats",
    "subprocess",
    "tomllib",
    "socket",
    "tempfile",
)


@pytest.mark.parametrize("json_flag", [(), ("--json",)])
def test_a_warm_status_imports_no_reader(tmp_path, json_flag):
    first = imported_by("status", *json_flag, str(DEMO_FEATURE), cache=tmp_path)
    assert first[0] == 0 and loaded(first[2], "scars.core.samsara.feature")  # read: stored in the cache
    code, out, modules = imported_by("status", *json_flag, str(DEMO_FEATURE), cache=tmp_path)
    assert code == 0 and out == first[1]
    assert loaded(modules, *READER) == []


@pytest.mark.parametrize("json_flag", [(), ("--json",)])
@pytest.mark.parametrize("warm", [False, True], ids=["no-cache", "warm"])
def test_status_imports_no_dataclasses(tmp_path, json_flag, warm):
    """scars' value classes are records (scars.core.records): ``dataclasses`` compiled ~6 methods per
    class and imported ``inspect`` and ``ast``, ~27 ms of `scars status` (issue 31). Neither a warm
    status nor one with the cache off (SCARS_NO_CACHE=1) imports them."""
    cache = tmp_path if warm else None
    if warm:
        imported_by("status", *json_flag, str(DEMO_FEATURE), cache=cache)  # stored in the cache
    code, out, modules = imported_by("status", *json_flag, str(DEMO_FEATURE), cache=cache)
    assert code == 0 and "signal_lost" in out
    assert loaded(modules, "scars.core.records") == ["scars.core.records"]
    assert loaded(modules, "dataclasses", "inspect", "ast") == []


MCP_SDK = ("mcp", "pydantic", "pydantic_core", "anyio", "starlette", "httpx2", "uvicorn")


def test_no_other_command_loads_the_mcp_sdk_and_mcp_help_does_not_either():
    for argv in (("--help",), ("status", str(DEMO_FEATURE)), ("mcp", "--help")):
        code, out, modules = imported_by(*argv)
        assert code == 0, argv
        assert loaded(modules, *MCP_SDK) == [], argv
    assert "request_gate, wait_for_answer" in out  # `scars mcp --help` names its tools


def test_gate_help_loads_the_loop_catalogs_and_no_reader():
    """`scars gate --help` names every gate (the registry gathers the loops' catalogs) and loads no
    loop's reader, gates or system, no terminal library and no samsara feature reader."""
    code, out, modules = imported_by("gate", "--help")
    assert code == 0 and "round-continue" in out and "dag-escalate" in out
    folders = ("samsara", "loopspec", "review", "bkit", "dag")
    assert loaded(modules, "scars.core.loops") == sorted(
        ["scars.core.loops", "scars.core.loops.registry"]
        + [m for f in folders for m in (f"scars.core.loops.{f}", f"scars.core.loops.{f}.catalog")]
    )
    assert loaded(modules, "scars.core.gates", "scars.core.advice", "scars.core.samsara") == []
    assert loaded(modules, "rich", "textual", "questionary") == []
