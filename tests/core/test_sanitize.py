from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from scars.core.sanitize import has_unsafe, one_line, visible


def test_escape_sequences_become_visible():
    assert visible("a\x1b[2Jb") == "a\u241b[2Jb"
    assert visible("\x1b]52;c;aGk=\x07") == "\u241b]52;c;aGk=\u2407"
    assert visible("x\x9by") == "x\\x9by"
    assert visible("\x7f") == "\u2421"


def test_bidi_and_zero_width_become_visible():
    assert visible("abc\u202edef") == "abc<U+202E>def"
    assert visible("a\u200bb") == "a<U+200B>b"
    assert visible("\ufeffx") == "<U+FEFF>x"


def test_newline_tab_and_cjk_are_kept():
    assert visible("中文\n\tx — y") == "中文\n\tx — y"


def test_one_line_folds_newlines_and_truncates():
    assert one_line("a\nb\tc") == "a↵b c"
    assert one_line("abcdef", width=4) == "abc…"


@given(st.text())
def test_visible_output_is_always_safe_and_idempotent(text):
    out = visible(text)
    assert not has_unsafe(out)
    assert visible(out) == out
    assert "\x1b" not in one_line(text)
