"""`scars status` into a pipe prints rich's bytes without rich's console (render/plain.py).

The reference is the console make_console gives without a terminal (unstyled, 80 columns): every
text here, and every feature's whole summary, must come out byte for byte as it prints them."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.text import Text

from scars.core.samsara.feature import read_feature
from scars.tui.cli.render import plain
from scars.tui.cli.render import status as render
from scars.tui.cli.render.console import make_console
from tests.factories import ROOT
from tests.status_golden import UPSTREAM

HOSTILE = [
    "",
    " ",
    "x" * 80,
    "x" * 81,
    "x" * 79 + " y",
    "x" * 80 + " y",
    "x" * 80 + "   ",
    "word " * 40,
    "word  " * 30 + "end",
    " leading spaces then a long " + "w" * 200 + " tail",
    "測試只驗證文件存在，無法證明執行時遵守" * 6,
    "a" + "測" * 45,
    "mixed 測試 text " * 12,
    "emoji 🎉🎉 " * 15,
    "e\u0301 combining " * 12,
    "zero\u200bwidth " * 14,
    "bell\x07 backspace\x08 vt\x0b ff\x0c cr\r end " * 4,
    "line one\nline two\n\nline four",
    "trailing newline\n",
    "\nleading newline",
    "nbsp\u00a0" * 30,
    "ideographic\u3000space " * 8,
]


def _rich(text: str, monkeypatch: pytest.MonkeyPatch) -> str:
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    make_console().print(Text(text, overflow="fold"), overflow="fold")
    return out.getvalue()


@pytest.mark.parametrize("text", HOSTILE)
def test_folded_is_what_the_plain_console_prints(text, monkeypatch):
    assert plain.folded(text) == _rich(text, monkeypatch)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(alphabet=st.sampled_from(" \n\u00a0\u3000\x07\r"), max_size=4),
            st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\t"), max_size=30),
            st.text(alphabet=st.sampled_from("ab測🎉\u0301\u200b"), min_size=60, max_size=120),
        ),
        max_size=12,
    ).map("".join)
)
def test_folded_agrees_with_rich_on_any_text(text):
    with pytest.MonkeyPatch.context() as mp:
        assert plain.folded(text) == _rich(text, mp)


def test_a_tab_is_left_to_rich():
    assert plain.folded("a\tb") is None


def _features() -> list[Path]:
    roots = [ROOT / "core" / "demo" / "repo", ROOT / "tests" / "fixtures" / "real_shaped", UPSTREAM]
    return [f for r in roots if (r / "changes").is_dir() for f in sorted((r / "changes").iterdir()) if f.is_dir()]


@pytest.mark.parametrize("fdir", _features(), ids=lambda p: p.name)
def test_a_feature_summary_is_the_same_bytes_without_a_console(fdir, monkeypatch):
    feature = read_feature(fdir)
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    render.print_feature(feature, decisions={})  # no terminal: the plain batch
    mine = out.getvalue()
    out.seek(0), out.truncate()
    render.print_feature(feature, console=make_console(), decisions={})  # rich's plain console
    assert mine == out.getvalue() and mine.startswith("Feature ")


def test_a_summary_with_a_tab_is_printed_by_rich(monkeypatch):
    batch = render._PlainBatch(io.StringIO())
    render._line(batch, "a\tb ", ("styled", "bold"))
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    batch.flush()
    assert out.getvalue() == _rich("a\tb styled", monkeypatch) and batch.stream.getvalue() == ""


def test_plain_only_without_a_terminal_and_without_force_color(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    from scars.core import settings as scars_settings

    def env(**kv):
        for k in ("NO_COLOR", "FORCE_COLOR"):
            monkeypatch.delenv(k, raising=False)
        for k, v in kv.items():
            monkeypatch.setenv(k, v)
        scars_settings.clear()

    env()
    assert plain.wanted(io.StringIO()) and not plain.wanted(Tty())
    env(FORCE_COLOR="1")
    assert not plain.wanted(io.StringIO())
    env(FORCE_COLOR="1", NO_COLOR="1")
    assert plain.wanted(io.StringIO())
