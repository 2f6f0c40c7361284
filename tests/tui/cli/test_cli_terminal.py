"""The app's terminal check: what `scars triage` and bare `scars` say and do without a terminal
that can draw the app (no TTY, or TERM=dumb on a real pseudo-terminal)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.factories import scars_in_pty, scars_process


def test_triage_without_a_tty_names_the_commands_as_they_are_spelled(feature_dir):
    p = scars_process("triage", str(feature_dir), cwd=feature_dir)
    assert p.returncode == 2
    assert "scars triage: needs an interactive terminal" in p.stderr
    assert "scars decide ITEM --fix --feature FEATURE_DIR" in p.stderr
    assert "scars decide FEATURE ITEM" not in p.stderr


def test_bare_scars_without_a_tty_says_scars_not_scars_space(feature_dir):
    p = scars_process(cwd=feature_dir.parents[1])
    assert p.returncode == 2
    assert "\nscars: needs an interactive terminal" in p.stderr and "scars :" not in p.stderr


def test_term_dumb_on_a_real_terminal_does_not_start_the_app(feature_dir):
    code, text = scars_in_pty("triage", str(feature_dir), env={"TERM": "dumb"})
    assert code == 2
    assert "TERM=dumb cannot draw the full-screen app" in text and "\x1b[?1049h" not in text


def test_no_color_is_plain_even_at_a_terminal_and_force_color_styles_a_pipe(feature_dir):
    """Issue 16: NO_COLOR left bold (the README says plain); FORCE_COLOR was ignored in a pipe."""
    code, text = scars_in_pty("status", str(feature_dir), env={"NO_COLOR": "1", "FORCE_COLOR": ""})
    assert code == 0 and "Feature" in text and "\x1b[" not in text
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    p = subprocess.run(
        [sys.executable, "-m", "scars.tui", "status", str(feature_dir)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        env={**env, "FORCE_COLOR": "1"},
    )
    assert p.returncode == 0 and "\x1b[1m" in p.stdout
    plain = scars_process("status", str(feature_dir), env={"FORCE_COLOR": "", "NO_COLOR": ""})
    assert "\x1b[" not in plain.stdout


@pytest.fixture
def unwritable(monkeypatch):
    """A checkout where the lock cannot be created, as on a read-only mount or a directory owned
    by someone else (the tests run as root, who may write anywhere: the refusal is injected)."""
    from scars.core.storage import lock

    def refuse(path, *a, **k):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(lock, "ensure_private_dir", refuse)


def test_a_read_only_checkout_refuses_a_write_with_exit_1_not_a_usage_error(feature_dir, unwritable, capsys):
    from tests.factories import item_id, run_cli

    item = item_id(feature_dir, "CSV export skips empty rows")
    code, out, err = run_cli(["decide", item, "--fix", "--feature", str(feature_dir), "--json"], capsys)
    assert code == 1
    assert "cannot write in" in err and "Permission denied" in err and "not writable" in err
    assert json.loads(out)["error"] == "WriteFailed"


def test_the_app_opens_a_read_only_checkout_read_only_and_says_why(feature_dir, unwritable):
    from scars.tui.app.backend import Backend

    backend = Backend.open(feature_dir)
    try:
        assert backend.read_only and backend.write_refused and "Permission denied" in backend.read_only_reason
        assert not (feature_dir / ".scars").exists()
    finally:
        backend.close()


def test_the_state_directory_ignores_its_lock(feature_dir):
    from scars.core.samsara.session import FeatureSession

    with FeatureSession.open(feature_dir):
        pass
    ignored = (feature_dir / ".scars" / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert {"lock", "interrupted.json"} <= set(ignored) and "journal.jsonl" not in ignored
    (feature_dir / ".scars" / ".gitignore").write_text("mine\n", encoding="utf-8")
    with FeatureSession.open(feature_dir):
        pass
    assert (feature_dir / ".scars" / ".gitignore").read_text(encoding="utf-8") == "mine\n"  # never overwritten


def test_a_held_lock_says_since_when_and_what_to_do(feature_dir, capsys):
    from scars.core.samsara.session import FeatureSession
    from tests.factories import item_id, run_cli

    item = item_id(feature_dir, "CSV export skips empty rows")
    with FeatureSession.open(feature_dir, user="zoe"):
        code, _, err = run_cli(["decide", item, "--fix", "--feature", str(feature_dir)], capsys)
    assert code == 5
    assert "(user zoe) since" in err and " s ago)" in err and "quit it (q)" in err and "--read-only" in err


def _closed_pipe_run(argv: list[str], *, streams: str) -> subprocess.CompletedProcess:
    """``scars ARGV`` with ``streams`` ("both", "stdout", "stderr") into a pipe nobody reads; the
    other stream captured."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [sys.executable, "-m", "scars.tui", *argv],
            stdout=write_end if streams in ("both", "stdout") else subprocess.PIPE,
            stderr=write_end if streams in ("both", "stderr") else subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "NO_COLOR": "1"},
            timeout=120,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize("command", ["status", "advise", "budget-context", "status --json"])
