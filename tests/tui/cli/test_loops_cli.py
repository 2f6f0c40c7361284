"""`scars loops` in a subprocess without a TTY: summaries, waiting first, JSON, errors."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from scars.tui.cli.main import main
from tests.factories import bkit_project, loop_spec_feature, mechanist_state


def scars(*args: str) -> subprocess.CompletedProcess:
    """Run the real console entry in a subprocess without a TTY."""
    return subprocess.run([sys.executable, "-m", "scars.tui", *args], capture_output=True, text=True, timeout=120)


class Result:
    def __init__(self, returncode: int, stdout: str, stderr: str):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture
def run(capsys):
    """Run `scars ARGS` in-process (fast); stdout is not a TTY under capsys."""

    def _run(*args: str) -> Result:
        code = main(list(args))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return _run


def make_tree(root: Path) -> None:
    d = root / ".loop-spec/features/needs-human"
    d.mkdir(parents=True)
    gap = {"type": "spec", "description": "boundary \x1b]52;c;cHdu\x07 wrong [bold]x[/bold]", "fix_first": "re-scope"}
    v = {
        "converged": False,
        "deterministic_gate_passed": True,
        "summary": "s",
        "gap": gap,
        "scores": [{"criterion": "c", "score": 5}],
    }
    (d / "feature.json").write_text(
        json.dumps(
            {
                "slug": "needs-human",
                "execStyle": "interactive",
                "currentPhase": "iterate",
                "iterate": {"maxIterations": 4, "used": 1, "lastVerdict": v, "history": [v], "lastRoute": "spec"},
            }
        )
    )
    d = root / ".loop-spec/features/fine"
    d.mkdir(parents=True)
    (d / "feature.json").write_text(json.dumps({"slug": "fine", "currentPhase": "execute"}))
    bk = root / ".bkit/state"
    bk.mkdir(parents=True)
    (bk / "pdca-status.json").write_text(
        json.dumps({"features": {"pdca-f": {"phase": "act", "matchRate": 93, "iterationCount": 2}}})
    )


def test_loops_report_lists_waiting_first(tmp_path):
    make_tree(tmp_path)
    out = scars("loops", str(tmp_path))
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "3 loop(s)" in text and "1 waiting for a person" in text
    assert text.index("needs-human") < text.index("fine") and "WAITING" in text
    assert "Re-open SPEC/DISCUSS" in text
    # Untrusted text is inert: the OSC escape is made visible, markup is printed as text.
    assert "\x1b" not in text and "\x07" not in text and "␛" in text and "[bold]x[/bold]" in text


def test_loops_json(tmp_path, run):
    make_tree(tmp_path)
    out = run("loops", "--json", str(tmp_path))
    assert out.returncode == 0
    payload = json.loads(out.stdout)
    assert payload["count"] == 3 and payload["waiting"] == 1
    first = payload["loops"][0]
    assert first["kind"] == "loop-spec" and first["name"] == "needs-human" and first["waiting_for_human"]
    assert first["budget"] == {"used": 1, "limit": 4, "left": 3, "over": 0, "unit": "judge passes"}
    assert first["trend"] == [5.0] and first["history"][0]["label"] == "iteration 1"
    only = json.loads(run("loops", "--json", "--waiting", str(tmp_path)).stdout)
    assert [s["name"] for s in only["loops"]] == ["needs-human"]


def test_loops_errors_and_strict(tmp_path, run):
    out = run("loops", str(tmp_path / "missing"))
    assert out.returncode == 2 and "does not exist" in out.stderr
    (tmp_path / "notes.txt").write_text("x")
    out = run("loops", str(tmp_path / "notes.txt"))
    assert out.returncode == 2 and "not a loop state file" in out.stderr
    out = run("loops", str(tmp_path))
    assert out.returncode == 0 and "No loop state found" in out.stdout
    bad = tmp_path / ".bkit/state"
    bad.mkdir(parents=True)
    (bad / "pdca-status.json").write_text("{")
    assert run("loops", str(tmp_path)).returncode == 0
    assert run("loops", "--strict", str(tmp_path)).returncode == 3


def test_loops_does_not_import_textual(tmp_path):
    make_tree(tmp_path)
    code = (
        "import sys\nfrom scars.tui.cli import main as cli\n"
        f"cli.main(['loops', '--json', {str(tmp_path)!r}])\n"
        "print('TEXTUAL', 'textual' in sys.modules, file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "TEXTUAL False" in out.stderr


def test_loops_labels_an_interrupted_record_a_warning_and_a_broken_file_a_failure(tmp_path, run):
    make_tree(tmp_path)
    mark = tmp_path / ".loop-spec/features/needs-human/.scars/interrupted.json"
    mark.parent.mkdir()
    mark.write_text(json.dumps({"v": 1, "user": "alice", "host": "h", "intent": "/elsewhere"}))
    (tmp_path / ".bkit/state/pdca-status.json").write_text("{")
    lines = run("loops", str(tmp_path)).stdout.splitlines()
    warned = [ln for ln in lines if "was interrupted" in ln]
    assert warned and warned[0].split()[0] == "warning" and "its writer's next" in warned[0]
    assert any(ln.split()[:1] == ["failure"] for ln in lines)  # the bkit file that does not parse


def test_strict_fails_on_a_parse_failure_not_on_a_warning(tmp_path, run):
    make_tree(tmp_path)
    mark = tmp_path / ".loop-spec/features/needs-human/.scars/interrupted.json"
    mark.parent.mkdir()
    mark.write_text(json.dumps({"v": 1, "user": "alice", "host": "h", "intent": "/elsewhere"}))
    assert run("loops", "--strict", str(tmp_path)).returncode == 0  # an interrupted record: a warning
    (tmp_path / ".bkit/state/pdca-status.json").write_text("{")
    assert run("loops", "--strict", str(tmp_path)).returncode == 3


@pytest.mark.parametrize("loop", ["bkit", "loop-spec", "review"])
def test_status_on_another_loops_directory_points_to_scars_loops(loop, tmp_path, capsys):
    """Before: exit 2 "neither a samsara feature directory …" and no word of `scars loops`."""
    if loop == "bkit":
        bkit_project(tmp_path)
        where = tmp_path
    elif loop == "loop-spec":
        loop_spec_feature(tmp_path)
        where = tmp_path
    else:
        where = mechanist_state(tmp_path)
    assert main(["status", str(where)]) == 2
    err = capsys.readouterr().err
    pointer = err.rsplit("see ", 1)[1].strip()
    words = shlex.split(pointer)
    assert words == ["scars", "loops", str(where)]
    assert main(words[1:] + ["--json"]) == 0
    assert json.loads(capsys.readouterr().out)["count"] >= 1
