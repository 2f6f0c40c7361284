"""`e` opens the item's location in the user's editor, its line in that editor's syntax (issue 32:
``EDITOR="code --wait"`` got ``+13`` as a file name)."""

from __future__ import annotations

import pytest

from scars.tui.app.editor import editor_argv


@pytest.mark.parametrize(
    ("editor", "argv"),
    [
        ("vim", ["vim", "+13", "src/a.py"]),
        ("/usr/bin/nvim -u NONE", ["/usr/bin/nvim", "-u", "NONE", "+13", "src/a.py"]),
        ("emacsclient -t", ["emacsclient", "-t", "+13", "src/a.py"]),
        ("nano", ["nano", "+13", "src/a.py"]),
        ("micro", ["micro", "+13", "src/a.py"]),
        ("hx", ["hx", "+13", "src/a.py"]),
        ("code --wait", ["code", "--wait", "-g", "src/a.py:13"]),
        ("'/opt/VS Code/bin/code' -w", ["/opt/VS Code/bin/code", "-w", "-g", "src/a.py:13"]),
        ("cursor", ["cursor", "-g", "src/a.py:13"]),
        ("subl -w", ["subl", "-w", "src/a.py:13"]),
        ("zed", ["zed", "src/a.py:13"]),
        ("mate -w", ["mate", "-w", "-l", "13", "src/a.py"]),
        ("gedit", ["gedit", "src/a.py"]),  # unknown: no line rather than a line it reads as a file
        ("", ["vi", "+13", "src/a.py"]),
        (None, ["vi", "+13", "src/a.py"]),
        ('code "--wait', ['code "--wait', "src/a.py"]),  # an unclosed quote: one (unknown) program
        ("VIM.EXE", ["VIM.EXE", "+13", "src/a.py"]),
    ],
)
def test_each_editor_gets_the_line_in_its_own_syntax(editor, argv):
    assert editor_argv(editor, "src/a.py", 13) == argv


@pytest.mark.parametrize("line", [None, 0])
def test_no_line_is_the_file_alone(line):
    assert editor_argv("code --wait", "src/a.py", line) == ["code", "--wait", "src/a.py"]
    assert editor_argv("vim", "src/a.py", line) == ["vim", "src/a.py"]
    assert editor_argv("vim", "src/a.py", 1) == ["vim", "+1", "src/a.py"]
