"""The triage app on hostile input: Pilot (screen text, no action fired) and a real pty."""

from __future__ import annotations

import asyncio
import html
import re
import sys
from pathlib import Path

import pytest

from scars.tui.app.app import ScarsApp
from tests.factories import filter_shown
from tests.hostile.corpus import REPORT_CASES, build_all, build_base, restore_permissions
from tests.hostile.injection import VISIBLE, write_injection_report
from tests.hostile.test_hostile_injection import _run_in_pty

SIZE = (160, 50)


def screen_text(app) -> str:
    svg = app.export_screenshot()
    parts = re.findall(r">([^<]*)</text>", svg)
    return html.unescape("".join(parts)).replace("\xa0", " ")


def detail_text(app) -> str:
    from rich.console import Console

    console = Console(width=400, color_system=None, file=None, record=True)
    with console.capture() as cap:
        console.print(app.screen.query_one("#detail").content)
    return cap.get()


@pytest.fixture
def feature(tmp_path: Path) -> Path:
    f = build_base(tmp_path / "repo")
    write_injection_report(f / "scar-reports")
    return f


async def _search(app, pilot, word: str) -> None:
    await pilot.press("slash")
    for ch in word:
        await pilot.press(ch)
    await pilot.press("enter")
    await filter_shown(pilot, word)  # the rows are built in a thread worker


def test_payloads_are_inert_in_the_app(feature: Path):
    fired: list[str] = []

    async def run() -> None:
        app = ScarsApp(feature, read_only=True, user="alice")
        # Any action reached through injected markup would land here.
        app.action_quit = lambda *a, **k: fired.append("quit")  # type: ignore[method-assign]
        async with app.run_test(size=SIZE) as pilot:
            await app.wait_loaded()
            await pilot.pause()
            listing = screen_text(app)
            assert "\x1b" not in listing and "\x9b" not in listing and "\u202e" not in listing
            for key, vis in VISIBLE.items():
                assert vis in listing, f"{key}: {vis!r} not shown literally in the list"
            # The detail view of the worst ones, and a click on the text with injected markup.
            for marker, key in (("CLICKMARK", "markup-click"), ("OSC52MARK", "osc52"), ("BIDIMARK", "bidi")):
                await _search(app, pilot, marker)
                detail = detail_text(app)
                assert VISIBLE[key] in detail, f"{key}: not literal in the detail view"
                assert "\x1b" not in detail and "\u202e" not in detail
                await pilot.click("#detail")
                await pilot.pause()
            assert app.is_running
        assert fired == [], f"injected markup fired {fired}"

    asyncio.run(run())


def test_whole_hostile_corpus_loads_in_the_app(tmp_path: Path):
    """Every report case at once: the app loads, lists the failures, nothing raw on screen."""
    root = tmp_path / "repo"
    feature = build_all(root, heavy=False)
    try:

        async def run() -> str:
            app = ScarsApp(feature, read_only=True, user="alice")
            async with app.run_test(size=SIZE) as pilot:
                await app.wait_loaded()
                await pilot.pause()
                return screen_text(app)

        text = asyncio.run(run())
    finally:
        restore_permissions(tmp_path)
    assert "Traceback" not in text
    assert "\x1b" not in text
    # The parse failures are in view (a count or the list), never hidden.
    failing = sum(1 for c in REPORT_CASES if c.expect == "failure" and not c.heavy)
    assert re.search(r"parse failure|failure", text, re.I), text[:2000]
    assert failing > 10


def test_app_in_a_real_pty_lets_no_sequence_through(feature: Path):
    """`scars triage --read-only` in a pty, quit with q: no input-borne sequence reached it."""
    argv = [sys.executable, "-m", "scars.tui.cli.main", "triage", "--read-only", str(feature)]
    rc, out = _run_in_pty(argv, send=b"q", send_when=b"MARK", send_after=30.0, timeout=60.0, rows=50, cols=160)
    assert out, "the app wrote nothing"
    app_forbidden = [
        b"\x1b]8;;https://evil",
        b"\x1b]52;",
        b"\x1b]0;PWNED",
        b"\x1b[31;5m",
        "\x9b31m".encode(),
        "\u202e".encode(),
        "\u2066".encode(),
        "\u200b".encode(),
        b"\x08\x08\x08XYZ",
    ]
    found = [s for s in app_forbidden if s in out]
    assert found == [], f"input-borne sequences reached the terminal: {found}"
    assert b"Traceback" not in out
    assert b"MARK" in out, "the items were not drawn (nothing was tested)"
