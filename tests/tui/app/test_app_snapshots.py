"""Snapshot tests of the app at 60x20, 80x24 and 120x40 (pytest-textual-snapshot): no field label,
button or item id may be cut at any of them (issue 16).

Stability: fixed sizes; the theme is pinned by the app; TEXTUAL_* variables are cleared and
NO_COLOR set in conftest; no clock, host or version is drawn; input cursors do not blink;
the loader worker is awaited explicitly (``wait_loaded``), and each step waits for the state
it leads to (``wait_until``: the screen on top, the decision recorded), never for a fixed time.
Regenerate after a deliberate UI change with ``pytest tests/tui/app/test_app_snapshots.py
--snapshot-update`` and look at the report first.
"""

from __future__ import annotations

import pytest

from scars.tui.app.app import ScarsApp
from tests.factories import wait_settled, wait_until

SIZES = [(60, 20), (80, 24), (120, 40)]
IDS = ["60x20", "80x24", "120x40"]


async def _settle(pilot) -> None:
    """The load shown, its filter prepared, every worker done and what the last step set off
    (layout, focus, styles) done in every widget."""
    await pilot.app.wait_loaded()
    for inp in pilot.app.screen.query("Input"):
        inp.cursor_blink = False
    await wait_settled(pilot, "the app settled")


async def _on_screen(pilot, name: str) -> None:
    await wait_until(pilot, lambda: type(pilot.app.screen).__name__ == name, f"the {name} screen on top")


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_main_screen(snap_compare, feature_dir, size):
    async def run_before(pilot):
        await _settle(pilot)
        await pilot.press("f")  # one decision, so the list shows a decided item
        await wait_until(pilot, lambda: len(pilot.app.decisions) == 1, "the fix recorded")
        await _settle(pilot)

    assert snap_compare(ScarsApp(feature_dir, user="alice"), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_accept_form_with_validation_errors(snap_compare, feature_dir, size):
    async def run_before(pilot):
        await _settle(pilot)
        await pilot.press("a")
        await _on_screen(pilot, "AcceptForm")
        pilot.app.screen.query_one("#field-owner").value = "tbd"
        await pilot.click("#form-save")
        await wait_until(
            pilot, lambda: pilot.app.screen.query_one("#error-owner").has_class("shown"), "the owner error shown"
        )
        # The clicked button is drawn pressed while its -active effect lasts: snapshot it after.
        save = pilot.app.screen.query_one("#form-save")
        await wait_until(pilot, lambda: not save.has_class("-active"), "the save button's press effect over")
        await _settle(pilot)

    assert snap_compare(ScarsApp(feature_dir, user="alice"), terminal_size=size, run_before=run_before)


def test_trends_screen(snap_compare, feature_dir):
    async def run_before(pilot):
        await _settle(pilot)
        await pilot.press("t")
        await _on_screen(pilot, "TrendsScreen")
        await _settle(pilot)

    assert snap_compare(ScarsApp(feature_dir, user="alice"), terminal_size=(120, 40), run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_round_gate(snap_compare, feature_dir, size):
    async def run_before(pilot):
        await _settle(pilot)
        await pilot.press("f", "g")
        await _on_screen(pilot, "RoundGate")
        await _settle(pilot)

    assert snap_compare(ScarsApp(feature_dir, user="alice"), terminal_size=size, run_before=run_before)
