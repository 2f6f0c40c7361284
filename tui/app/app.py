"""ScarsApp: the full-screen triage app.

Construct it from a feature directory (``ScarsApp(feature_dir, ...)``: the session is
opened and the feature read in a thread worker) or from an already-read feature
(``ScarsApp.from_feature(feature, session=None)``). Either way the heavy work — reading,
building the grouped rows and their search keys — runs off the event loop, and the app
posts ``ScarsApp.Loaded`` when done; ``await app.wait_loaded()`` waits for it.
"""

from __future__ import annotations

import asyncio
import gc
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import App
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.worker import get_current_worker

from scars.core import settings
from scars.core.errors import READ_ONLY, DecisionRefused, ReadOnly, ScarsError, refuse_if_read_only
from scars.core.model import Feature
from scars.core.samsara.layout import repo_root_of
from scars.core.samsara.locate import codeowners, git_authors, parse_location
from scars.core.samsara.rounds import evaluate_valves
from scars.core.sanitize import one_line
from scars.core.settings import config_path
from scars.core.storage import (
    describe_holder,
    feature_fingerprint,
    gc_paused,
    journal_path,
    pause_for_startup,
    resume_after_startup,
)
from scars.tui.app.backend import Backend
from scars.tui.app.keymap import keymap_path, load_keymap, refuse_conflicts, save_config_value
from scars.tui.app.palette import ScarsCommands
from scars.tui.app.screens.main import MAIN_BINDINGS, NO_ITEMS, MainScreen
from scars.tui.app.viewmodel import (
    Excerpts,
    Filter,
    Row,
    TriageState,
    describe_changes,
    owners_in_logs,
    rows_around,
    snapshot,
)
from scars.tui.app.widgets.detail import DetailPane
from scars.tui.app.widgets.header import ScarsHeader
from scars.tui.app.widgets.item_list import ItemList

if TYPE_CHECKING:
    from scars.core.samsara.session import FeatureSession, ReadAhead


def input_stamps(feature_dir: Path) -> tuple[Any, Any]:
    """(the inputs' stat fingerprint, the journal's stat) of an absolute feature directory, by stat
    only; (None, None) when it cannot be listed."""
    try:
        fp = feature_fingerprint(feature_dir, repo_root_of(feature_dir))
    except OSError:
        return None, None
    try:
        st = os.stat(journal_path(feature_dir))
        journal: object = (st.st_size, st.st_mtime_ns, st.st_ino)
    except OSError:
        journal = None
    return fp, journal


def disk_stamp(backend: Backend, taken: tuple[Any, Any] | None = None) -> object:
    """What a reload depends on, by stat only: the feature's inputs (the cache's fingerprint) and,
    when another process writes the journal (this one is read-only), the journal too. ``taken``:
    :func:`input_stamps` taken before the feature was read (so a write during the read is seen by
    the next poll); now when not given, or not of this feature's directory."""
    feature = backend.feature
    if taken is None or taken[0] is None or taken[0]["feature"] != feature.path:
        taken = input_stamps(Path(feature.path))
    fp, journal = taken
    if fp is None:
        return None
    return [fp, journal] if backend.read_only else [fp]


def unfreeze_and_collect() -> None:
    """What ``gc.freeze()`` froze goes back to the collector, and a full collection that really
    ran frees its cyclic garbage.

    In CPython 3.11 ``gc.collect()`` does nothing and returns 0 while another thread is inside a
    collection: a collection runs Python code (weakref callbacks, ``__del__``, ``gc.callbacks``)
    and the GIL can pass to another thread in the middle of it. Every thread of a running app
    can be the one collecting (the event loop, a worker, the test runner's), so no thread is a
    place where the call is sure to run: it is asked again until it did. Each try first makes a
    cycle for it to find, so a try that ran returns at least 1 and one skipped returns 0 (a try
    that ran after another thread's collection freed the cycle only costs one more try).
    """
    gc.unfreeze()
    while True:
        probe: list = []
        probe.append(probe)
        del probe
        if gc.collect():
            return
        time.sleep(0.001)  # the GIL to the thread whose collection is under way, to finish it


def _valves(feature: Feature, decisions: dict) -> list:
    return list(evaluate_valves(feature, decisions))


class ScarsApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "scars"
    COMMANDS = App.COMMANDS | {ScarsCommands}
    ENABLE_COMMAND_PALETTE = True
    # Screens shorter than 36 rows get the class -short: forms and the gate scroll their body so
    # their buttons stay on screen (app.tcss).
    VERTICAL_BREAKPOINTS = [(0, "-short"), (36, "-tall")]
    # Files the loop writes while a person triages are picked up by themselves: every few seconds
    # the inputs' stat fingerprint is compared (a thread, no file read) and a change reloads in
    # place, keeping the cursor and the marks, and says what changed.
    POLL_SECONDS = 2.0
    # Ctrl-C leaves from anywhere, a form included, with exit code 130 (docs/commands.md, "Exit codes"): what
    # the screen showed as saved is on disk; an open form records nothing.
    BINDINGS = [Binding("ctrl+c", "interrupt", "Interrupt", id="scars.interrupt", priority=True, show=False)]

    class Loaded(Message):
        """The feature is read and the rows are built (posted from the loader thread)."""

        def __init__(
            self,
            backend: Backend,
            state: TriageState,
            valves: list,
            keep_cursor: bool,
            rows: list[Row],
            user: str,
            changes: str | None = None,
            why: str = "",
            stamp: object = None,
            pending: bool = False,
            excerpts: Excerpts | None = None,
        ) -> None:
            super().__init__()
            self.excerpts = excerpts  # the store of this load, the first item's excerpt read
            self.changes = changes  # what a reload found changed on disk (None: nothing)
            self.why = why  # "r": asked for; "": the first read
            self.stamp = stamp  # disk_stamp of the inputs read (None: no live refresh)
            self.pending = pending  # shown before its possible patterns (PatternsReady follows)
            self.backend = backend
            self.state = state
            self.valves = valves
            self.keep_cursor = keep_cursor
            self.rows = rows
            self.user = user

    class PatternsReady(Message):
        """The possible patterns of the feature an early ``Loaded`` showed without them (posted
        from the loader thread): ``state`` is the feature's with them."""

        def __init__(self, backend: Backend, state: TriageState) -> None:
            super().__init__()
            self.backend = backend
            self.state = state

    class FilterPrepared(Message):
        """The filter's haystack and rows of ``state`` are built (posted from its worker): the last
        work a load starts."""

        def __init__(self, state: TriageState) -> None:
            super().__init__()
            self.state = state

    class LoadFailed(Message):
        def __init__(self, error: BaseException) -> None:
            super().__init__()
            self.error = error

    def __init__(
        self,
        feature_dir: str | Path | None = None,
        *,
        read_only: bool = False,
        pair: Iterable[str] | None = None,
        require_second: Iterable[str] = (),
        user: str | None = None,
        keymap: dict[str, str] | Path | None = None,
        feature: Feature | None = None,
        session: FeatureSession | None = None,
        inbox: tuple[list, Path] | None = None,
    ) -> None:
        super().__init__()
        self.feature_dir = Path(feature_dir) if feature_dir is not None else None
        self.read_only_requested = read_only
        self.pair = [p for p in (pair or []) if p]
        self.driver_index = 0
        self.require_second = {a.strip() for a in require_second if a.strip()}
        self.user = user
        self._keymap_source = keymap
        self._keymap_problems: list[str] = []
        self._given_feature = feature
        self._given_session = session
        self.backend: Backend | None = None
        self.state: TriageState | None = None
        self.filter: Filter | None = None
        self.marked: set[str] = set()
        self.valves: list = []
        self.load_error: BaseException | None = None
        self._loaded = asyncio.Event()
        self._owner_cache: dict[str, list[str]] = {}
        self.inbox = inbox  # (loop states, repository root): start on the Loops inbox
        self._disk_stamp: object = None  # the inputs' stat fingerprint at the last read
        # The list is shown and the possible patterns still computed (a feature read, not cached):
        # a reload waits for them (its why kept here).
        self._patterns_pending = False
        self._reload_after_patterns: str | None = None
        self._prepared: TriageState | None = None  # the state whose filter is prepared
        self._first: Message | None = None  # the loader's message of open_first, shown at mount
        self._may_post = threading.Event()  # set at mount: open_first's loader may post
        self._first_drawn = threading.Event()  # set when the first screen is drawn (_drawn)
        self.excerpts: Excerpts | None = None  # the source excerpts of the load shown

    @classmethod
    def from_feature(cls, feature: Feature, session: FeatureSession | None = None, **kwargs: Any) -> ScarsApp:
        """An app over an already-read feature; without a session it is read-only."""
        return cls(Path(feature.path), feature=feature, session=session, **kwargs)

    # -- facts the screens use ----------------------------------------------------------
    @property
    def feature(self) -> Feature | None:
        return self.backend.feature if self.backend is not None else None

    # The feature screen's view of the open feature (it exists only while one is loaded): typed
    # without None, raising if used with none open rather than failing later on an attribute.
    @property
    def loaded_backend(self) -> Backend:
        if self.backend is None:
            raise RuntimeError("no feature is open")
        return self.backend

    @property
    def loaded_state(self) -> TriageState:
        if self.state is None:
            raise RuntimeError("no feature is loaded")
        return self.state

    @property
    def loaded_feature(self) -> Feature:
        return self.loaded_backend.feature

    @property
    def decisions(self) -> dict:
        return self.backend.decisions if self.backend is not None else {}

    @property
    def driver(self) -> str | None:
        if self.pair:
            return self.pair[self.driver_index % len(self.pair)]
        return self.user

    def driver_label(self) -> str | None:
        if not self.pair:
            return None
        other = self.pair[(self.driver_index + 1) % len(self.pair)]
        return f"{self.driver} (p → {other})"

    @property
    def require_second_accept(self) -> bool:
        return "accept" in self.require_second

    @property
    def round_no(self) -> int | None:
        """The open round, or the number the next round (opened by the first decision) gets."""
        if self.backend is None:
            return None
        try:
            return self.backend.round_info()["round"]
        except Exception:  # noqa: BLE001 - a header fact must not stop triage
            return self.backend.current_round()

    def write_refusal(self, *, feature: bool = True) -> str | None:
        """Why this session writes nothing (None: it may write): THE predicate of every write the
        app offers, handed into core with the write (``scars.core.errors.refuse_if_read_only``).
        ``feature``: a write to the open feature (refused too while it loads, when another writer
        holds its lock or its checkout cannot be written); else a write to another loop's files
        or a gate request (refused by --read-only, which ``scars serve`` without --write passes)."""
        if self.read_only_requested:
            return READ_ONLY
        if not feature:
            return None
        if self.backend is None:
            return "still loading"
        if self.backend.read_only:
            return self.backend.read_only_reason or READ_ONLY
        return None

    def refuse_if_read_only(self, what: str, *, feature: bool = True) -> bool:
        """True, and said, when ``what`` cannot be written in this session (:meth:`write_refusal`)."""
        try:
            refuse_if_read_only(self.write_refusal(feature=feature), what)
        except ReadOnly as exc:
            self.notify(one_line(str(exc), 300), title="Not recorded", severity="warning", markup=False)
            return True
        return False

    @property
    def patterns_pending(self) -> bool:
        """The list is shown and the feature's possible patterns are still computed."""
        return self._patterns_pending

    @property
    def filter_ready(self) -> bool:
        """The feature shown (its possible patterns too) and its filter prepared: nothing a load
        started is still to come (a test's start waits for it)."""
        return self.state is not None and self._prepared is self.state and not self._patterns_pending

    @property
    def is_loaded(self) -> bool:
        return self._loaded.is_set()

    async def wait_loaded(self) -> None:
        """Wait until the feature is read and the list is drawn (or loading failed)."""
        await self._loaded.wait()

    def build_rows(self) -> list[Row]:
        assert self.state is not None
        return self.state.rows(self.filter, self.decisions, self.marked)

    def refresh_valves(self) -> None:
        if self.feature is not None:
            try:
                self.valves = _valves(self.feature, self.decisions)
            except Exception as exc:  # noqa: BLE001 - a valve bug must not stop triage
                self.valves = []
                self.log.error(f"evaluate_valves failed: {exc!r}")

    # -- lifecycle --------------------------------------------------------------------
    def on_load(self) -> None:
        # Until the first screen is drawn the cyclic collector waits (the CLI paused it already for
        # the app's imports): Textual's first frames make some 100,000 short-lived containers and
        # the collections they set off were ~30 ms of the first paint (issue 31), with nothing
        # cyclic to free yet. _drawn() resumes it.
        pause_for_startup()

    def _drawn(self) -> None:
        """The first screen is drawn (or the app closes first): the collector runs again, and what
        open_first's loader holds back goes on."""
        self._first_drawn.set()
        resume_after_startup()

    def get_default_screen(self) -> Screen:
        # The screen the app opens on is the first on the stack (not Textual's empty default screen
        # under it: one screen less to compose, style and draw before the first frame): the Loops
        # inbox, else the feature's screen (pushed over the inbox when it opens a feature).
        if self.inbox is not None:
            states, root = self.inbox
            # lazy: the screens a key opens load when first opened, not before the first paint (issue 31)
            from scars.tui.app.screens.loops import LoopsScreen

            return LoopsScreen(states, root)
        return MainScreen()

    def on_mount(self) -> None:
        # The theme of config.toml, else textual-dark; one chosen in the palette is written back.
        # An unknown one is among the config problems (core's settings.THEMES), said here once.
        wanted = settings.current().theme
        self.theme = wanted if wanted in self.available_themes else settings.DEFAULT_THEME
        for problem in settings.current().config_problems:
            self.notify(one_line(problem, 300), title="config.toml", severity="warning", markup=False)
        self._theme_ready = True
        self._apply_keymap()
        self._may_post.set()
        if self.feature_dir is not None and self._first is None:
            self._load(keep_cursor=False)
        elif self.feature_dir is None:
            self.call_after_refresh(self._drawn)
        self.set_interval(self.POLL_SECONDS, self._poll_disk)

    def show_first(self) -> None:
        """What :meth:`open_first` read, shown as the loader's message is (the main screen calls it
        when it mounts: the first frame then shows the list, or the failure)."""
        first, self._first = self._first, None
        if isinstance(first, ScarsApp.Loaded):
            self.on_scars_app_loaded(first)
        elif isinstance(first, ScarsApp.LoadFailed):
            self.on_scars_app_load_failed(first)

    def open_feature(self, feature_dir: Path) -> None:
        """Switch to another feature (from the Loops inbox): release this one, read that one."""

        if self.backend is not None:
            self.backend.close()
            self.backend = None
        self.state = None
        self.filter = None
        self.marked = set()
        self._patterns_pending, self._reload_after_patterns = False, None
        self._given_feature = self._given_session = None
        self.feature_dir = Path(feature_dir)
        self._loaded.clear()
        if self._main_screen() is None:  # the app opened on the inbox: the feature's screen over it
            self.push_screen(MainScreen())
        else:
            while not isinstance(self.screen, MainScreen):
                self.pop_screen()
            items = self.screen.query_one(ItemList)
            items.placeholder = "Loading…"
            items.set_rows([], keep=False)
        self._load(keep_cursor=False)

    def _apply_keymap(self) -> None:

        src = self._keymap_source
        known = {b.id for b in MAIN_BINDINGS if b.id}
        if isinstance(src, dict):
            keymap, problems = dict(src), [f"unknown binding id '{k}'" for k in src if k not in known]
            keymap = {k: v for k, v in keymap.items() if k in known}
        else:
            keymap, problems = load_keymap(src if isinstance(src, Path) else None, known)
        keymap, clashes = refuse_conflicts(keymap, [*MAIN_BINDINGS, *self.BINDINGS])
        problems += clashes
        self._keymap_problems = problems
        if keymap:
            self.set_keymap(keymap)
        for p in problems:
            self.notify(one_line(p, 300), title="keymap", severity="warning", markup=False)

    def keymap_note(self) -> str:
        path = self._keymap_source if isinstance(self._keymap_source, Path) else keymap_path()
        note = f'Rebind keys in {path} — e.g.  "scars.fix" = "x"'
        if self._keymap_problems:
            note += "\nProblems: " + "; ".join(self._keymap_problems)
        return note

    @work(thread=True, exclusive=True, group="load")
    def _load(self, keep_cursor: bool, why: str = "") -> None:
        self.post_message(self._read(keep_cursor, why, early=self.post_message))

    def open_first(self, ahead: ReadAhead | None = None) -> None:
        """Open the feature now, before the app runs, so that its first frame shows the list: the
        loader's work started here, in its thread (the CLI calls it for a feature it started
        reading ahead, before Textual loaded: ``scars.core.samsara.session.read_ahead``). What the
        loader would post first (the list, before the possible patterns when they are still
        computed; a failure too: the app starts, says it and exits) is shown when the main screen
        mounts; what follows is posted once the app runs."""
        first: list[Message] = []
        given = threading.Event()

        def shown_first(message: Message) -> None:
            first.append(message)
            given.set()
            if isinstance(message, ScarsApp.Loaded) and message.pending:
                # The rest (the possible patterns) once the list is drawn: taken meanwhile, they
                # would share the interpreter with the first frame.
                self._first_drawn.wait()

        def read() -> None:
            message = self._read(False, "", early=shown_first, ahead=ahead)
            if not first:
                shown_first(message)
                return
            self._may_post.wait()  # the possible patterns, once the app can take a message
            if not self.post_message(message) and isinstance(message, ScarsApp.PatternsReady):
                message.backend.close()  # the app closed meanwhile: its session is released here

        threading.Thread(target=read, name="scars-open-first", daemon=True).start()
        given.wait()
        self._first = first[0]

    def _read(
        self,
        keep_cursor: bool,
        why: str,
        *,
        early: Callable[[Message], object] | None = None,
        ahead: ReadAhead | None = None,
    ) -> Message:
        """The loader's work (off the event loop: the load worker's thread, or open_first's): the
        feature read (``keep_cursor``: the open one again) and its message — Loaded,
        PatternsReady after an early Loaded given to ``early`` meanwhile (the list shown before
        the possible patterns of a feature read, not cached), or LoadFailed."""
        before = None
        if gc.get_freeze_count():
            # What the last load froze goes back to the collector and its cyclic garbage (a
            # screen closed, a worker done since, the feature left for another) is freed now,
            # once per load: frozen again below, it would be kept until the app exits.
            unfreeze_and_collect()
        shown_early = False
        taken: tuple[Any, Any] | None = None  # a first open's input stamps, taken before it reads

        def read_early(backend: Backend) -> None:
            # The feature is read but for its possible patterns (computed next, here or in the child
            # that read it ahead): the list is shown now, the patterns' group added when ready.
            nonlocal shown_early
            assert early is not None
            early(self._loaded_message(backend, keep_cursor, why, None, disk_stamp(backend, taken), pending=True))
            shown_early = True

        try:
            if self.backend is not None and keep_cursor:
                stamp = disk_stamp(self.backend)  # before reading: a write during the read is seen next time
                backend = self.backend
                before = snapshot(backend.feature, backend.decisions)
                backend.reload()
            elif self._given_feature is not None:
                backend = Backend(
                    self._given_feature,
                    self._given_session,
                    read_only=True
                    if self._given_session is None
                    else (self.read_only_requested or bool(getattr(self._given_session, "read_only", False))),
                )
            else:
                assert self.feature_dir is not None
                taken = input_stamps(Path(self.feature_dir).absolute())
                backend = Backend.open(
                    self.feature_dir,
                    read_only=self.read_only_requested,
                    user=self.user,
                    meanwhile=read_early if early is not None else None,
                    ahead=ahead,
                )
            if shown_early:
                with gc_paused():
                    state = TriageState(backend.feature)
                message: Message = self.PatternsReady(backend, state)
            else:
                if not keep_cursor:
                    stamp = disk_stamp(backend, taken)
                message = self._loaded_message(backend, keep_cursor, why, before, stamp)
            # The feature, its rows and views live until the next load: out of the collector's
            # sight (a feature holds no reference cycle; dropped, it is freed by its counts). A
            # full collection over them takes ~140 ms at 40,000 items (a stalled key), and the
            # young ones a cursor step's few hundred new strips set off cost ~4-11 ms a step
            # (issue 17). Cyclic garbage pending at the freeze is freed at the next reload.
            gc.freeze()
        except BaseException as exc:  # noqa: BLE001 - shown to the user, never swallowed
            if ahead is not None:
                ahead.close()
            return self.LoadFailed(exc)
        return message

    def read_excerpts(self) -> None:
        """The source excerpts of the rows around the cursor not read yet, read in a worker (the
        detail pane shows an item's excerpt when it is read: a cursor step reads nothing)."""
        screen = self._main_screen()
        if screen is None or self.excerpts is None or self.state is None:
            return
        items = self.excerpts.missing(rows_around(screen.items.rows, screen.items.cursor, self.state.views))
        if items:
            self._read_excerpts(self.excerpts, items)

    @work(thread=True, exclusive=True, group="excerpts")
    def _read_excerpts(self, excerpts: Excerpts, items: list) -> None:
        worker = get_current_worker()
        got = excerpts.read(items, stop=lambda: worker.is_cancelled)
        if not worker.is_cancelled:  # superseded by a newer cursor position: that one reads
            self.call_from_thread(self._excerpts_read, excerpts, got)

    def _excerpts_read(self, excerpts: Excerpts, got: dict) -> None:
        if excerpts is not self.excerpts:  # another load since: its store reads its own
            return
        excerpts.add(got)
        screen = self._main_screen()
        row = screen.current() if screen is not None and screen.query(ItemList) else None
        if screen is not None and row is not None and row.item_id in got:
            screen.show_detail(row)

    def _loaded_message(
        self, backend: Backend, keep_cursor: bool, why: str, before: Any, stamp: object, *, pending: bool = False
    ) -> ScarsApp.Loaded:
        """The ``Loaded`` message of ``backend``'s feature: its state, valves and rows (built here,
        in the loader thread). ``pending``: the feature's possible patterns are still computed."""
        # Tens of thousands of rows and no cyclic garbage among them: a collection pass
        # over the whole feature every few thousand of them only costs (issue 17).
        with gc_paused():
            state = TriageState(backend.feature)
            decisions = backend.decisions
            backend.reopened()  # here, not at the detail's first show (without a session: a journal read)
            valves = _valves(backend.feature, decisions)
            marked = set(self.marked) & set(state.views)
            rows = state.rows(self.filter if keep_cursor else None, decisions, marked)
        user = self.user or backend.user
        changes = describe_changes(before, snapshot(backend.feature, decisions)) if before is not None else None
        excerpts = Excerpts(backend.feature.repo_root, carried=self.excerpts if keep_cursor else None)
        if not keep_cursor:  # the item the cursor goes to: its detail complete in its first frame
            first = state.first_undecided(rows, decisions, 0)
            excerpts.add(excerpts.read(rows_around(rows, first, state.views, 0) if first is not None else ()))
        return self.Loaded(backend, state, valves, keep_cursor, rows, user, changes, why, stamp, pending, excerpts)

    def on_scars_app_loaded(self, message: ScarsApp.Loaded) -> None:

        self.backend = message.backend
        self._disk_stamp = message.stamp
        self.state = message.state
        self.excerpts = message.excerpts
        self.valves = message.valves
        self.marked &= set(self.state.views)
        if self.user is None and not self.pair:
            self.user = message.user
        screen = self._main_screen()
        shown = screen.query(ItemList) if screen is not None else None
        if screen is not None and not shown and not screen.is_mounted:
            self._first = message  # its screen is not composed yet: shown when it mounts (show_first)
            return
        # No main screen, or the app is closing: its widgets are taken down one by one, so a load
        # that lands then finds some of them gone (the list still there, the header not).
        if not shown or screen is None or not screen.query(ScarsHeader):
            return
        items = shown.first()
        items.views = self.state.views
        items.decisions_source = lambda: self.decisions
        items.marked = self.marked
        if self.filter is None:
            items.placeholder = NO_ITEMS
        rows = message.rows
        if not message.keep_cursor:
            self.filter = None
        items.set_rows(rows, keep=message.keep_cursor)
        if not message.keep_cursor:
            first = self.state.first_undecided(rows, self.decisions, 0)
            if first is not None:
                items.move_to(first)
        # set_rows posted Highlighted: the detail after the list; the valves are the loader's.
        screen.refresh_all(detail=False, valves=False)
        self._patterns_pending = message.pending
        if not self._patterns_pending:
            # After the frame that shows the rows: the worker's Python would share the GIL with it.
            self.call_after_refresh(self._prepare_filter, self.state)
        if message.why == "disk" and message.changes:
            self.notify(one_line(f"Changed on disk: {message.changes}.", 300), title="Reloaded", markup=False)
        if message.why == "r":
            said = (
                f"Reloaded from disk: {message.changes}." if message.changes else "Reloaded from disk: nothing changed."
            )
            self.notify(one_line(said, 300), title="Reload", markup=False)
        if self.backend.lock_holder and not message.keep_cursor:
            self.notify(
                one_line(f"Opened read-only: the lock is held by {describe_holder(self.backend.lock_holder)}.", 300),
                title="Read-only",
                severity="warning",
                timeout=8,
                markup=False,
            )
        elif self.backend.write_refused and not message.keep_cursor:
            self.notify(
                one_line(f"Opened {self.backend.write_refused}", 400),
                title="Read-only",
                severity="warning",
                timeout=8,
                markup=False,
            )
        self._loaded.set()
        self.call_after_refresh(self._drawn)

    def on_scars_app_patterns_ready(self, message: ScarsApp.PatternsReady) -> None:
        """The possible patterns arrived: their group joins the list (the filter's rows built again,
        as a filter's, off the event loop; the cursor stays on its item)."""
        if message.backend is not self.backend:  # another feature opened meanwhile
            return
        self._patterns_pending = False
        self.state = message.state
        screen = self._main_screen()
        if screen is not None:
            screen.items.views = self.state.views
            screen.refilter()
        self.call_after_refresh(self._prepare_filter, self.state)
        if self._reload_after_patterns is not None:
            why, self._reload_after_patterns = self._reload_after_patterns, None
            self.reload(why=why)

    @work(thread=True, exclusive=True, group="prepare-filter")
    def _prepare_filter(self, state: TriageState) -> None:
        """The filter's haystack and rows, built after the first paint rather than before it or on
        the first keystroke of a filter (issue 17)."""
        with gc_paused():
            state.prepare_filter()
        gc.freeze()  # every item's view and the haystack, as the load's objects (see _load)
        self.post_message(self.FilterPrepared(state))

    def on_scars_app_filter_prepared(self, message: ScarsApp.FilterPrepared) -> None:
        self._prepared = message.state

    def on_scars_app_load_failed(self, message: ScarsApp.LoadFailed) -> None:
        self.load_error = message.error

        text = str(message.error) if isinstance(message.error, ScarsError) else repr(message.error)
        screen = self._main_screen()
        if screen is not None:
            screen.query_one(DetailPane).show_nothing(one_line(f"Cannot open the feature: {text}", 400))
        self._loaded.set()
        self._drawn()
        code = message.error.exit_code if isinstance(message.error, ScarsError) else 1
        self.exit(code, message=one_line(f"scars: {text}", 400))

    def _main_screen(self):

        for screen in self.screen_stack:
            if isinstance(screen, MainScreen):
                return screen
        return None

    def open_in_editor(self, path: Path, line: int | None) -> None:
        """$VISUAL / $EDITOR (else vi) on ``path`` at ``line``, in the editor's own line syntax
        (:func:`scars.tui.app.editor.editor_argv`); the app steps aside while it runs."""
        import subprocess

        from textual.app import SuspendNotSupported

        from scars.tui.app.editor import editor_argv

        argv = editor_argv(settings.current().editor, str(path), line)
        try:
            with self.suspend():
                code = subprocess.call(argv)
        except SuspendNotSupported:  # no terminal to hand over (a browser, a test): run it beside the app
            code = subprocess.call(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError as exc:
            self.notify(
                one_line(f"cannot run {argv[0]}: {exc.strerror}", 300), title="Editor", severity="error", markup=False
            )
            return
        if code:
            self.notify(one_line(f"{argv[0]} exited {code}", 200), title="Editor", severity="warning", markup=False)
        self.reload(why="edit")

    # -- live refresh: the loop keeps writing while a person triages --------------------
    def _poll_disk(self) -> None:
        if self.backend is None or not self.is_loaded or self._disk_stamp is None or self._patterns_pending:
            return
        self._check_disk()

    @work(thread=True, exclusive=True, group="poll")
    def _check_disk(self) -> None:
        backend = self.backend
        if backend is None:
            return
        stamp = disk_stamp(backend)
        self.call_from_thread(self._disk_checked, backend, stamp)

    def _disk_checked(self, backend: Backend, stamp: object) -> None:
        if backend is not self.backend or stamp == self._disk_stamp:
            return
        self._disk_stamp = stamp
        self.reload(why="disk")

    def watch_theme(self, theme: str) -> None:
        """A theme chosen in the app (the palette's "Change theme") is kept in config.toml."""
        if getattr(self, "_theme_ready", False) and theme != settings.current().theme:
            try:
                save_config_value(config_path(settings.current().config_home), "theme", theme)
            except OSError as exc:
                self.notify(one_line(f"theme not kept: {exc}", 200), title="config.toml", markup=False)

    def action_interrupt(self) -> None:
        self.exit(
            130, message="scars: interrupted (every decision shown as saved is on disk; an open form recorded nothing)"
        )

    def reload(self, why: str = "r") -> None:
        """Re-read the feature from disk and merge rows on their stable keys (cursor and marks kept)."""
        if self.backend is None:
            return
        if self._patterns_pending:  # the read still on: read again once it is done
            self._reload_after_patterns = why
            return
        self._load(keep_cursor=True, why=why)

    def on_unmount(self) -> None:
        if self.backend is not None:
            self.backend.close()
        self._drawn()  # closed before its first screen was drawn: the collector runs again
        gc.unfreeze()  # what the loads and the start froze is the collector's again (a process that goes on)

    # -- forms --------------------------------------------------------------------------
    def owner_suggestions(self, item_ids: list[str]) -> list[str]:

        assert self.state is not None and self.feature is not None
        out: dict[str, None] = {o: None for o in owners_in_logs(self.feature, self.decisions)}
        files = []
        for i in item_ids[:20]:
            it = self.state.views[i].item
            where = it.where or it.debt_location  # the report's location suggests owners too
            if where:
                loc = parse_location(where)
                if loc.path:
                    files.append(loc.path)
        key = "\0".join(sorted(set(files)))
        if key not in self._owner_cache:
            root = self.feature.repo_root
            found = git_authors(root, files) + codeowners(root, files)
            self._owner_cache[key] = [one_line(f, 80) for f in found]
        for o in self._owner_cache[key]:
            out.setdefault(o, None)
        return list(out)

    def open_accept_form(self, item_ids: list[str], callback: Callable[[dict | None], None]) -> None:

        assert self.state is not None
        subjects = [self.state.views[i].line_text for i in item_ids]
        # lazy: the screens a key opens load when first opened, not before the first paint (issue 31)
        from scars.tui.app.screens.forms import AcceptForm

        self.push_screen(
            AcceptForm(subjects, self._validate, suggestions=self.owner_suggestions(item_ids)), callback=callback
        )

    def open_defer_form(self, item_ids: list[str], callback: Callable[[dict | None], None]) -> None:

        assert self.state is not None
        subjects = [self.state.views[i].line_text for i in item_ids]
        # lazy: the screens a key opens load when first opened, not before the first paint (issue 31)
        from scars.tui.app.screens.forms import DeferForm

        self.push_screen(DeferForm(subjects, self._validate), callback=callback)

    @staticmethod
    def _validate(action: str, fields: dict) -> list:
        return Backend.validate(action, {k: v for k, v in fields.items() if v is not None})

    # -- round gate ---------------------------------------------------------------------
    def ask_round_override(self, exc: ScarsError, retry: Callable[[], Any]) -> bool:
        """When ``exc`` is the max-rounds valve's refusal (a round past max_rounds): ask why to go
        on anyway; with a reason, try again (core checks the reason and records the override with
        the round). False, and nothing asked, for any other error."""
        if not (isinstance(exc, DecisionRefused) and any(e.field == "override_max_rounds" for e in exc.errors)):
            return False

        def answered(reason: str | None) -> None:
            if not reason or self.backend is None:
                self.notify("Not recorded: the max-rounds safety valve stops the iteration.", markup=False)
                return
            self.backend.round_override = reason
            try:
                retry()
            finally:
                self.backend.round_override = None

        # lazy: the screens a key opens load when first opened, not before the first paint (issue 31)
        from scars.tui.app.screens.confirm import OverrideReason

        self.push_screen(OverrideReason("Max rounds reached", str(exc)), callback=answered)
        return True

    def ask_round_start(self, stopped: tuple[int, str] | None, then: Callable[[], Any]) -> None:
        """Starting a round is the person's explicit act when a decision cannot open one by core's
        rule (after a stop: the loop went on to Validation) or when the round gate is asked for and
        no round is open: asked on a screen that says which round; yes records its start (as
        `scars round start` does), then ``then``; no or esc records nothing."""
        if self.backend is None:
            return
        number = self.backend.round_info()["round"]
        if stopped is not None:
            title = f"The iteration stopped after round {stopped[0]} ({stopped[1]}); start round {number}?"
            note = (
                f"The loop went on to Validation. Starting round {number} iterates again: its start is "
                "recorded (as `scars round start` records it), then what you asked for."
            )
        else:
            title = f"No round is open; start round {number}?"
            note = (
                f"The round gate answers an open round. Starting round {number} is recorded (as `scars round "
                "start` records it); the first decision of a round opens it too."
            )

        def answered(ok: bool | None) -> None:
            if not ok:
                self.notify(f"Not recorded: round {number} was not started.", markup=False)
                return
            self._start_round_then(then)

        # lazy: the screens a key opens load when first opened, not before the first paint (issue 31)
        from scars.tui.app.screens.confirm import ConfirmRoundStart

        self.push_screen(ConfirmRoundStart(title, note), callback=answered)

    def _start_round_then(self, then: Callable[[], Any]) -> None:
        if self.backend is None:
            return
        try:
            info = self.backend.start_round(decided_by=self.driver)
        except ScarsError as exc:  # the max-rounds valve: its override's reason asked, then again
            if not self.ask_round_override(exc, retry=lambda: self._start_round_then(then)):
                self.notify(one_line(str(exc), 300), title="Not recorded", severity="error", markup=False)
            return
        self.notify(f"Round {info['round']} started: the loop iterates again.", title="New round", markup=False)
        screen = self._main_screen()
        if screen is not None:
            screen.refresh_all(detail=False)
        then()

    def open_gate(self) -> None:

        if self.feature is None or self.backend is None:
            return
        screen = self._main_screen()
        if self.backend.read_only or self._patterns_pending:
            if screen is not None:
                screen._refuse_if_read_only()
            return
        if not self.backend.round_open():  # looking writes nothing: a round is started only when asked
            self.ask_round_start(self.backend.stopped(), then=self.open_gate)
            return
        try:
            evidence, blocked = self.backend.round_gate(decided_by=self.driver)
        except ScarsError as exc:
            if not self.ask_round_override(exc, retry=self.open_gate):
                self.notify(one_line(str(exc), 300), title="Round gate", severity="error", markup=False)
            return
        # lazy: the screens a key opens load when first opened, not before the first paint (issue 31)
        from scars.tui.app.screens.gate import RoundGate

        self.push_screen(
            RoundGate(evidence, blocked), callback=lambda result: self._record_gate(result, evidence, blocked)
        )

    def _record_gate(self, result: dict | None, evidence, blocked: list) -> None:
        if result is None or self.backend is None:
            return
        screen = self._main_screen()
        try:
            # The same record path as `scars gate blocked-fix` / `round-continue` and answers files.
            for b in blocked:
                answer = result["blocked"][b.facts["item"]]
                self.backend.record_gate(b, answer, result["reason"], decided_by=self.driver)
            recorded = self.backend.record_gate(
                evidence,
                result["answer"],
                result["reason"],
                decided_by=self.driver,
                round_fields=result.get("rule3") or None,
            )
        except ScarsError as exc:
            self.notify(one_line(str(exc), 300), title="Round not recorded", severity="error", markup=False)
            return
        self.notify(one_line(f"Round recorded: {recorded.extra.get('round_decision')}.", 100), markup=False)
        if recorded.extra.get("transition"):  # the iteration ended: seed 002's final transition line
            self.notify(one_line(str(recorded.extra["transition"]), 300), title="Iteration done", markup=False)
        if screen is not None:
            self.reload(why="gate")
