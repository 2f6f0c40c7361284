"""The app's first frame (issue 31): a feature opened before the app runs (``open_first``, what
`scars triage` does for a feature it read ahead) is on the screen when the main screen mounts,
without the loader thread; a failure to open it is said and ends the app as the loader's does; the
main screen is the first on the stack; the collector waits until the first screen is drawn and
then runs again (never turned on when it was off before)."""

from __future__ import annotations

import gc

from scars.core.errors import PathNotFound
from scars.tui.app.app import ScarsApp
from scars.tui.app.screens.main import MainScreen
from scars.tui.app.widgets.item_list import ItemList
from tests.factories import app_repo, bench_feature, wait_until
from tests.tui.app.test_app_pilot import SIZE, aio, item_rows, start


def _counting_loads(app: ScarsApp) -> list:
    calls: list = []
    load = app._load
    app._load = lambda *a, **k: calls.append(a) or load(*a, **k)  # type: ignore[method-assign]
    return calls


@aio
async def test_a_feature_opened_first_is_in_the_first_frame_without_the_loader(tmp_path, monkeypatch):
    feature = app_repo(tmp_path / "repo")
    at_mount: list[int] = []
    mount = MainScreen.on_mount

    def counting_mount(self):
        mount(self)
        at_mount.append(len(self.query_one(ItemList).rows))

    monkeypatch.setattr(MainScreen, "on_mount", counting_mount)
    first = ScarsApp(feature, user="alice")
    first.open_first()
    loads = _counting_loads(first)
    async with first.run_test(size=SIZE) as pilot:
        assert first.is_loaded  # before anything is awaited: shown at mount
        await start(first, pilot)
        shown = [r.item_id for r in item_rows(first)]
        assert isinstance(first.screen_stack[0], MainScreen) and len(first.screen_stack) == 1
    assert loads == [] and at_mount and at_mount[0] > 0

    later = ScarsApp(feature, user="alice")  # the loader thread reads it: the same list
    loads = _counting_loads(later)
    async with later.run_test(size=SIZE) as pilot:
        await start(later, pilot)
        assert [r.item_id for r in item_rows(later)] == shown
    assert len(loads) == 1


@aio
async def test_a_feature_that_cannot_be_opened_first_is_said_and_ends_the_app(tmp_path):
    app = ScarsApp(tmp_path / "nothing-here", user="alice")
    app.open_first()
    loads = _counting_loads(app)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_loaded()
        await pilot.pause()
    assert loads == [] and isinstance(app.load_error, PathNotFound)  # the loader's failure, said


@aio
async def test_the_collector_waits_for_the_first_screen_only(tmp_path, monkeypatch):
    feature = app_repo(tmp_path / "repo")
    during: list[bool] = []
    mount = MainScreen.on_mount
    monkeypatch.setattr(MainScreen, "on_mount", lambda self: during.append(gc.isenabled()) or mount(self))
    assert gc.isenabled()
    app = ScarsApp(feature, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        assert during == [False]  # paused while the first screen is made …
        assert gc.isenabled()  # … and running once it is drawn
    assert gc.isenabled()

    gc.disable()  # someone else's pause is theirs: the app does not end it
    try:
        app = ScarsApp(feature, user="alice")
        async with app.run_test(size=SIZE) as pilot:
            await start(app, pilot)
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


@aio
async def test_an_app_closed_before_its_first_screen_is_drawn_leaves_the_collector_running(tmp_path, monkeypatch):
    feature = app_repo(tmp_path / "repo")
    monkeypatch.setattr(ScarsApp, "_load", lambda self, *a, **k: None)  # never loads: never drawn
    app = ScarsApp(feature, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert not gc.isenabled()
        app.exit(0)
    assert gc.isenabled()


@aio
async def test_a_feature_opened_first_before_its_possible_patterns_gets_them_once_the_app_runs(tmp_path):
    """From 200 counted items the list is shown before the possible patterns: open_first gives
    the list to the first frame and its loader thread posts the patterns once the app runs."""
    feature = bench_feature(tmp_path / "repo")
    first = ScarsApp(feature, user="alice")
    first.open_first()
    loads = _counting_loads(first)
    async with first.run_test(size=SIZE) as pilot:
        assert first.is_loaded and first.patterns_pending  # the list, in the first frame
        await start(first, pilot)  # … and the patterns' group once they arrive
        assert not first.patterns_pending
        shown = [(r.kind, r.key) for r in first.screen.query_one(ItemList).rows]
    assert loads == [] and any(kind == "pattern" for kind, _ in shown)

    later = ScarsApp(feature, user="alice")
    async with later.run_test(size=SIZE) as pilot:
        await start(later, pilot)
        assert [(r.kind, r.key) for r in later.screen.query_one(ItemList).rows] == shown


@aio
async def test_the_dialogs_stylesheet_is_read_with_the_first_dialog(tmp_path):
    """The forms' and gates' rules (dialogs.tcss) are not parsed before the first frame (issue 31)
    and style the first dialog that opens."""

    def read(app: ScarsApp) -> bool:
        return any(path.endswith("dialogs.tcss") for path, _ in app.stylesheet.source)

    app = ScarsApp(app_repo(tmp_path / "repo"), user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        assert not read(app)
        await pilot.press("question_mark")  # help: a dialog
        await wait_until(pilot, lambda: type(app.screen).__name__ == "HelpScreen", "the help screen")
        assert read(app)
        assert app.screen.query_one("#help").styles.height.value == 95  # `#help` of dialogs.tcss


@aio
async def test_the_possible_patterns_are_taken_once_the_first_frame_is_drawn(tmp_path, monkeypatch):
    """open_first's loader holds the rest of the read (the possible patterns) until the list is
    drawn: computed meanwhile, they would share the interpreter with the first frame."""
    from scars.core.samsara import aggregate

    feature = bench_feature(tmp_path / "repo")
    app = ScarsApp(feature, user="alice")
    drawn_when_computed: list[bool] = []
    real = aggregate.possible_patterns

    def computing(*args):
        drawn_when_computed.append(app._first_drawn.is_set())
        return real(*args)

    monkeypatch.setattr(aggregate, "possible_patterns", computing)
    app.open_first()
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
    assert drawn_when_computed == [True]
