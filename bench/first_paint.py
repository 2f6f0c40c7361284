#!/usr/bin/env python3
"""The first-paint probe: a command started in a pseudo-terminal, timed until its output shows a
marker (the first frame that draws it), then stopped.

    python bench/first_paint.py MARKER -- CMD ARGS...   # prints {"seconds": S} on its last line

``bench/run.py`` uses it for the app's first screen (`scars triage FEATURE` until the list's rows
show, `scars` at a repository root until the Loops inbox lists its loops) against a bare Textual
app that shows one ``Static`` (its yardstick, started the same way). The pseudo-terminal is 120×40
with ``TERM=xterm-256color``; the clock starts just before the process is started, so interpreter
start-up, imports and the read are inside the figure, as they are for a person.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time

COLUMNS, LINES = 120, 40

# The yardstick: the least a Textual app does before its first frame.
BARE_APP = """
from textual.app import App
from textual.widgets import Static

class Bare(App):
    def compose(self):
        yield Static("bare-app-ready")

Bare().run()
"""
BARE_MARKER = "bare-app-ready"


def first_paint(cmd: list[str], marker: str, env: dict[str, str] | None = None, timeout: float = 120.0) -> float:
    """Seconds from starting ``cmd`` in a pseudo-terminal to the first output holding ``marker``.
    Raises RuntimeError when the command ends or ``timeout`` passes first."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
    run_env = {**(os.environ if env is None else env), "TERM": "xterm-256color"}
    run_env.update(COLUMNS=str(COLUMNS), LINES=str(LINES))
    want = marker.encode()
    seen = b""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, env=run_env, start_new_session=True)
    os.close(slave)
    try:
        while True:
            left = timeout - (time.perf_counter() - start)
            if left <= 0:
                raise RuntimeError(f"no {marker!r} within {timeout:.0f} s: {' '.join(cmd)}")
            ready, _, _ = select.select([master], [], [], min(left, 1.0))
            if not ready:
                if proc.poll() is not None:
                    raise RuntimeError(f"{' '.join(cmd)} ended ({proc.returncode}) before showing {marker!r}")
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the other end closed: the process ended
                raise RuntimeError(f"{' '.join(cmd)} ended before showing {marker!r}") from None
            seen = (seen + chunk)[-(len(want) + 65536) :]
            if want in seen:
                return time.perf_counter() - start
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        os.close(master)


def bare_app(env: dict[str, str] | None = None) -> float:
    return first_paint([sys.executable, "-c", BARE_APP], BARE_MARKER, env)


# The parts of scars' first paint measured alone, each in a fresh interpreter (seconds on its last
# line, interpreter start-up not included): the import of some modules (Textual's own, the app's),
# and a read of a feature up to the list the app shows (the session opened as the app opens it,
# the possible patterns not waited for: what the child reading ahead sends first).
IMPORT = """
import sys, time, importlib
t = time.perf_counter()
for name in sys.argv[1:]:
    importlib.import_module(name)
print(time.perf_counter() - t)
"""
TEXTUAL_MODULES = ["textual.app", "textual.widgets"]
APP_MODULES = ["scars.tui.app.app"]
READ_TO_LIST = """
import sys, time
import scars.tui.app.app
from scars.tui.app.backend import Backend
t = time.perf_counter()
shown = []
backend = Backend.open(sys.argv[1], read_only=True, meanwhile=lambda b: shown.append(time.perf_counter() - t))
done = time.perf_counter() - t
backend.close()
print(shown[0] if shown else done)
"""


# What `scars triage` imports before it forks the child that reads the feature ahead.
TO_FORK = "import scars.tui.cli.main, scars.tui.cli.commands.triage, scars.core.samsara.session"


def part(code: str, args: list[str], env: dict[str, str] | None = None) -> float:
    """Seconds one of the parts above printed (run in a fresh interpreter)."""
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    if "--" not in argv or argv.index("--") != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    print(json.dumps({"seconds": first_paint(argv[2:], argv[0])}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
