"""The command line that opens a file at a line in the user's editor (`e` in the app).

``$VISUAL`` / ``$EDITOR`` is split as a shell splits it (``code --wait`` is a program and its
option), and the line is given in the editor's own syntax: ``+LINE FILE`` for the vi family,
emacs, nano, micro, helix, kakoune and the like; ``-g FILE:LINE`` for VS Code and its forks;
``FILE:LINE`` for Sublime Text and Zed; ``-l LINE FILE`` for TextMate. An editor scars does not
know gets the file alone: a line in a syntax it does not read would be taken for a file name.
"""

from __future__ import annotations

import os
import shlex

PLUS_LINE = frozenset(
    {"vi", "vim", "nvim", "gvim", "mvim", "view", "vim.basic", "vim.tiny", "elvis", "nvi", "ex"}
    | {"emacs", "emacsclient", "nano", "pico", "micro", "hx", "helix", "kak", "joe", "jed", "mg", "ne"}
)
GOTO_FLAG = frozenset({"code", "code-insiders", "codium", "vscodium", "cursor", "windsurf"})
COLON_LINE = frozenset({"subl", "sublime_text", "zed", "zeditor"})
DASH_L = frozenset({"mate"})

DEFAULT_EDITOR = "vi"


def editor_argv(editor: str | None, path: str, line: int | None) -> list[str]:
    """The argv that opens ``path`` at ``line`` (None: no line) in ``editor`` (``$VISUAL`` /
    ``$EDITOR`` as given; empty: vi). Text a shell cannot split (an unclosed quote) is taken as
    one program name."""
    try:
        words = shlex.split(editor or "")
    except ValueError:
        words = [editor] if editor else []
    if not words:
        words = [DEFAULT_EDITOR]
    name = os.path.basename(words[0]).lower().removesuffix(".exe")
    if not line or line < 1:
        return [*words, path]
    if name in PLUS_LINE:
        return [*words, f"+{line}", path]
    if name in GOTO_FLAG:
        return [*words, "-g", f"{path}:{line}"]
    if name in COLON_LINE:
        return [*words, f"{path}:{line}"]
    if name in DASH_L:
        return [*words, "-l", str(line), path]
    return [*words, path]
