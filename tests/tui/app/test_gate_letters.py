"""Letters typed at a modal never record, and looking records nothing (issue 27 §3).

The round gate's hint said "Tab: Rule 3 and the reason", but one Tab put the focus on the Stop
button, and the letters typed next were the gate's keys: the first `a` recorded `continue` with a
made-up reason, and the rest of the sentence ran as main-screen commands (`f` fixed an item, `e`
started the editor, `q` quit). Here a person presses Tab once (or puts the focus on any button of
any modal) and types a whole sentence, then Esc: no byte of the journal, iteration-log.yaml or
auto-decisions.md changes, no editor starts, no item is decided. The happy path still records with
the keys the hint shows (an answer key marks the choice, Enter records it).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input

from scars.core.samsara.session import FeatureSession
from scars.tui.app.app import ScarsApp
from tests.factories import wait_settled, wait_until
from tests.tui.app.test_app_pilot import SIZE, aio, on_disk, on_screen, screen_text, start

# A, b, f, e, u, q and spaces: each a key of the gate or of the main screen.
SENTENCE = "a fix is queued but the edge case remains untested"
WATCHED = (".scars/journal.jsonl", "iteration-log.yaml", "auto-decisions.md")


def recorded(feature_dir: Path) -> dict[str, bytes | None]:
    """The bytes of every file a decision or a gate answer writes (None: absent)."""
    return {name: (p.read_bytes() if (p := feature_dir / name).is_file() else None) for name in WATCHED}


def editor_runs(app: ScarsApp) -> list:
    """Every call of the app's editor (`e`), recorded instead of run."""
    runs: list = []
    app.open_in_editor = lambda path, line: runs.append((path, line))  # type: ignore[method-assign]
    return runs


def open_round(feature_dir: Path) -> tuple[ScarsApp, dict[str, bytes | None], list]:
    """Round 2 open (the gate answers an open round), with nothing decided in it; the app over it,
    the bytes recorded before and the editor's runs."""
    with FeatureSession.open(feature_dir, user="alice") as s:
        s.start_round()
    app = ScarsApp(feature_dir, user="alice")
    return app, recorded(feature_dir), editor_runs(app)


async def gate_shown(app: ScarsApp, pilot):
    """The app started, `g` pressed, the round gate drawn: the gate."""
    await start(app, pilot)
    await pilot.press("g")
    await on_screen(app, pilot, "RoundGate")
    await wait_settled(pilot, "the RoundGate drawn")
    return app.screen


async def type_sentence(pilot) -> None:
    for ch in SENTENCE:
        await pilot.press("space" if ch == " " else ch)


async def nothing_happened(app: ScarsApp, pilot, feature_dir: Path, before: dict, runs: list) -> None:
    await on_screen(app, pilot, "MainScreen")
    await wait_settled(pilot, "the main screen back")
    assert app.is_running
    assert recorded(feature_dir) == before
    assert runs == []
    assert on_disk(feature_dir) == {} and app.backend.session is not None and not app.backend.session.journal_decisions


@aio
async def test_one_tab_from_the_hint_and_a_whole_sentence_record_nothing(feature_dir):
    app, before, runs = open_round(feature_dir)
    async with app.run_test(size=SIZE) as pilot:
        gate = await gate_shown(app, pilot)
        assert "Tab: Rule 3 and the reason" in " ".join(screen_text(app).split())
        await pilot.press("tab")
        first = gate.query_one("#gate-budget", Input)
        assert first.has_focus  # the first text field, as the hint says
        await type_sentence(pilot)
        assert first.value.endswith(SENTENCE)  # the letters typed into it
        await pilot.press("escape")
        await nothing_happened(app, pilot, feature_dir, before, runs)


@pytest.mark.parametrize("key", ["a", "d", "A", "g"])
@aio
async def test_a_whole_sentence_at_any_button_of_any_modal_records_nothing(feature_dir, key):
    """(b): the focus put on each button (or the choices) of the accept form, the defer form, the
    bulk confirmation and the round gate; the sentence typed there; Esc."""
    app, before, runs = open_round(feature_dir)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        if key == "A":
            await pilot.press("space")  # a marked item: A asks to confirm the bulk accept
        await pilot.press(key)
        await wait_until(pilot, lambda: app.screen.is_modal, "a modal on top")
        modal = type(app.screen).__name__
        focusable = [w for w in app.screen.focus_chain if not isinstance(w, Input)]
        assert focusable, f"{modal}: nothing but text fields to focus"
        for widget in focusable:
            if type(app.screen).__name__ != modal:  # a key reached past the modal
                raise AssertionError(f"{modal} left after typing at {widget!r}")
            widget.focus()
            await wait_until(pilot, lambda w=widget: w.has_focus, f"the focus on {widget!r}")
            await type_sentence(pilot)
            assert type(app.screen).__name__ == modal, f"{modal}: typing at {widget!r} left it"
            assert recorded(feature_dir) == before, f"{modal}: typing at {widget!r} recorded"
            assert runs == []
        if key == "A":
            app.marked.clear()  # the mark is the screen's state, not a record
        await pilot.press("escape")
        await nothing_happened(app, pilot, feature_dir, before, runs)


