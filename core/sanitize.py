"""Make untrusted text inert and readable.

Text read from scar reports, logs and other loops' files is untrusted. Before it is
shown anywhere (the app, ``scars status``, gate prompts) every control or format
character is made *visible*, never deleted (deleting hides evidence):

* C0 controls except newline and tab -> the Unicode "control pictures" (ESC -> U+241B);
* DEL -> U+2421;
* C1 controls (U+0080..U+009F) -> ``\\x9b``-style escapes;
* format characters (bidi overrides, zero-width characters, BOM, tag characters),
  line and paragraph separators -> ``<U+202E>``-style escapes.

Markup is a renderer concern: the terminal layer renders sanitized text as content,
never as markup. JSON output needs no sanitizing (``json.dumps`` escapes with
``ensure_ascii=True``), but ``visible()`` is idempotent and safe to apply there too.
"""

from __future__ import annotations

import re
import shlex

# Unicode categories Cf, Zl and Zp (Unicode 14 as shipped with CPython 3.11), as ranges.
_FORMAT_RANGES = (
    (0x00AD, 0x00AD),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x2028, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x13438),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
)


def _char_class(ranges: tuple[tuple[int, int], ...]) -> str:
    parts = []
    for lo, hi in ranges:
        parts.append(re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}")
    return "".join(parts)


_C0 = "\x00-\x08\x0b-\x1f"  # every C0 control except \t (0x09) and \n (0x0a)
# Every character visible() rewrites, the one definition (the hostile tests look for these in
# scars' output through it).
UNSAFE = re.compile(f"[{_C0}\x7f\x80-\x9f{_char_class(_FORMAT_RANGES)}]")
_UNSAFE_ONE_LINE = re.compile(f"[\t\n{_C0}\x7f\x80-\x9f{_char_class(_FORMAT_RANGES)}]")


def _replace(match: re.Match[str]) -> str:
    ch = match.group()
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)  # control pictures: U+2400..U+241F
    if code == 0x7F:
        return "\u2421"
    if code <= 0x9F:
        return f"\\x{code:02x}"
    return f"<U+{code:04X}>"


def _replace_one_line(match: re.Match[str]) -> str:
    ch = match.group()
    if ch == "\n":
        return "\u21b5"  # ↵: a newline shown inside a one-line rendering
    if ch == "\t":
        return " "
    return _replace(match)


def visible(text: str) -> str:
    """Return ``text`` with every control and format character made visible.

    Newlines and tabs are kept (multi-line detail views need them).
    """
    if not isinstance(text, str):
        text = str(text)
    return UNSAFE.sub(_replace, text)


def one_line(text: str, width: int | None = None) -> str:
    """Return ``text`` as one inert line; newlines become ``↵``.

    With ``width``, a longer result is cut to ``width`` characters ending in ``…``.
    """
    if not isinstance(text, str):
        text = str(text)
    out = _UNSAFE_ONE_LINE.sub(_replace_one_line, text)
    if width is not None and len(out) > width:
        out = out[: max(width - 1, 0)] + "…"
    return out


def has_unsafe(text: str) -> bool:
    """True when ``text`` holds a character that ``visible`` would rewrite."""
    return UNSAFE.search(text) is not None


_ANSI_C = {
    "\x07": "\\a",
    "\x08": "\\b",
    "\x1b": "\\e",
    "\x0c": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\x0b": "\\v",
}


def _ansi_c(ch: str) -> str:
    if ch in _ANSI_C:
        return _ANSI_C[ch]
    if ch in "\\'":
        return "\\" + ch
    if not UNSAFE.match(ch):
        return ch
    code = ord(ch)
    # \\xHH is a byte in bash, so only below 0x80; \\u / \\U give the character in the locale's UTF-8
    return f"\\x{code:02x}" if code < 0x80 else (f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")


def shell_word(word: str) -> str:
    """``word`` as one word of a command a person copies into bash or zsh, inert on the terminal:
    ``shlex.quote`` for plain text; a word holding a control or format character (or a newline or
    tab) in ANSI-C quoting, ``$'feat\\e[2J'``, which shows no escape sequence raw and still pastes
    as the same argument (a path from a repository may hold anything)."""
    word = str(word)
    if UNSAFE.search(word) is None and "\n" not in word and "\t" not in word:
        return shlex.quote(word)
    return "$'" + "".join(_ansi_c(ch) for ch in word) + "'"


def shell_join(words: list[str]) -> str:
    """The command line of ``words``, each a :func:`shell_word`."""
    return " ".join(shell_word(w) for w in words)
