"""Rich consoles for plain reports: never markup, emoji codes or auto-highlighting.

Untrusted text reaches a console only through ``scars.core.sanitize`` and as ``Text``
objects or with ``markup=False``. Without a terminal the output is plain text at 80 columns;
``NO_COLOR`` makes it plain everywhere (no colour, no bold: no escape sequence at all), and
``FORCE_COLOR`` styles it even into a pipe (``NO_COLOR`` wins). Both are read through
``scars.core.settings``. A reader that goes away (``scars status | head``) ends the command
quietly with 0, as a plain ``print`` does (rich's own console exits 1 there). Without a terminal
no line ends in spaces (rich pads a table's last column to its width).
"""

from __future__ import annotations

import re
import sys
from typing import TextIO

from rich.console import Console

from scars.tui.cli.render.plain import quiet_after_broken_pipe, styled

# Spaces that end a line (SGR style codes after them aside): rich pads a table's cells to the
# column width, the last column too. Without a terminal they are dropped (`| grep 'x$'`, diffs).
_TRAILING_SPACES = re.compile(r" +(?=(?:\x1b\[[0-9;]*m)*\n)")


class _Console(Console):
    def _render_buffer(self, buffer):  # rich's
        text = super()._render_buffer(buffer)
        try:
            tty = self.file.isatty()
        except (AttributeError, OSError, ValueError):
            tty = False
        return text if tty else _TRAILING_SPACES.sub("", text)

    def on_broken_pipe(self) -> None:
        """The reader left: nothing more is written (stdout points at /dev/null, so the flush at
        exit cannot fail again) and the command ends as ``cli.main`` ends a BrokenPipeError."""
        self.quiet = True
        quiet_after_broken_pipe(self.file)
        raise BrokenPipeError


def make_console(stderr: bool = False, width: int | None = None, file: TextIO | None = None) -> Console:
    """THE Console of the CLI (stdout, ``stderr``, or ``file``: a stream of the caller's)."""
    stream = file if file is not None else (sys.stderr if stderr else sys.stdout)
    is_tty = stream.isatty()
    colour = styled(is_tty)
    return _Console(
        file=stream,
        markup=False,
        emoji=False,
        highlight=False,
        soft_wrap=False,
        width=width if width is not None else (None if is_tty else 80),
        force_terminal=True if colour and not is_tty else None,
        no_color=None,
        color_system="auto" if colour and is_tty else ("standard" if colour else None),
    )