@aio
async def test_the_gate_records_with_the_keys_its_hint_shows(feature_dir):
    """(c): b marks stop, Enter tries it; stop needs a reason, so the reason field takes the
    focus; the reason typed and Enter records stop."""
    app, _, _ = open_round(feature_dir)
    async with app.run_test(size=SIZE) as pilot:
        gate = await gate_shown(app, pilot)
        hint = " ".join(screen_text(app).split())
        assert "a continue · b stop · Enter records the marked choice" in hint
        await pilot.press("b")
        assert gate.query_one("#gate-choices").value == "stop"
        assert "▶ Stop" in screen_text(app)  # the marked choice, not by colour alone
        assert recorded(feature_dir)["iteration-log.yaml"] == (feature_dir / "iteration-log.yaml").read_bytes()
        assert "decision: stop" not in (feature_dir / "iteration-log.yaml").read_text()  # b alone records nothing
        await pilot.press("enter")
        await wait_until(pilot, lambda: gate.query_one("#gate-error").has_class("shown"), "stop asks its reason")
        assert gate.query_one("#gate-reason", Input).has_focus
        for ch in "bugs left are owned":
            await pilot.press("space" if ch == " " else ch)
        await pilot.press("enter")
        log = feature_dir / "iteration-log.yaml"
        await wait_until(pilot, lambda: "decision: stop" in log.read_text(), "the round recorded")
        assert 'decision_reason: "bugs left are owned"' in log.read_text()


@aio
async def test_a_whole_sentence_at_any_button_of_a_loops_gate_records_nothing(tmp_path, monkeypatch):
    """(b) for the Loops inbox's gate (loop-spec): its answer letters pick an answer only while the
    answers have the focus; at a button or the body they do nothing, and Esc leaves it unanswered."""
    from textual.widgets import RadioSet

    from scars.core.loops import discover_loops
    from tests.factories import clean_env, loop_spec_feature, tree_hashes

    clean_env(monkeypatch)
    root = tmp_path / "proj"
    root.mkdir()
    loop_spec_feature(root)
    before = tree_hashes(root)
    app = ScarsApp(None, inbox=(discover_loops(root), root), user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(app, pilot, "LoopsScreen")
        await pilot.press("enter")
        await on_screen(app, pilot, "LoopGate")
        gate = app.screen
        answers = gate.query_one("#gate-answers", RadioSet)
        chosen = answers.pressed_button
        for widget in [w for w in gate.focus_chain if not isinstance(w, (Input, RadioSet))]:
            widget.focus()
            await wait_until(pilot, lambda w=widget: w.has_focus, f"the focus on {widget!r}")
            await type_sentence(pilot)
            assert type(app.screen).__name__ == "LoopGate", f"typing at {widget!r} left the gate"
            assert answers.pressed_button is chosen, f"a letter typed at {widget!r} picked an answer"
        await pilot.press("escape")
        await on_screen(app, pilot, "LoopsScreen")
    assert tree_hashes(root) == before


@aio
async def test_with_a_blocked_fix_tab_goes_to_its_outcome_and_the_hint_says_so(feature_dir):
    """The first thing to fill in is the blocked fix's outcome: Tab goes there, the hint names it,
    and letters typed at it pick nothing and record nothing."""
    from textual.widgets import RadioSet

    from tests.tui.app.test_app_pilot import add_blocked_fix, filter_by

    add_blocked_fix(feature_dir)
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await filter_by(app, pilot, "vendor")
        await pilot.press("f", "g")
        await on_screen(app, pilot, "RoundGate")
        await wait_settled(pilot, "the RoundGate drawn")
        gate = app.screen
        assert "Tab: the blocked fixes, Rule 3 and the" in " ".join(screen_text(app).split())
        before = recorded(feature_dir)
        await pilot.press("tab")
        outcome = gate.query_one("#blocked-0", RadioSet)
        assert outcome.has_focus
        await type_sentence(pilot)
        assert outcome.pressed_index == 0 and type(app.screen).__name__ == "RoundGate"
        await pilot.press("tab")
        assert gate.query_one("#gate-budget", Input).has_focus  # then Rule 3's first field
        await pilot.press("escape")
        await on_screen(app, pilot, "MainScreen")
    assert recorded(feature_dir) == before
