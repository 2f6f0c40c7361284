"""Read-only is read-only (issue 27 §2): `scars triage --read-only` and `scars serve` without
`--write` write no byte, whatever is pressed. Every screen of ``scars.tui.app.screens`` and every
one of its bindings is driven in a read-only app over a repository holding a samsara feature, a
loop-spec feature, ARIS, bkit and a pending `--wait` request; the repository and the user's state
directory are hashed before and after. Plus the three reproducers: a loop-spec ship from the
inbox, a pending request answered, and the app `scars serve` starts without --write."""

from __future__ import annotations

import hashlib
import importlib
import inspect
import os
import pkgutil
import shlex
from pathlib import Path

import pytest
from textual.screen import Screen
from textual.widgets import Button, DataTable, Input, RadioButton, Static

import scars.tui.app.screens as screens_pkg
from scars.core import gates, settings
from scars.core.errors import READ_ONLY, ReadOnly
from scars.core.gates import requests as rq
from scars.tui.app.app import ScarsApp
from scars.tui.app.screens.main import MainScreen
from tests.factories import (
    app_repo,
    bkit_project,
    clean_env,
    loop_spec_feature,
    mechanist_state,
    settled,
    wait_until,
)
from tests.tui.app.test_app_pilot import SIZE, aio, on_screen, record_notes, screen_text, start

REASON = "offline sync is v2 scope; the backlog keeps it"


def tree(*roots: Path) -> dict[str, tuple]:
    """Every entry under ``roots``: a folder, a link (its target) or a file (its sha256)."""
    out: dict[str, tuple] = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in dirnames + filenames:
                p = Path(dirpath) / name
                if p.is_symlink():
                    out[str(p)] = ("link", os.readlink(p))
                elif p.is_dir():
                    out[str(p)] = ("dir",)
                else:
                    out[str(p)] = ("file", hashlib.sha256(p.read_bytes()).hexdigest())
    return out


def changed(before: dict, after: dict) -> list[str]:
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def _repo(tmp_path: Path, monkeypatch, *, request: bool = True) -> tuple[Path, Path, Path, Path]:
    """(root, samsara feature, loop-spec feature, state dir): every loop kind, one pending request
    on the loop-spec gate (``request``; without it Enter on the loop-spec row opens its own gate)."""
    clean_env(monkeypatch, user="bob")
    state = tmp_path / "state"
    state.mkdir()
    monkeypatch.setenv("SCARS_STATE_DIR", str(state))
    monkeypatch.setenv("SCARS_CACHE_DIR", str(tmp_path / "cache"))  # the user's cache may be written
    monkeypatch.setenv("VISUAL", "true")  # `e` runs an editor that writes nothing
    settings.load()
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    feature = app_repo(root)
    spec = loop_spec_feature(root)
    mechanist_state(root)
    bkit_project(root, rate=82, count=5)
    if request:
        rq.post_request(gates.gather("spec", spec), spec, user="agent", root=root)
    return root, feature, spec, state


def _gate_refused(app: ScarsApp) -> bool:
    """The read-only refusal shown in a LoopGate, or the gate gone (an answer taken)."""
    if type(app.screen).__name__ != "LoopGate":
        return True
    return READ_ONLY in str(app.screen.query_one("#gate-error", Static).render())


async def _answer_in_gate(app: ScarsApp, pilot, value: str, reason: str) -> None:
    """Answer the LoopGate on top; read-only, where its answer and reason are disabled (a person
    cannot pick or type them), the values are set past them and its Record path is run anyway."""
    gate = app.screen
    gate.query_one(f"#ans-{value}", RadioButton).value = True
    field = gate.query_one("#gate-reason", Input)
    field.value = reason
    if field.disabled:
        gate.record()
    else:
        field.focus()
        await pilot.press("enter")
    await wait_until(pilot, lambda: _gate_refused(app), "the answer refused or taken")


