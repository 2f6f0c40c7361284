"""Make the README screenshots from the real app on a fresh copy of the bundled demo.

    python screenshots/make_screenshots.py [--out screenshots]

Writes main.svg, accept-form.svg (with a validation error), trends.svg and round-gate.svg
at 120x40. Nothing is drawn by hand: each is ``App.save_screenshot`` after driving the app
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


async def _settle(app, pilot) -> None:  # noqa: ANN001
    await app.wait_loaded()
    await app.workers.wait_for_complete()
    await pilot.pause()
    for inp in app.screen.query("Input"):
        inp.cursor_blink = False
    await pilot.pause()


async def shoot(feature: Path, out: Path) -> list[Path]:
    from scars.tui.app.app import ScarsApp

    written: list[Path] = []

    def save(app, name: str) -> None:  # noqa: ANN001
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
    from scars.tui.cli.commands.demo import FEATURE, copy_demo

    tmp = Path(tempfile.mkdtemp(prefix="scars-shots-"))
    try:
        root = copy_demo(tmp / "demo")
        args.out.mkdir(parents=True, exist_ok=True)
        for path in asyncio.run(shoot(root / FEATURE, args.out)):
            print(f"wrote {path}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
