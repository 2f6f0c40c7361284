"""A progress line on stderr while a slow read runs: at a terminal only, never into a pipe.

``scars status`` on a feature of thousands of reports left the terminal blank for seconds (issue
31). :class:`Reading` shows Rich's status spinner with what is being read on stderr once the read
has taken ``DELAY`` seconds (a fast read shows nothing), and clears it before the command prints
(:meth:`Reading.stop`). Without a terminal on stderr (a pipe, a file, CI) or with ``TERM=dumb``
nothing is shown and rich is not imported.
"""

from __future__ import annotations

import sys
import threading
from typing import Any, TextIO

from scars.core import settings
from scars.core.sanitize import one_line

DELAY = 0.3  # seconds a read runs before its progress line shows


class Reading:
    """``with Reading("reading 3000 scar reports of x…"):`` — the spinner on stderr while the
    block runs (from ``DELAY`` on); :meth:`stop` clears it early (before the output starts)."""

    def __init__(self, label: str, stream: TextIO | None = None, delay: float = DELAY) -> None:
        self.label = one_line(label)
        self.stream = sys.stderr if stream is None else stream
        self.delay = delay
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._status: Any = None
        self._stopped = False

    def shows(self) -> bool:
        """Whether a progress line may show: stderr is a terminal that is not ``dumb``."""
        try:
            tty = self.stream.isatty()
        except (AttributeError, OSError, ValueError):
            return False
        return tty and settings.current().term != "dumb"

    def __enter__(self) -> Reading:
        if self.shows():
            self._timer = threading.Timer(self.delay, self.show)
            self._timer.daemon = True
            self._timer.start()
        return self

    def show(self) -> None:
        """Show the spinner now (the timer's call), unless already stopped."""
        # lazy: rich only when a read is slow enough to show its progress
        from rich.text import Text

        from scars.tui.cli.render.console import make_console

        with self._lock:
            if self._stopped or self._status is not None:
                return
            self._status = make_console(file=self.stream).status(Text(self.label), spinner="dots")
            self._status.start()

    def stop(self) -> None:
        """Clear the spinner (it leaves no line behind) and never show it after this."""
        with self._lock:
            self._stopped = True
            timer = self._timer
            if timer is not None:
                timer.cancel()
            status, self._status = self._status, None
        if status is not None:
            status.stop()
        if timer is not None and timer is not threading.current_thread():
            timer.join()  # a show() under way has seen the stop, or its spinner is stopped above

    def __exit__(self, *exc: object) -> None:
        self.stop()


def reports_label(feature_dir: Any, root: Any = None) -> str:
    """``reading 3000 scar reports of <feature>…``: the reports counted by name, listed by the
    repository's read rule (``paths.list_dir``: a ``scar-reports/`` that leads out of ``root`` is
    never listed); without a count when they cannot be listed."""
    # lazy: os and the read rule only here
    import os

    from scars.core.storage import Unreadable, list_dir

    name = os.path.basename(os.fspath(feature_dir).rstrip("/"))
    try:
        names = list_dir(os.path.join(feature_dir, "scar-reports"), root=root or feature_dir, what="scar-reports/")
    except (Unreadable, OSError):
        return f"reading {name}…"
    n = sum(1 for e in names if e.endswith((".yaml", ".yml")))
    return f"reading {n} scar report{'' if n == 1 else 's'} of {name}…"