async def _inbox_row(app: ScarsApp, pilot, want) -> None:
    """On the Loops inbox, Enter on the first row ``want(row)`` holds: its LoopGate on top."""
    await on_screen(app, pilot, "LoopsScreen")
    screen = app.screen
    await wait_until(
        pilot, lambda: any(want(screen._row(i)) for i in range(len(screen.requests) + len(screen.states))), "the row"
    )
    row = next(i for i in range(len(screen.requests) + len(screen.states)) if want(screen._row(i)))
    screen.query_one("#loops-table", DataTable).move_cursor(row=row)
    await pilot.press("enter")
    await on_screen(app, pilot, "LoopGate")


def _is_spec_loop(row) -> bool:
    return getattr(row, "kind", None) == "loop-spec"


def _is_request(row) -> bool:
    return isinstance(row, rq.RequestView)


# -- the three reproducers ------------------------------------------------------------------
@aio
async def test_a_loop_spec_ship_from_the_read_only_inbox_writes_nothing(tmp_path, monkeypatch):
    root, feature, spec, state = _repo(tmp_path, monkeypatch, request=False)
    before = tree(root, state)
    app = ScarsApp(feature, read_only=True, user="bob")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press("L")
        await _inbox_row(app, pilot, _is_spec_loop)
        shown = screen_text(app)
        await _answer_in_gate(app, pilot, "ship", REASON)
        refused = str(app.screen.query_one("#gate-error", Static).render())
    assert changed(before, tree(root, state)) == []
    assert "read-only (--read-only): look only, this gate's answer is not recorded here" in shown
    assert "read-only (--read-only): this gate's answer is not recorded — nothing was written" in refused


@aio
async def test_a_pending_request_is_not_answered_in_a_read_only_app(tmp_path, monkeypatch):
    root, feature, spec, state = _repo(tmp_path, monkeypatch)
    before = tree(root, state)
    app = ScarsApp(feature, read_only=True, user="bob")
    notes = record_notes(app)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press("L")
        await _inbox_row(app, pilot, _is_request)
        await _answer_in_gate(app, pilot, "ship", REASON)
        # Below the screens: the inbox's own record and answer calls are refused by core.
        await pilot.press("escape")
        await on_screen(app, pilot, "LoopsScreen")
        inbox = app.screen
        view = inbox.requests[0]
        inbox._answer_request(view, {"answer": "ship", "reason": REASON, "value": None})
        state_row = next(s for s in inbox.states if _is_spec_loop(s))
        from scars.core.gates.inbox import gate_call

        inbox._record(gate_call(state_row, root), {"answer": "ship", "reason": REASON, "value": None})
        await wait_until(pilot, lambda: sum(READ_ONLY in m for _, m in notes) >= 2, "both refusals said")
    assert changed(before, tree(root, state)) == []
    assert [r.status for r in rq.list_requests(root)[0]] == ["pending"]


def test_core_refuses_every_write_of_a_read_only_caller(tmp_path, monkeypatch):
    root, feature, spec, state = _repo(tmp_path, monkeypatch)
    rid = rq.list_requests(root)[0][0].id
    before = tree(root, state)
    evidence = gates.gather("spec", spec, read_only=True)
    calls = [
        lambda: gates.record(evidence, "ship", REASON, user="bob", read_only=READ_ONLY),
        lambda: gates.apply_answer(evidence, "ship", REASON, user="bob", read_only=READ_ONLY),
        lambda: rq.answer_request(root, rid, "ship", REASON, user="bob", source="app", read_only=READ_ONLY),
        lambda: rq.apply_request(root, rid, read_only=READ_ONLY),
        lambda: rq.withdraw_request(root, rid, user="bob", read_only=READ_ONLY),
    ]
    for call in calls:
        with pytest.raises(ReadOnly, match=r"read-only \(--read-only\): .* nothing was written"):
            call()
    assert changed(before, tree(root, state)) == []


@aio
async def test_scars_serve_without_write_runs_the_read_only_app(tmp_path, monkeypatch):
    from scars.tui.cli import main as cli
    from scars.tui.cli.commands import serve, triage

    root, feature, spec, state = _repo(tmp_path, monkeypatch, request=False)
    words = shlex.split(serve.app_command(feature, write=False, user=None))
    assert words[1:3] == ["-m", "scars.tui"]
    started: list[ScarsApp] = []
    monkeypatch.setattr(triage, "interactive", lambda: True)
    monkeypatch.setattr(ScarsApp, "run", lambda self, *a, **k: started.append(self) or 0)
    assert cli.main(words[3:]) == 0  # the served process's own command line, parsed and launched
    (app,) = started
    before = tree(root, state)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press("L")
        await _inbox_row(app, pilot, _is_spec_loop)
        await _answer_in_gate(app, pilot, "ship", REASON)
    assert changed(before, tree(root, state)) == []


