"""`scars status` wraps by terminal cells with a hanging indent (issue 29): a Chinese primary
evaluator keeps its column, and a wrapped item text's continuation lines hang under the text,
never at column 0 — through the plain batch (a pipe) and rich's console (a terminal) alike."""

from __future__ import annotations

import io
import sys

import pytest
from rich.cells import cell_len
from rich.console import Console

from scars.core.samsara.feature import read_feature
from scars.tui.cli.render import status as render
from tests.factories import write_feature

EVALUATOR = "在乾淨的檢出上執行完整的測試套件並比較輸出檔案與參考檔案的每一個位元組，任何差異都視為失敗並需要人工審查"
ZH_ITEM = "重試次數被寫死為三次，沒有任何退避機制，當上游服務限流時，所有請求會在幾秒內全部失敗而且沒有任何警告訊息"
EN_ITEM = (
    "The exporter writes every batch to a temporary file in the working directory and renames it "
    "afterwards, which fails silently across file systems when the target directory is on another mount"
)
PRE = f"# Pre-thinking\n\n## Evaluation Contract\n\n**Primary evaluator:** {EVALUATOR}\n**Pass signal:** all green\n"


def _feature(tmp_path):
    report = f'task_id: task-1\nknown_shortcuts:\n  - "{ZH_ITEM}"\n  - "{EN_ITEM}"\n'
    return read_feature(write_feature(tmp_path, {"task-1-scar.yaml": report}, files={"pre-thinking.md": PRE}))


def _plain(feature, monkeypatch) -> list[str]:
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    render.print_feature(feature, decisions={})  # not a terminal: the plain batch
    return out.getvalue().splitlines()


def _terminal(feature, width: int) -> list[str]:
    console = Console(width=width, file=io.StringIO(), force_terminal=True, color_system=None, legacy_windows=False)
    render.print_feature(feature, console=console, decisions={})
    return console.file.getvalue().splitlines()


def _block(lines: list[str], first: str) -> list[str]:
    """The line starting with ``first`` and the lines that continue it (deeper than its start)."""
    n = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith(first))
    out = [lines[n]]
    for ln in lines[n + 1 :]:
        if not ln.startswith("       "):
            break
        out.append(ln)
    return out


@pytest.mark.parametrize("how", ["plain", "terminal 80", "terminal 120"])
def test_the_chinese_evaluator_keeps_its_hanging_indent(tmp_path, monkeypatch, how):
    f = _feature(tmp_path)
    lines = _plain(f, monkeypatch) if how == "plain" else _terminal(f, int(how.split()[1]))
    block = _block(lines, "primary evaluator:")
    assert len(block) >= 2, block  # it wraps …
    column = block[0].index(EVALUATOR[0])
    assert all(ln[:column].strip() == "" and ln[column] != " " for ln in block[1:]), block  # … under itself
    assert "".join(ln.strip() for ln in block).endswith(EVALUATOR)
    assert all(cell_len(ln) <= 80 for ln in block)


@pytest.mark.parametrize("text", [ZH_ITEM, EN_ITEM])
@pytest.mark.parametrize("how", ["plain", "terminal 80"])
def test_a_wrapped_item_text_hangs_under_its_start(tmp_path, monkeypatch, how, text):
    f = _feature(tmp_path)
    lines = _plain(f, monkeypatch) if how == "plain" else _terminal(f, 80)
    (it,) = [i for i in f.items if i.text == text]
    block = _block(lines, f"KS {it.id}")
    assert len(block) >= 2, block
    column = block[0].index(text[0])
    assert all(ln[:column].strip() == "" and ln[column] != " " for ln in block[1:]), block
    assert "".join(block).replace(" ", "").endswith(text.replace(" ", ""))
    assert all(cell_len(ln) <= 80 for ln in block)


def test_a_line_of_one_cell_characters_wraps_as_before():
    # The boundary: textwrap's lines for one-cell text (no output that fitted changes).
    import textwrap

    text = "word " * 30 + "a-hyphenated-compound-word-that-textwrap-breaks-at-its-hyphens " * 2
    assert render._wrap(text.strip(), 58) == textwrap.wrap(text.strip(), width=58)
    assert all(cell_len(ln) <= 58 for ln in render._wrap(EVALUATOR, 58))
