"""The progress line of a slow read (issue 31): on a terminal's stderr only, cleared before the
output, never into a pipe; the text it shows is inert."""

from __future__ import annotations

import io

from scars.tui.cli import main as cli
from scars.tui.cli.progress import Reading, reports_label
from tests.factories import samsara_feature


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_pipe_gets_no_progress_and_no_timer():
    pipe = io.StringIO()
    with Reading("reading 3000 scar reports of x…", stream=pipe, delay=0) as r:
        assert r._timer is None
    assert pipe.getvalue() == ""


def test_a_terminal_gets_the_line_once_shown_and_nothing_after_stop():
    tty = FakeTTY()
    with Reading("reading 3000 scar reports of big…", stream=tty, delay=3600) as r:
        assert r._timer is not None and tty.getvalue() == ""  # not before the delay
        r.show()  # what the timer does when the delay has passed
        r.show()  # once only
        assert r._status is not None
        r.stop()
        shown = tty.getvalue()
        assert "reading 3000 scar reports of big…" in shown
        r.show()  # after stop: never again
        assert r._status is None and tty.getvalue() == shown
    assert not r._timer.is_alive()


def test_dumb_terminals_get_no_progress(monkeypatch):
    monkeypatch.setenv("TERM", "dumb")
    with Reading("x", stream=FakeTTY(), delay=3600) as r:
        assert r._timer is None


def test_the_label_is_inert():
    tty = FakeTTY()
    r = Reading("reading [bold red]x[/] \x1b[2J\x1b]0;pwned\x07 now", stream=tty, delay=3600)
    r.show()
    r.stop()
    out = tty.getvalue()
    assert "[bold red]x[/]" in out and "\x1b[2J" not in out and "\x1b]0;" not in out


def test_reports_label_counts_the_reports(tmp_path):
    f = samsara_feature(tmp_path)
    assert reports_label(f) == f"reading 2 scar reports of {f.name}…"
    assert reports_label(tmp_path / "nowhere") == "reading nowhere…"  # no count: nothing listed


def test_status_into_a_pipe_writes_nothing_on_stderr(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SCARS_NO_CACHE", "1")  # a cold read every time: the progress path runs
    f = samsara_feature(tmp_path)
    for argv in (["status", str(f)], ["status", str(f), "--json"], ["status", str(tmp_path)]):
        assert cli.main(argv) in (0, 3)
        out, err = capsys.readouterr()
        assert out and err == "", argv


def test_reports_label_never_lists_a_folder_outside_the_repository(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "task-1-scar.yaml").write_text("task_id: task-1\n", encoding="utf-8")
    repo = tmp_path / "repo"
    f = repo / "changes" / "2026-01-01_x"
    f.mkdir(parents=True)
    (f / "scar-reports").symlink_to(outside)
    assert reports_label(f, repo) == "reading 2026-01-01_x…"
