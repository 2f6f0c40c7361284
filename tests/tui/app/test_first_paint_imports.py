"""What the app imports until its first paint (issue 31): the list is drawn from the read feature
before any screen a key opens, any gate, the loops or the advisor is loaded."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from tests.factories import ROOT
from tests.tui.cli.test_startup_imports import DEMO_FEATURE, loaded

PROBE = """
import asyncio, json, sys
from scars.tui.app.app import ScarsApp

async def main():
    app = ScarsApp(sys.argv[1], user="probe")
    async with app.run_test(size=(120, 40)) as pilot:
        await app.wait_loaded()  # the feature read and the list drawn
        shown = len(app.screen.query("ItemList"))
        modules = sorted(sys.modules)
    print(json.dumps({"shown": shown, "modules": modules}))

asyncio.run(main())
"""

# Loaded when first used, never for the first paint.
LATER = (
    "scars.core.gates",  # every loop's gatherers and writers: at the first gate
    "scars.core.loops",  # the Loops inbox (L)
    "scars.core.advice",  # the advisor, through the round gate
    "scars.tui.app.screens.gate",
    "scars.tui.app.screens.loops",
    "scars.tui.app.screens.loop_gate",
    "scars.tui.app.screens.forms",
    "scars.tui.app.screens.confirm",
    "scars.tui.app.screens.help",
    "scars.tui.app.screens.trends",
    "scars.tui.cli",
    "ruamel",
    "questionary",
    "textual_serve",
)


def test_the_first_paint_loads_no_screen_gate_or_loop_it_does_not_show(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "SCARS_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    feature = tmp_path / "repo" / "changes" / DEMO_FEATURE.name  # the app opens a session: a copy
    shutil.copytree(DEMO_FEATURE, feature)
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(feature)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.splitlines()[-1])
    assert got["shown"] == 1
    assert loaded(set(got["modules"]), *LATER) == []
    assert "scars.tui.app.screens.main" in got["modules"]
