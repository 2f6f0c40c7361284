"""`scars status` into a pipe prints rich's bytes without rich's console (render/plain.py).

The reference is the console make_console gives without a terminal (unstyled, 80 columns): every
text here, and every feature's whole summary, must come out byte for byte as it prints them."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rich.text import Text

from scars.core.model import EntryVerdict, FeatureSummary, Problem
from scars.core.samsara.feature import read_feature, read_summary
from scars.tui.cli.render import plain
from scars.tui.cli.render import status as render
from scars.tui.cli.render.console import make_console
from tests.factories import ROOT
from tests.hypothesis_profiles import examples
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


@settings(max_examples=examples(300), deadline=None)
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


# `scars status REPO`: its one-line-per-feature table (render.print_repo) into a pipe.

NAMES = [
    "",
    " ",
    "[bold]markup[/bold] [link=x]l[/link]",
    "esc\x1b[31mred\x1b[0m",
    "bell\x07 bs\x08 vt\x0b ff\x0c cr\r",
    "tab\there",
    "new\nline",
    "para\u2028sep",
    "nel\x85x",
    "測試只驗證文件存在",
    "emoji 🎉🎉",
    "e\u0301 combining",
    "zero\u200bwidth",
    "trailing   ",
    "   leading",
    "nbsp\u00a0\u00a0",
    "2026-04-17_samsara-phase4-auto-iteration",
    "x" * 44,
    "x" * 45,
    "x" * 46,
    "測" * 22,
    "測" * 23,
    "x" * 43 + "測",
    "word " * 20,
    "x" * 200,
]


def _summary(name: str, i: int = 0, lost: int = 0, rounds: int = 0) -> FeatureSummary:
    entry = [None, EntryVerdict("gate", "r"), EntryVerdict("skip", "r"), EntryVerdict("unknown", "r")][i % 4]
    failures = tuple(Problem("f", None, "m", "failure") for _ in range(i % 3))
    return FeatureSummary(name, "p", lost, entry, failures, rounds)


def _repo_both(features: list[FeatureSummary], monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    render.print_repo(Path("repo"), features)  # no terminal: the plain table
    mine = out.getvalue()
    out.seek(0), out.truncate()
    render.print_repo(Path("repo"), features, console=make_console())  # rich's plain console
    return mine, out.getvalue()


@pytest.mark.parametrize("name", NAMES, ids=repr)
def test_a_repository_table_is_the_same_bytes_without_a_console(name, monkeypatch):
    features = [_summary(name), _summary("short", 1, 7, 3), _summary(name + name, 2, 12, 40)]
    mine, theirs = _repo_both(features, monkeypatch)
    assert mine == theirs and mine.startswith("feature")


def test_figures_wider_than_their_headers_are_the_same_bytes(monkeypatch):
    features = [_summary("a", 2, 10**12, 10**7), _summary("b", 1, 3, 10**6)]
    mine, theirs = _repo_both(features, monkeypatch)
    assert mine == theirs and " 1000000000000 " in mine


def test_wide_like_repositories_are_the_same_bytes(monkeypatch):
    # bench/generate.py's `wide` names (bench-wide-0001 …) with its figures' spread
    for n in (1, 9, 120):
        features = [_summary(f"bench-wide-{i + 1:04d}", i, (i * 37) % 900, i % 5) for i in range(n)]
        mine, theirs = _repo_both(features, monkeypatch)
        assert mine == theirs and mine.count("\n") == n + 1


@pytest.mark.parametrize(
    "root", [ROOT / "core" / "demo" / "repo", ROOT / "tests" / "fixtures" / "real_shaped", UPSTREAM]
)
def test_a_real_repository_table_is_the_same_bytes(root, monkeypatch):
    if not (root / "changes").is_dir():
        pytest.skip(f"{root} is not here")
    features = [read_summary(f) for f in sorted((root / "changes").iterdir()) if f.is_dir()]
    mine, theirs = _repo_both(features, monkeypatch)
    assert mine == theirs and len(mine.splitlines()) == len(features) + 1


def test_an_empty_repository_is_the_same_bytes(monkeypatch):
    mine, theirs = _repo_both([], monkeypatch)
    assert mine == theirs and mine.startswith("No feature directories")


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(
        st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=50)
        | st.text(alphabet=st.sampled_from("ab 測🎉\u0301\u200b\u3000"), max_size=50),
        min_size=1,
        max_size=6,
    ),
    st.integers(0, 10**9),
)
# found by a random search: a name longer in characters than in cells (two combining marks) whose
# trailing ideographic space rich's Text.rstrip_end cuts at the column's width
@example(["\u0301\u0301\u200b\u3000"], 0)
def test_a_repository_table_agrees_with_rich_on_any_names(names, lost):
    features = [_summary(n, i, lost * i, i) for i, n in enumerate(names)]
    with pytest.MonkeyPatch.context() as mp:
        mine, theirs = _repo_both(features, mp)
    assert mine == theirs


def test_ordinary_names_are_printed_without_rich(monkeypatch):
    import rich.console
    import rich.table

    def refuse(*a, **kw):
        raise AssertionError("rich used")

    monkeypatch.setattr(rich.console.Console, "__init__", refuse)
    monkeypatch.setattr(rich.table.Table, "__init__", refuse)
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    render.print_repo(Path("repo"), [_summary("x" * 44, 1, 5, 2), _summary("測" * 22)])
    lines = out.getvalue().splitlines()
    assert lines[0] == "feature" + " " * 38 + "signal_lost entry   failures rounds"
    assert lines[1] == "x" * 44 + "           5 gate           1      2" and len(lines[1]) == 80


def test_a_name_that_folds_is_left_to_rich():
    assert plain.table(render.REPO_COLUMNS, [("x" * 45, "0", "gate", "0", "0")]) is None
    assert plain.table(render.REPO_COLUMNS, [("x" * 44, "0", "gate", "0", "0")]) is not None
    assert plain.table(render.REPO_COLUMNS, [("測" * 22 + "x", "0", "gate", "0", "0")]) is None
    assert plain.table(render.REPO_COLUMNS, [("a\tb", "0", "gate", "0", "0")]) is None
    assert plain.table(render.REPO_COLUMNS, [("a\u2028b", "0", "gate", "0", "0")]) is None


@pytest.mark.parametrize(
    "row",
    [
        ("bell\x07 cr\r", "1\x0c", "gate\x08", "2", "3"),  # the control codes rich strips
        ("a", "5  ", "gate", "7\u3000", "8 "),  # right-justified: trailing whitespace dropped
        # more characters than cells: the trailing whitespace beyond the column's width in
        # characters is cut (Text.rstrip_end), the rest kept
        ("\u0301" + "x" * 6 + "\u3000", "0", "gate", "0", "0"),  # 8 characters in 8 columns: kept
        ("\u0301\u0301" + "x" * 6 + "\u3000", "0", "gate", "0", "0"),  # 9 in 8: the space cut
        ("\u0301\u0301" + "x" * 10 + "  \u3000", "0", "gate", "0", "0"),  # 2 of the 3 cut
    ],
    ids=repr,
)
def test_a_table_is_what_a_rich_table_prints(row, monkeypatch):
    from rich.table import Table

    table = Table(box=None, show_edge=False, pad_edge=False, expand=False, padding=(0, 1, 0, 0))
    for header, justify, min_width in render.REPO_COLUMNS:
        table.add_column(header, justify=justify, min_width=min_width or None)
    table.add_row(*(Text(c) for c in row))
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    make_console().print(table)
    assert plain.table(render.REPO_COLUMNS, [row]) == out.getvalue()
