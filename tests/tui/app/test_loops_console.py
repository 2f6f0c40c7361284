"""The one console (issue 15): the Loops inbox opens every loop's gate in the app, rendered from
the same core Evidence as `scars gate`, recorded through the same record path, and the inbox
clears after an answer; bare `scars` outside `changes/` finds the loops that wait."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Input, RadioButton

from scars.core import gates
from scars.core.gatekit.evidence import PROMPT_LABEL
from scars.core.gates.inbox import gate_call
from scars.core.loops import discover_loops
from scars.tui.app.app import ScarsApp
from tests.factories import bkit_project, clean_env, loop_spec_feature, mechanist_state, scars_process, wait_until
from tests.tui.app.test_app_pilot import SIZE, aio, on_screen, screen_text


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    loop_spec_feature(root)  # a SPEC-level gap in step style: waiting
    bkit_project(root, rate=82, count=5)  # the limit spent below 90 %: waiting
    sprint = root / ".bkit/state/sprints/s1.json"
    data = json.loads(sprint.read_text())
    pause = {"trigger": "ITERATION_EXHAUSTED", "message": "Iteration 5/5 exhausted, matchRate 84% < min acceptable"}
    pause["userActions"] = ["forward fix", "carry to next sprint", "abort"]
    data.update(status="paused", autoPause={"lastTrigger": "ITERATION_EXHAUSTED", "pauseHistory": [pause]})
    sprint.write_text(json.dumps(data))
    return root


async def _open(app: ScarsApp, pilot, kind: str) -> None:
    await on_screen(app, pilot, "LoopsScreen")
    screen = app.screen
    row = next(i for i, s in enumerate(screen.states) if s.kind == kind)
    screen.query_one("#loops-table").move_cursor(row=row)
    await pilot.press("enter")
    await on_screen(app, pilot, "LoopGate")


async def _answer(app: ScarsApp, pilot, value: str, reason: str) -> None:
    gate = app.screen
    gate.query_one(f"#ans-{value}", RadioButton).value = True
    gate.query_one("#gate-reason", Input).value = reason
    gate.query_one("#gate-reason", Input).focus()
    await pilot.press("enter")
    await on_screen(app, pilot, "LoopsScreen")


def test_every_waiting_loop_names_its_gate(tmp_path):
    root = _project(tmp_path)
    calls = {s.kind: gate_call(s, root) for s in discover_loops(root) if s.waiting_for_human}
    assert {k: c.gate for k, c in calls.items()} == {
        "loop-spec": "spec",
        "bkit": "pdca-max-iterations",
        "bkit-sprint": "sprint-pause",  # before: `scars gate pdca-continue <sprint file>` exited 2
    }
    for call in calls.values():  # each command's evidence is gathered without an error
        assert gates.gather(call.gate, call.path, **call.options).gate.id == call.gate


@aio
async def test_enter_opens_the_loop_spec_gate_and_the_answer_clears_the_inbox(tmp_path, monkeypatch):
    clean_env(monkeypatch)
    root = _project(tmp_path)
    fdir = root / ".loop-spec/features/sync"
    evidence = gates.gather("spec", fdir)
    app = ScarsApp(None, inbox=(discover_loops(root), root), user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await _open(app, pilot, "loop-spec")
        text = screen_text(app)
        # the same Evidence as `scars gate spec`: its prompt (introduced as `scars gate` does) and its figures
        assert "ITERATE judges the goal still unmet because of a SPEC-level gap" in text
        assert PROMPT_LABEL in text and text.index(PROMPT_LABEL) < text.index("ITERATE judges")
        assert dict(evidence.figures)["fix first"] in text
        await _answer(app, pilot, "ship", "offline mode is v2 scope; the backlog keeps it")
        await wait_until(
            pilot,
            lambda: not any(s.kind == "loop-spec" and s.waiting_for_human for s in app.screen.states),
            "the inbox read again",
        )
        assert "2 of 3 waiting" in screen_text(app)
    data = json.loads((fdir / "feature.json").read_text())
    assert data["currentPhase"] == "deliver" and data["warnings"][-1].startswith("iterate-budget-spent:")
    assert "Ship as-is: offline mode is v2 scope" in (fdir / "auto-decisions.md").read_text()


@aio
async def test_a_refused_answer_is_shown_and_a_missing_reason_is_refused_in_the_screen(tmp_path, monkeypatch):
    clean_env(monkeypatch)
    root = _project(tmp_path)
    app = ScarsApp(None, inbox=(discover_loops(root), root), user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await _open(app, pilot, "bkit-sprint")
        assert app.screen.query_one("#ans-fix-resume", RadioButton).disabled  # not ITERATION_EXHAUSTED's
        assert "not an action of ITERATION_EXHAUSTED" in screen_text(app)
        gate = app.screen
        gate.query_one("#ans-carry-over", RadioButton).value = True
        gate.query_one("#gate-reason", Input).focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: "needs a reason" in screen_text(app), "the refusal shown")
        assert type(app.screen).__name__ == "LoopGate"
        await _answer(app, pilot, "carry-over", "84% is what this sprint reaches; login moves on")
    sprint = json.loads((root / ".bkit/state/sprints/s1.json").read_text())
    assert (sprint["status"], sprint["phase"]) == ("archived", "archived")


@aio
async def test_the_review_gate_in_the_app(tmp_path, monkeypatch):
    clean_env(monkeypatch)
    root = tmp_path / "paper"
    stage = mechanist_state(root, score=4, verdict="not ready", consumed=6)
    app = ScarsApp(None, inbox=(discover_loops(root), root), user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await _open(app, pilot, "mechanist")
        assert "STOP rule" in screen_text(app)
        await pilot.press("b")  # the answer's letter, as `scars gate` takes it: (B) stop
        assert app.screen.query_one("#ans-stop", RadioButton).value
        await _answer(app, pilot, "stop", "the reviewer wants a new dataset we cannot get")
    data = json.loads((stage / "REVIEW_STATE.json").read_text())
    assert data["status"] == "completed" and data["termination_reason"] == "iterations_exhausted"


def test_bare_scars_outside_changes_names_the_waiting_loops(tmp_path):
    """Before: "No changes/ directory was found" while loops waited."""
    root = _project(tmp_path)
    proc = scars_process(cwd=root)
    assert proc.returncode == 2
    assert "Waiting for a person: " in proc.stderr and "loop-spec sync" in proc.stderr
    assert "scars gate sprint-pause" in proc.stderr and "scars gate spec" in proc.stderr
    assert "No changes/ directory" not in proc.stdout


@aio
async def test_the_new_gates_open_in_the_app(tmp_path, monkeypatch):
    """The max-iterations question, loop-spec's escalate route and a DAG escalation each open as
    their gate screen from the inbox (the same gate `scars gate` answers)."""
    clean_env(monkeypatch)
    root = tmp_path / "proj"
    root.mkdir()
    bkit_project(root, rate=82, count=5)
    fdir = loop_spec_feature(
        root, gap={"type": "execute", "description": "credential locked", "fix_first": "unlock", "needs_operator": True}
    )
    data = json.loads((fdir / "feature.json").read_text())
    data["iterate"]["lastRoute"] = "escalate"
    (fdir / "feature.json").write_text(json.dumps(data))
    (root / "dag").mkdir()
    (root / "dag" / "d.yaml").write_text(
        "iterationDecision:\n  taskId: t\n  decision: {needsIteration: true}\n"
        "  triggers:\n    - {type: validation_failure, severity: 0.7, code: TYPE_MISMATCH, fixable: true}\n"
    )
    titles = {
        "bkit": "Maximum iterations reached",
        "loop-spec": "ITERATE escalated",
        "dag-iteration": "A DAG iteration escalated",
    }
    app = ScarsApp(None, inbox=(discover_loops(root), root), user="alice")
    async with app.run_test(size=SIZE) as pilot:
        for kind, title in titles.items():
            await _open(app, pilot, kind)
            assert title in screen_text(app)
            await pilot.press("escape")
            await on_screen(app, pilot, "LoopsScreen")


def _wide_inbox(tmp_path: Path) -> tuple[list, Path]:
    root = _project(tmp_path)
    review = root / "a-research-project-with-a-long-name"
    mechanist_state(review, score=5, verdict="not ready")
    return discover_loops(root), root


async def _fits(app: ScarsApp, pilot, width: int) -> None:
    """Every column of the inbox within the table (no sideways scroll), the trend column drawn."""
    table = app.screen.query_one("#loops-table")
    await wait_until(pilot, lambda: table.row_count == len(app.screen.states), "the inbox's rows")
    await wait_until(pilot, lambda: table.size.width == width, f"the table at {width} columns")
    assert table.max_scroll_x == 0, (width, table.virtual_size.width, table.size.width)
    assert table.ordered_columns[-1].label.plain == "trend"


@aio
async def test_the_inbox_fits_its_width_and_refits_on_resize(tmp_path, monkeypatch):
    """Before: at 120 columns the table was wider than the screen: budget cut, the trend column
    and its sparklines pushed off, a sideways scrollbar's thumb left as a stray block."""
    clean_env(monkeypatch)
    states, root = _wide_inbox(tmp_path)
    from scars.tui.app.screens.loops import LoopsScreen

    fills: list[int] = []
    fill = LoopsScreen._fill
    monkeypatch.setattr(LoopsScreen, "_fill", lambda self: fills.append(self.size.width) or fill(self))
    app = ScarsApp(None, inbox=(states, root), user="alice")
    async with app.run_test(size=(120, 40)) as pilot:
        await on_screen(app, pilot, "LoopsScreen")
        await _fits(app, pilot, 120)
        assert fills == [120]  # filled once at its first width (the resize at mount: the same width)
        await pilot.resize_terminal(80, 24)
        await _fits(app, pilot, 80)
        await pilot.resize_terminal(160, 40)
        await _fits(app, pilot, 160)
        # at 160 nothing gives up room: every name is whole
        names = {str(table_row[2]) for table_row in map(app.screen.query_one("#loops-table").get_row_at, range(3))}
        assert all(not n.endswith("…") for n in names)