# -- what the Loops screen and its gates offer ------------------------------------------------
# Where a write is offered, read-only says why in its place (THE words: errors.read_only_note).
INVITES = ("enter: answer", "answer it here", "triage this feature", "recorded with", "scars answer", "apply")


async def _inbox_details(app: ScarsApp, pilot) -> dict[str, str]:
    """The Loops screen's detail line of every row, by the row's kind (a request: "request")."""
    screen = app.screen
    table = screen.query_one("#loops-table", DataTable)
    out = {}
    for i in range(len(screen.requests) + len(screen.states)):
        row = screen._row(i)
        table.move_cursor(row=i)
        await wait_until(pilot, lambda i=i: table.cursor_row == i and settled(app), "the row shown")
        kind = "request" if _is_request(row) else row.kind
        out[kind] = str(screen.query_one("#loops-detail", Static).render())
    return out


def _said(screen: Screen) -> str:
    """Every text ``screen`` shows, one widget a line (unwrapped): labels, texts, button and
    answer labels, field placeholders."""
    out = [str(w.render()) for w in screen.query(Static)]
    out += [str(w.label) for w in screen.query(Button)] + [str(w.label) for w in screen.query(RadioButton)]
    out += [w.placeholder for w in screen.query(Input)]
    return "\n".join(out)


@aio
@pytest.mark.parametrize("read_only", [True, False], ids=["read-only", "write"])
async def test_the_loops_screen_and_its_gates_invite_an_answer_only_where_one_is_recorded(
    tmp_path, monkeypatch, read_only
):
    root, feature, spec, state = _repo(tmp_path, monkeypatch)
    app = ScarsApp(feature, read_only=read_only, user="bob")
    async with app.run_test(size=SIZE) as pilot:
        await _to_loops(app, pilot)
        details = await _inbox_details(app, pilot)
        gates_shown = {}
        for reach in (_is_spec_loop, _is_request):
            await _inbox_row(app, pilot, reach)
            gate = app.screen
            gates_shown[reach.__name__] = (
                _said(gate),
                gate.query_one("#gate-answers").disabled,
                gate.query_one("#gate-reason", Input).disabled,
                gate.query_one("#gate-record").disabled,
                app.focused is not None and app.focused.id,
            )
            await pilot.press("escape")
            await on_screen(app, pilot, "LoopsScreen")
    assert {"request", "samsara", "loop-spec"} <= set(details)
    look = "read-only (--read-only): look only"
    if read_only:
        for kind, text in details.items():
            assert not [w for w in INVITES if w in text], (kind, text)
        assert f"enter: see its spec gate — {look}, its answer is not recorded here" in details["loop-spec"]
        assert f"enter: see its gate — {look}, its answer is not recorded here" in details["request"]
        assert f"enter: open this feature — {look}, no decision is recorded here" in details["samsara"]
        for text, *disabled, focused in gates_shown.values():
            assert not [w for w in INVITES if w in text], text
            assert f"{look}, this gate's answer is not recorded here" in text
            assert disabled == [True, True, True] and focused == "gate-cancel"  # Close: what can be done
    else:
        assert "enter: answer its spec gate here (or: scars gate spec" in details["loop-spec"]
        assert "enter: answer it here" in details["request"] and "answer: scars answer" in details["request"]
        assert "enter: triage this feature" in details["samsara"]
        for text, *disabled, focused in gates_shown.values():
            assert "recorded with your answer" in text and "Reason (recorded with the answer)" in text
            assert "read-only" not in text
            assert disabled == [False, False, False] and focused == "gate-answers"


