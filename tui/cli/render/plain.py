"""Rich's plain output, without rich's console: `scars status` into a pipe or a file.

Without a terminal and without FORCE_COLOR, :func:`scars.tui.cli.render.console.make_console`
gives an unstyled console 80 columns wide, and a report's lines are ``Text(…, overflow="fold")``
printed through it. Importing that console costs ~15 ms of a ~120 ms `scars status`, so this
module prints the same bytes from rich's own wrapping rules (``rich._wrap.divide_line`` and
``rich.cells``, a few milliseconds): the line split at the offsets rich computes, the whitespace
beyond the width cut as ``Text.rstrip_end`` cuts it, a line wider than the width cut to it by
``set_cell_size`` as ``Text.truncate`` does, the control codes rich strips removed, and (as
make_console does without a terminal) no line ending in spaces. A text with a
tab (rich expands tabs by cells) is left to rich itself (:func:`folded` returns None).
:func:`table` does the same for a borderless table whose columns all fit at their natural width
(each cell's trailing whitespace cut by ``Text.rstrip_end`` at its column's width, as rich wraps it).
``tests/tui/cli/test_plain_render.py`` compares the two on hostile and real texts.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from typing import IO, TextIO

from scars.core import settings

WIDTH = 80  # make_console's width without a terminal

# rich.control.STRIP_CONTROL_CODES (BEL, BS, VT, FF, CR): removed from every Text
_STRIP = dict.fromkeys((7, 8, 11, 12, 13))
_TRAILING_SPACE = re.compile(r"\s+$")  # rich.text's _re_whitespace


def styled(is_tty: bool) -> bool:
    """Whether output to a stream (a terminal or not) is styled: a terminal, or FORCE_COLOR, unless
    NO_COLOR (which wins)."""
    env = settings.current()
    return not env.no_color and (is_tty or env.force_color)


def wanted(stream: TextIO) -> bool:
    """``stream`` gets make_console's plain console: not a terminal, and not :func:`styled`."""
    is_tty = stream.isatty()
    return not is_tty and not styled(is_tty)


def folded(text: str, width: int = WIDTH) -> str | None:
    """What an unstyled rich console ``width`` columns wide prints for ``Text(text,
    overflow="fold")`` (the newline at its end included); None for a text holding a tab."""
    # lazy: rich's wrapping rules only (the console and its styles are not imported)
    from rich._wrap import divide_line
    from rich.cells import cell_len, set_cell_size

    text = text.translate(_STRIP)
    if "\t" in text:
        return None
    out: list[str] = []
    for line in text.split("\n"):
        offsets = divide_line(line, width, fold=True)
        for start, end in zip([0, *offsets], [*offsets, len(line)], strict=True):
            piece = _rstrip_end(line[start:end], width)
            if cell_len(piece) > width:  # Text.truncate(overflow="fold")
                piece = set_cell_size(piece, width)
            out.append(piece.rstrip(" "))  # make_console: no line ends in spaces without a terminal
    return "\n".join(out) + "\n"


def _rstrip_end(text: str, width: int) -> str:
    """``text`` as ``Text.rstrip_end(width)`` leaves it: rich compares the text's length in
    characters (not cells) with ``width`` and, when it is longer, cuts that excess from its trailing
    whitespace. A text whose zero-width characters (combining marks) make it longer in characters
    than in cells loses trailing whitespace though it fits: ``"\u0301\u0301ab\u3000"`` (5
    characters, 4 cells) in 4 columns loses its ideographic space. Rich does this to each piece of
    a folded line and to each table cell, at its column's width."""
    if len(text) <= width:
        return text
    space = _TRAILING_SPACE.search(text)
    if space is None:
        return text
    return text[: len(text) - min(len(space.group(0)), len(text) - width)]


def table(columns: list[tuple[str, str, int]], rows: Sequence[tuple[str, ...]], width: int = WIDTH) -> str | None:
    """What an unstyled rich console ``width`` columns wide prints for ``Table(box=None,
    show_edge=False, pad_edge=False, padding=(0, 1, 0, 0))`` with ``columns`` (header, justify
    "left" or "right", min_width) and ``rows`` of plain ``Text`` cells; None when rich would do
    more than lay each cell on one line at its column's natural width: the columns wider than
    ``width`` together (rich shrinks and folds them), or a cell holding a tab or a line break."""
    from rich.cells import cell_len  # lazy: rich's cell widths only

    cells = [[h for h, _, _ in columns], *([c.translate(_STRIP) for c in row] for row in rows)]
    widths = [m for _, _, m in columns]
    for row in cells:
        for i, c in enumerate(row):
            if "\t" in c or (c and c.splitlines() != [c]):  # Text.__rich_measure__ splits lines
                return None
            widths[i] = max(widths[i], cell_len(c))
    if sum(widths) + len(widths) - 1 > width:  # one space after each column but the last
        return None
    out: list[str] = []
    for row in cells:
        line = []
        for c, w, (_, justify, _) in zip(row, widths, columns, strict=True):
            c = _rstrip_end(c, w)  # Text.wrap, at the column's width
            if justify == "right":  # Lines.justify: the text's trailing whitespace dropped first
                c = _TRAILING_SPACE.sub("", c)
                line.append(" " * (w - cell_len(c)) + c)
            else:
                line.append(c + " " * (w - cell_len(c)))
        out.append(" ".join(line).rstrip(" "))  # make_console: no line ends in spaces without a terminal
    return "\n".join(out) + "\n"


def write(stream: TextIO, text: str) -> None:
    """``text`` written to ``stream``; a reader that went away ends the command as the console
    does (stdout pointed at /dev/null so the flush at exit cannot fail again, BrokenPipeError)."""
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:
        quiet_after_broken_pipe(stream)
        raise


def quiet_after_broken_pipe(stream: IO[str]) -> None:
    """Point ``stream``'s descriptor (stdout's when it has none) at /dev/null: the reader left."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        fd = sys.stdout.fileno()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
