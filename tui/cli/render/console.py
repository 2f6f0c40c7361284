"""Rich consoles for plain reports: never markup, emoji codes or auto-highlighting.

Untrusted text reaches a console only through ``scars.core.sanitize`` and as ``Text``
objects or with ``markup=False``. Rich honours ``NO_COLOR`` and writes plain text when the
output is not a terminal.
"""

from __future__ import annotations

import sys

from rich.console import Console


def make_console(stderr: bool = False, width: int | None = None) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    is_tty = stream.isatty()
    return Console(
        file=stream,
        markup=False,
        emoji=False,
        highlight=False,
        soft_wrap=False,
        width=width if width is not None else (None if is_tty else 80),
        force_terminal=None,
        no_color=None,
        color_system="auto" if is_tty else None,
    )
