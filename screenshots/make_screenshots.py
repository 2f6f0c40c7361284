"""Make the screenshots (README, docs/) from the real app on a fresh copy of the bundled demo.

    python screenshots/make_screenshots.py [--out screenshots]

Writes main.svg, accept-form.svg (with a validation error), trends.svg, round-gate.svg and
loop-gate.svg (the Loops inbox opening a loop-spec SPEC gate, from a feature.json written beside
the demo) and request-inbox.svg (the inbox holding a gate request that loop posted with
`scars gate spec … --wait`, its waiter's lock held as a waiting process holds it) at 120x40. Nothing is drawn by hand: each is ``App.save_screenshot`` after driving the app
with Pilot, like a user would. The demo copy lives in a temporary directory and is removed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import tempfile
from pathlib import Path

SIZE = (120, 40)


async def _settle(app, pilot) -> None:
    await app.wait_loaded()
    await app.workers.wait_for_complete()
    await pilot.pause()
    for inp in app.screen.query("Input"):
        inp.cursor_blink = False
    await pilot.pause()


async def shoot(feature: Path, out: Path) -> list[Path]:
    from scars.tui.app.app import ScarsApp

    written: list[Path] = []

    def save(app, name: str) -> None:
        app.save_screenshot(filename=f"{name}.svg", path=str(out))
        written.append(out / f"{name}.svg")

    app = ScarsApp(feature, user="demo-user")
    async with app.run_test(size=SIZE) as pilot:
        await _settle(app, pilot)
        await pilot.press("f")  # one fix and one defer, so decided lines show
        await pilot.press("d")
        await pilot.pause()
        await pilot.press("enter", "enter")
        await _settle(app, pilot)
        save(app, "main")
        await pilot.press("a")
        await pilot.pause()
        app.screen.query_one("#field-re_review_signal").value = "a second export writer is deployed"
        app.screen.query_one("#field-owner").value = "tbd"
        await pilot.click("#form-save")
        await _settle(app, pilot)
        save(app, "accept-form")
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("t")
        await _settle(app, pilot)
        save(app, "trends")
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("g")
        await _settle(app, pilot)
        save(app, "round-gate")
    return written


# A loop-spec feature whose last judge pass routed to `spec` in step style (the SPEC gate waits).
LOOP_SPEC_FEATURE = {
    "schemaVersion": 7,
    "slug": "export-json",
    "feature_title": "Export the report as JSON for the billing team",
    "execStyle": "step",
    "currentPhase": "iterate",
    "completedPhases": ["spec", "discuss", "plan", "execute", "verify"],
    "warnings": [],
    "iterate": {
        "maxIterations": 10,
        "used": 3,
        "confirmationUsed": False,
        "lastVerdict": {
            "iteration": 3,
            "converged": False,
            "deterministic_gate_passed": True,
            "gap": {
                "type": "spec",
                "description": "the spec never says which currency the totals are in",
                "fix_first": "name the currency field in SPEC.md Goal",
            },
            "remaining_gaps": [],
            "summary": "the JSON is complete but billing cannot read the totals",
        },
        "feedback": {
            "type": "spec",
            "description": "the spec never says which currency the totals are in",
            "fix_first": "name the currency field in SPEC.md Goal",
        },
        "history": [],
        "lastRoute": "spec",
    },
}


async def shoot_inbox(root: Path, out: Path) -> list[Path]:
    """The Loops inbox with a loop-spec feature beside the demo; enter opens its SPEC gate."""
    import json

    fdir = root / ".loop-spec" / "features" / "export-json"
    fdir.mkdir(parents=True)
    (fdir / "feature.json").write_text(json.dumps(LOOP_SPEC_FEATURE, indent=2) + "\n", encoding="utf-8")
    # Shown relative (no path of the machine that made the picture): run from the demo's parent.
    here = Path.cwd()
    os.chdir(root.parent)
    try:
        return await _shoot_inbox(Path(root.name), out)
    finally:
        os.chdir(here)


async def _shoot_inbox(root: Path, out: Path) -> list[Path]:
    from scars.core.loops import discover_loops
    from scars.tui.app.app import ScarsApp

    states = discover_loops(root)
    app = ScarsApp(None, inbox=(states, root), user="demo-user")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        row = next(i for i, s in enumerate(states) if s.kind == "loop-spec")
        app.screen.query_one("#loops-table").move_cursor(row=row)
        await pilot.press("enter")
        await pilot.pause()
        for inp in app.screen.query("Input"):
            inp.cursor_blink = False
        await pilot.pause()
        app.save_screenshot(filename="loop-gate.svg", path=str(out))
    return [out / "loop-gate.svg", await _shoot_request(root, out)]


async def _shoot_request(root: Path, out: Path) -> Path:
    from scars.core.gates import gather
    from scars.core.gates import requests as rq
    from scars.core.loops import discover_loops
    from scars.tui.app.app import ScarsApp

    fdir = root / ".loop-spec" / "features" / "export-json"
    req = rq.post_request(gather("spec", fdir), fdir, user="claude-code", root=root)
    with rq.waiting(root, req.id, "claude-code"):
        app = ScarsApp(None, inbox=(discover_loops(root), root), user="demo-user")
        async with app.run_test(size=SIZE) as pilot:
            while not app.screen.query("#loops-table") or not app.screen.requests:
                await pilot.pause()
            app.screen.query_one("#loops-table").move_cursor(row=0)
            await pilot.pause()
            app.save_screenshot(filename="request-inbox.svg", path=str(out))
    return out / "request-inbox.svg"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parent,
        help="directory for the SVGs (default: screenshots/)",
    )
    args = parser.parse_args()
    # The same stable conditions as the snapshot tests: no inherited Textual settings.
    for name in list(os.environ):
        if name.startswith("TEXTUAL_"):
            del os.environ[name]
    tmp = Path(tempfile.mkdtemp(prefix="scars-shots-"))
    # Nor the developer's own config.toml / keymap.toml (theme, columns, keys): a fresh config home.
    os.environ["XDG_CONFIG_HOME"] = str(tmp / "config")
    from scars.tui.cli.commands.demo import FEATURE, copy_demo

    try:
        root = copy_demo(tmp / "demo")
        args.out.mkdir(parents=True, exist_ok=True)
        for path in asyncio.run(shoot(root / FEATURE, args.out)):
            print(f"wrote {path}")
        for path in asyncio.run(shoot_inbox(root, args.out)):
            print(f"wrote {path}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