def test_a_reader_that_goes_away_ends_the_command_quietly_with_0(feature_dir, command):
    """`scars advise … | head -1` exited 1 — the code of a failed write or a bug — without a word
    (rich's console ends a broken pipe with exit 1), while a plain print ends it with 0."""
    p = _closed_pipe_run([*command.split(), str(feature_dir)], streams="stdout")
    assert (p.returncode, p.stderr) == (0, "")


@pytest.mark.parametrize("command", ["budget-context", "advise"])
def test_without_a_terminal_no_line_ends_in_spaces_and_the_rest_is_rich_s(feature_dir, command):
    """`scars budget-context | cat -A` showed rich's table padding at the end of every row."""
    import io

    from rich.console import Console

    from scars.core.samsara.decisions import current_decisions, feature_state
    from scars.core.samsara.feature import read_feature
    from scars.tui.cli.commands.budget_context import envelope_json
    from scars.tui.cli.render.advice import print_budget

    p = scars_process(command, str(feature_dir), cwd=feature_dir)
    assert p.returncode == 0, p.stderr
    assert [line for line in p.stdout.splitlines() if line.endswith(" ")] == []
    if command == "budget-context":  # the same as rich prints it, the padding aside
        f = read_feature(feature_dir)
        rich_out = io.StringIO()
        console = Console(file=rich_out, width=80, color_system=None, markup=False, emoji=False, highlight=False)
        print_budget(
            envelope_json(f, current_decisions(feature_dir, f), feature_state(feature_dir).open_round), console
        )
        padded = rich_out.getvalue()
        assert any(line.endswith(" ") for line in padded.splitlines())  # what the fix removes
        assert p.stdout == "\n".join(line.rstrip(" ") for line in padded.split("\n"))


@pytest.mark.parametrize("streams", ["both", "stderr", "stdout"])
@pytest.mark.parametrize("argv", [["nosuchcmd"], ["status", "--nosuchflag"], ["nosuchcmd", "--json"]])
def test_a_usage_error_exits_2_whoever_reads_its_output(argv, streams):
    """`scars nosuchcmd 2>&1 | head` exited 1 (the usage line went out, the error line met the
    closed pipe and escaped as a BrokenPipeError): a usage error exits with the usage code, piped
    or not, and a reader that went away leaves no traceback."""
    p = _closed_pipe_run(argv, streams=streams)
    assert p.returncode == 2
    for captured in (p.stdout, p.stderr):
        assert "Traceback" not in (captured or "") and "Exception ignored" not in (captured or "")
    if streams == "stdout":
        assert p.stderr.startswith("usage: scars")


def test_every_rich_console_of_the_cli_comes_from_make_console():
    """NO_COLOR / FORCE_COLOR are read once, through scars.core.settings, by make_console: a
    Console built elsewhere (the gate prompts built their own) reads the environment through rich
    instead, and styles or not by rules of its own."""
    import re

    from tests.factories import ROOT

    built = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sorted((ROOT / "tui").rglob("*.py"))
        if path.relative_to(ROOT).as_posix() != "tui/cli/render/console.py"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\bConsole\(", line)
    ]
    assert built == []


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["nosuchcmd"], "scars: unknown command 'nosuchcmd' (`scars --help` lists the commands)"),
        (["status", "--nosuchflag"], "scars: unrecognized arguments: --nosuchflag"),
        (["status", "--json", "--strict", "x", "y"], "scars: unrecognized arguments: y"),
        (["round", "start", "--feature"], "scars: round start: argument --feature: expected one argument"),
    ],
)
def test_a_usage_error_names_scars_once(argv, said):
    p = scars_process(*argv)
    assert p.returncode == 2
    [line] = [ln for ln in p.stderr.splitlines() if not ln.startswith(("usage:", " "))]
    assert line.startswith(said)


def test_a_gitignore_that_is_a_symlink_is_never_followed(feature_dir):
    """A clone may commit .scars/.gitignore as a link (to a device, a binary): the lock neither
    reads through it nor rewrites it."""
    from scars.core.samsara.session import FeatureSession

    (feature_dir / ".scars").mkdir(exist_ok=True)
    target = feature_dir / "elsewhere.bin"
    target.write_bytes(b"\xff\xfe binary")
    (feature_dir / ".scars" / ".gitignore").symlink_to(target)
    with FeatureSession.open(feature_dir):
        pass
    assert (feature_dir / ".scars" / ".gitignore").is_symlink() and target.read_bytes() == b"\xff\xfe binary"


def test_scars_earlier_gitignore_is_brought_up_to_date_and_a_user_s_own_is_kept(feature_dir):
    from scars.core.samsara.session import FeatureSession
    from scars.core.storage import lock

    (feature_dir / ".scars").mkdir(exist_ok=True)
    (feature_dir / ".scars" / ".gitignore").write_text(lock._GITIGNORE_BEFORE, encoding="utf-8")
    with FeatureSession.open(feature_dir):
        pass
    assert (feature_dir / ".scars" / ".gitignore").read_text(encoding="utf-8") == lock.GITIGNORE