# -- every screen, every binding --------------------------------------------------------------
def screen_classes() -> dict[str, type]:
    """Every Screen defined in ``scars.tui.app.screens``: a new one is driven (or fails) here."""
    out = {}
    for info in pkgutil.iter_modules(screens_pkg.__path__):
        module = importlib.import_module(f"{screens_pkg.__name__}.{info.name}")
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, Screen) and cls.__module__ == module.__name__:
                out[name] = cls
    return out


async def _to_main(app, pilot) -> None:
    await start(app, pilot)


async def _to_loops(app, pilot) -> None:
    await start(app, pilot)  # a key pressed before the load is shown is the loading screen's
    await pilot.press("L")
    await on_screen(app, pilot, "LoopsScreen")


async def _to_spec_gate(app, pilot) -> None:
    await _to_loops(app, pilot)
    await _inbox_row(app, pilot, _is_spec_loop)


async def _to_request_gate(app, pilot) -> None:
    await _to_loops(app, pilot)
    await _inbox_row(app, pilot, _is_request)


async def _to_trends(app, pilot) -> None:
    await start(app, pilot)
    await pilot.press("t")
    await on_screen(app, pilot, "TrendsScreen")


async def _to_help(app, pilot) -> None:
    await start(app, pilot)
    await pilot.press("question_mark")
    await on_screen(app, pilot, "HelpScreen")


async def _settled_if_running(app, pilot) -> None:
    """What the key set off is done (a key that quits leaves nothing to wait for)."""
    if app.is_running:
        await wait_until(pilot, lambda: not app.is_running or settled(app), "the key's work done")


# How a person reaches each screen in a read-only app. The screens that only a write opens (the
# decision forms, the bulk confirmation, the max-rounds override, the round gate) cannot be
# reached: that they never open while every binding is pressed is part of the proof.
REACH = {
    "MainScreen": [_to_main],
    "LoopsScreen": [_to_loops],
    "LoopGate": [_to_spec_gate, _to_request_gate],
    "TrendsScreen": [_to_trends],
    "HelpScreen": [_to_help],
}
UNREACHABLE = {
    "DecisionForm",
    "AcceptForm",
    "DeferForm",
    "YesNo",
    "ConfirmBulk",
    "ConfirmRoundStart",
    "OverrideReason",
    "RoundGate",
}


def test_every_screen_is_either_driven_or_unreachable_read_only():
    assert set(screen_classes()) == set(REACH) | UNREACHABLE


CASES = [
    (name, reach.__name__, binding.key.split(",")[0].strip(), binding.action)
    for name, cls in sorted(screen_classes().items())
    if name in REACH
    for reach in REACH[name]
    for binding in cls.BINDINGS
]


@aio
@pytest.mark.parametrize("screen_name,reach,key,action", CASES, ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in CASES])
async def test_every_binding_of_every_screen_writes_nothing_read_only(
    tmp_path, monkeypatch, screen_name, reach, key, action
):
    root, feature, spec, state = _repo(tmp_path, monkeypatch)
    app = ScarsApp(feature, read_only=True, user="bob")
    opened: list[str] = []
    push = app.push_screen

    def pushed(screen, *args, **kwargs):
        opened.append(type(screen).__name__)
        return push(screen, *args, **kwargs)

    app.push_screen = pushed  # type: ignore[method-assign]
    notes = record_notes(app)
    before = tree(root, state)
    async with app.run_test(size=SIZE) as pilot:
        await globals()[reach](app, pilot)
        target = app.screen
        assert type(target).__name__ == screen_name
        if screen_name == "MainScreen":  # a marked item, so that F / A / D have something to decide
            await pilot.press("space", "k")
        await pilot.press(key)
        await _settled_if_running(app, pilot)
        top = app.screen
        if app.is_running and top is not target and top.query(Input):
            # A form or a gate opened: type a reason and press Enter, as a person would.
            field = top.query(Input).first()
            field.focus()
            field.value = REASON
            await pilot.press("enter")
            await _settled_if_running(app, pilot)
        if screen_name == "MainScreen" and action.split("(")[0] in MainScreen.WRITE_ACTIONS:
            assert any(READ_ONLY in m for _, m in notes), notes  # the key says why nothing happens
    assert changed(before, tree(root, state)) == []
    assert not set(opened) & UNREACHABLE, opened
