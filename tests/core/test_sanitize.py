from __future__ import annotations

import sys
import unicodedata

import pytest
from hypothesis import example, given
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


# Every class of character the sanitiser makes visible, by its two ends (written out here, not read
# from the sanitiser's table: a range cut short there fails here).
C0 = [(0x00, 0x08), (0x0B, 0x1F)]  # every C0 control but \t and \n -> control pictures
FORMAT = [  # Unicode 14's Cf, Zl and Zp -> <U+XXXX>
    (0x00AD, 0x00AD),  # soft hyphen
    (0x0600, 0x0605),  # Arabic number signs
    (0x061C, 0x061C),  # Arabic letter mark
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x180E, 0x180E),  # Mongolian vowel separator
    (0x200B, 0x200F),  # zero-width space .. RLM
    (0x2028, 0x202E),  # line and paragraph separators, bidi embeddings and overrides
    (0x2060, 0x2064),  # word joiner .. invisible plus
    (0x2066, 0x206F),  # bidi isolates .. nominal digit shapes
    (0xFEFF, 0xFEFF),  # BOM
    (0xFFF9, 0xFFFB),  # interlinear annotations
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x13438),  # Egyptian hieroglyph format controls
    (0x1BCA0, 0x1BCA3),  # shorthand format controls
    (0x1D173, 0x1D17A),  # musical symbol format controls
    (0xE0001, 0xE0001),  # language tag
    (0xE0020, 0xE007F),  # tag characters
]


def _ends(ranges):
    return sorted({c for lo, hi in ranges for c in (lo, hi)})


@pytest.mark.parametrize("code", _ends(C0), ids=hex)
def test_every_c0_control_but_tab_and_newline_becomes_its_control_picture(code):
    assert visible(f"a{chr(code)}b") == f"a{chr(0x2400 + code)}b" == one_line(f"a{chr(code)}b")


@pytest.mark.parametrize("code", [0x7F, 0x80, 0x9F], ids=hex)
def test_del_and_every_c1_control_become_visible(code):
    shown = "\u2421" if code == 0x7F else f"\\x{code:02x}"
    assert visible(f"a{chr(code)}b") == f"a{shown}b" == one_line(f"a{chr(code)}b")


@pytest.mark.parametrize("code", _ends(FORMAT), ids=hex)
def test_every_format_character_and_separator_becomes_its_code(code):
    assert visible(f"a{chr(code)}b") == f"a<U+{code:04X}>b" == one_line(f"a{chr(code)}b")
    assert has_unsafe(chr(code))


OUTSIDE = sorted(
    {c for lo, hi in [*C0, (0x7F, 0x9F), *FORMAT] for c in (lo - 1, hi + 1)}
    - {c for lo, hi in [*C0, (0x7F, 0x9F), *FORMAT] for c in range(lo, hi + 1)}
    - {-1, 0x09, 0x0A}
)


@pytest.mark.parametrize("code", OUTSIDE, ids=hex)
def test_the_character_just_outside_each_class_is_kept(code):
    assert visible(f"a{chr(code)}b") == f"a{chr(code)}b" and not has_unsafe(chr(code))


@pytest.mark.skipif(unicodedata.unidata_version != "14.0.0", reason="the table is Unicode 14's (CPython 3.11)")
def test_the_format_classes_are_exactly_unicodes_cf_zl_and_zp():
    every = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)
    made_visible = {ch for ch in every if visible(ch) != ch}
    expected = {ch for ch in every if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")} - {"\t", "\n"}
    assert made_visible == expected
    assert {chr(c) for lo, hi in FORMAT for c in range(lo, hi + 1)} == {
        ch for ch in every if unicodedata.category(ch) in ("Cf", "Zl", "Zp")
    }


@given(st.text())
@example("a\u2028b")  # a line separator (once found only by a random case)
@example("\u0600\u2060\U000e007f")
def test_visible_output_is_always_safe_and_idempotent(text):
    out = visible(text)
    assert not has_unsafe(out)
    assert visible(out) == out
    assert "\x1b" not in one_line(text)
