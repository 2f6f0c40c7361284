"""Opening the app from the CLI, the one place: whether a full-screen app can run here (and what
to say when not), which feature bare `scars` / `scars triage` open, and starting the app on a
feature or on the Loops inbox. Bare `scars` (home) and `scars triage` both use it; before, they
imported each other. The only CLI module that imports the Textual app (lazily, when it starts).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from scars.core import settings
from scars.core.errors import PathNotFound

if TYPE_CHECKING:
    from scars.core.loops import LoopState

T = TypeVar("T")

NON_INTERACTIVE = (
    "Without a terminal use the non-interactive commands:\n"
    "  scars status FEATURE_DIR                         items, their ids and decisions\n"
    "  scars decide ITEM --fix --feature FEATURE_DIR    record one decision (--accept / --defer: see --help)\n"
    "  scars gate triage FEATURE_DIR --answers FILE     answer the triage gate from a file"
)


# The scar reports a feature may hold to be read before the app's first frame (read ahead, beside
# Textual's import): ~700 items, read with their possible patterns in about the time the import
# takes (bench/run.py's first_paint; the 500-item `small` feature's reports are 176 KiB).
READ_AHEAD_BYTES = 256 * 1024


def why_not_interactive() -> str | None:
    """Why a full-screen app cannot run here, or None when it can (stdin, stdout and stderr are
    terminals and the terminal can draw it)."""
    if settings.current().textual_driver.endswith("web_driver:WebDriver"):
        return None  # `scars serve`: a browser draws the app through textual-serve's pipes
    try:
        ttys = sys.stdin.isatty() and sys.stdout.isatty() and sys.stderr.isatty()
    except (AttributeError, ValueError):
        ttys = False
    if not ttys:
        return "needs an interactive terminal (stdin and stdout are not both a TTY)"
    if settings.current().term == "dumb":
        return "TERM=dumb cannot draw the full-screen app"
    return None


def interactive() -> bool:
    """True when a full-screen app can run (see why_not_interactive)."""
    return why_not_interactive() is None


def refuse_without_tty(command: str = "") -> int:
    name = f"scars {command}" if command else "scars"
    why = why_not_interactive() or "needs an interactive terminal"
    print(f"{name}: {why}; the app was not started.\n{NON_INTERACTIVE}", file=sys.stderr)
    return 2


def needs_triage(state: LoopState) -> bool:
    """A samsara feature's state with a counted item undecided: what `scars triage` without a
    directory and bare `scars` open (the state's own count, ``details["undecided"]``)."""
    return state.kind == "samsara" and bool(state.details.get("undecided"))


def waiting_features(states: Iterable[LoopState], root: Path) -> list[Path]:
    """The features of ``root``'s changes/ among ``states`` that need triage, newest first."""
    found = [root / s.path for s in states if needs_triage(s) and Path(s.path).parent == Path("changes")]
    return sorted(found, key=lambda p: p.name, reverse=True)


def pick_feature(start: Path) -> tuple[Path | None, list[Path]]:
    """(newest feature needing triage or None, every feature needing triage, newest first)."""
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.loops import samsara_feature_state
    from scars.core.samsara.layout import find_features, find_repo_root

    root = find_repo_root(start)
    if root is None:
        return None, []
    waiting = waiting_features((samsara_feature_state(f, root) for f in find_features(root)), root)
    return (waiting[0] if waiting else None), waiting


def beside_the_app(fn: Callable[..., T], args: tuple[Any, ...], also: tuple[str, ...] = ()) -> T:
    """``fn(*args)`` computed in a forked child while this process imports the app (Textual, its
    screens: ~0.2 s) and the modules ``also`` names (what the result holds, the screen it opens),
    for a command that opens the app on what it reads (``storage.Beside``: the fork is safe while
    this process runs one thread; any failure computes it here)."""
    # lazy: loaded when the command runs
    from scars.core.storage import Beside, pause_for_startup, resume_after_startup

    # Paused until the app's first frame (the caller launches it, or resumes the collector).
    pause_for_startup()
    try:
        child = Beside(fn, args)
        # lazy: Textual loads only when the app starts (the CLI never imports the app at module level)
        for name in ("scars.tui.app.app", *also):
            importlib.import_module(name)
        return child.result()
    except BaseException:
        resume_after_startup()
        raise


def launch(
    feature_dir: Path,
    *,
    read_only: bool = False,
    pair=(),
    require_second=(),
    user=None,
    keymap: Path | None = None,
    before_open: Callable[[], object] | None = None,
) -> int:
    """The app on ``feature_dir``; ``before_open``: called before the feature is opened (the demo's
    git repository, made meanwhile)."""
    if keymap is not None and not keymap.is_file():
        raise PathNotFound(f"{keymap}: keymap file not found")
    # lazy: loaded when the app starts
    from scars.core.storage import paused_for_startup

    with paused_for_startup():  # until the app's first frame (it resumes the collector then)
        # lazy: loaded when the app starts
        from scars.core.samsara.session import read_ahead

        # Before Textual loads (a fork is safe while this process runs one thread): a feature small
        # enough to wait for is read in a child meanwhile and opened before the app's first frame,
        # which then shows its list; a larger one is shown before its possible patterns by the
        # app's loader thread (issue 31).
        ahead = read_ahead(feature_dir, max_report_bytes=READ_AHEAD_BYTES)
        # lazy: Textual loads only when the app starts (the CLI never imports the app at module level)
        from scars.tui.app.app import ScarsApp

        app = ScarsApp(
            feature_dir, read_only=read_only, pair=pair, require_second=require_second, user=user, keymap=keymap
        )
        if before_open is not None:
            before_open()
        if ahead is not None:
            app.open_first(ahead)
        rc = app.run()
    return int(rc or 0)


def launch_inbox(root: Path, states: list[LoopState] | None = None) -> int:
    """The app on the Loops inbox (every loop of the repository, waiting ones first; ``states``:
    as discover_loops just gave them, else read here)."""
    # lazy: loaded when the app starts
    from scars.core.storage import paused_for_startup

    with paused_for_startup():  # until the app's first frame (it resumes the collector then)
        # lazy: Textual loads only when the app starts (the CLI never imports the app at module level)
        from scars.core.loops import discover_loops
        from scars.tui.app.app import ScarsApp

        app = ScarsApp(None, inbox=(discover_loops(root) if states is None else states, root))
        rc = app.run()
    return int(rc or 0)
