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

STORE = """
import sys
from scars.core.samsara.feature import read_feature
from scars.core.storage import cache
cache.RACY_NS = 0  # the copy's stamps are seconds old
read_feature(sys.argv[1])
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


# The reader of a feature's files: on a cache hit the session opens the cached feature without it.
READER = (
    "scars.core.samsara.feature",
    "scars.core.samsara.reports",
    "scars.core.samsara.aggregate",
    "scars.core.samsara.matching",
    "scars.core.samsara.patterns",
    "scars.core.samsara.registry",
    "scars.core.samsara.contract",
    "scars.core.samsara.resolutions",
    "scars.core.storage.safe_read",
)


def first_paint_modules(tmp_path) -> list[set[str]]:
    """The modules loaded until the first paint of the app over a copy of the demo feature: with
    an empty cache, then with the feature in the cache (stored between the two by a read that
    takes the files' fresh stamps: the copy was just made)."""
    env = {"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "SCARS_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    feature = tmp_path / "repo" / "changes" / DEMO_FEATURE.name  # the app opens a session: a copy
    shutil.copytree(DEMO_FEATURE, feature)
    out = []
    for probe in (PROBE, STORE, PROBE):
        proc = subprocess.run(
            [sys.executable, "-c", probe, str(feature)],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
            cwd=ROOT,
        )
        assert proc.returncode == 0, proc.stderr
        if probe is PROBE:
            got = json.loads(proc.stdout.splitlines()[-1])
            assert got["shown"] == 1
            out.append(set(got["modules"]))
    return out


def test_the_first_paint_loads_no_screen_gate_or_loop_it_does_not_show_and_no_reader_on_a_cache_hit(tmp_path):
    cold, warm = first_paint_modules(tmp_path)
    for modules in (cold, warm):
        assert loaded(modules, *LATER) == []
        assert "scars.tui.app.screens.main" in modules
    assert loaded(cold, "scars.core.samsara.feature") == ["scars.core.samsara.feature"]  # read, then cached
    # the feature from the cache: no reader, and no YAML at all (the header's next round number
    # comes from the rounds the cached feature was read with: the log file is in the same state)
    assert loaded(warm, *READER, "yaml") == []


INBOX = """
import asyncio, json, pickle, sys
from pathlib import Path
from scars.tui.app.app import ScarsApp

async def main():
    states = pickle.loads(Path(sys.argv[1]).read_bytes())  # as bare `scars` gets them from its child
    app = ScarsApp(None, inbox=(states, Path(sys.argv[2])), user="probe")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        shown = type(app.screen).__name__
        modules = sorted(sys.modules)
    print(json.dumps({"shown": shown, "modules": modules}))

asyncio.run(main())
"""

DISCOVER = """
import pickle, sys
from pathlib import Path
from scars.core.loops import discover_loops
Path(sys.argv[1]).write_bytes(pickle.dumps(discover_loops(sys.argv[2])))
"""


def test_the_inbox_s_first_paint_loads_no_yaml_and_no_reader(tmp_path):
    """Bare `scars` reads the loops in a child (issue 31): the process that draws the inbox loads
    no reader, and no YAML (storage/safe_read loads PyYAML with the first YAML it reads)."""
    env = {"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "SCARS_NO_CACHE": "1", "HOME": str(tmp_path)}
    root = tmp_path / "repo"
    shutil.copytree(DEMO_FEATURE, root / "changes" / DEMO_FEATURE.name)
    states = tmp_path / "states.pickle"
    for probe, args in ((DISCOVER, [str(states), str(root)]), (INBOX, [str(states), str(root)])):
        proc = subprocess.run(
            [sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=300, env=env, cwd=ROOT
        )
        assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.splitlines()[-1])
    assert got["shown"] == "LoopsScreen"
    # storage/safe_read itself is loaded (the loop states' module reads files through it), its YAML not
    samsara_reader = [m for m in READER if m != "scars.core.storage.safe_read"]
    assert loaded(set(got["modules"]), *samsara_reader, "yaml") == []
