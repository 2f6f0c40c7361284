"""Gate requests in the app: a real `scars gate … --wait` posts, the Loops inbox shows it live,
Enter opens its gate, the answer wakes the waiter, which records it once."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import DataTable

from scars.core.formats.auto_decisions import parse_auto_decisions
from scars.core.gates import gather
from scars.core.gates import requests as rq
from scars.core.loops import discover_loops
from scars.tui.app.app import ScarsApp
from tests.factories import clean_env, loop_spec_feature, wait_settled, wait_until
from tests.tui.app.test_app_pilot import SIZE, aio, on_screen, record_notes, screen_text
from tests.tui.app.test_loops_console import _answer
from tests.tui.cli.test_requests_cli import _waiter

REASON = "offline sync is v2 scope; the backlog keeps it"


def _repo(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    return root, loop_spec_feature(root)


def _entries(fdir: Path) -> list:
    f = fdir / "auto-decisions.md"
    return parse_auto_decisions(f.read_text(encoding="utf-8")) if f.exists() else []


def _row_keys(app: ScarsApp) -> list[str]:
    table = app.screen.query_one("#loops-table", DataTable)
    return [str(k.value) for k in table.rows]


@aio
async def test_a_waiting_loop_is_answered_in_the_app_and_goes_on(tmp_path, monkeypatch):
    clean_env(monkeypatch, user="bob")
    root, fdir = _repo(tmp_path)
    app = ScarsApp(None, inbox=(discover_loops(root), root), user="bob")
    rings: list[int] = []
    app.bell = lambda: rings.append(1)  # type: ignore[method-assign]
    notes = record_notes(app)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(app, pilot, "LoopsScreen")
        assert not any(k.startswith("request:") for k in _row_keys(app))
        waiter = _waiter("spec", str(fdir), "--wait", "--json", cwd=root)
        try:
            rid = json.loads(waiter.stdout.readline())["request"]
            # it appears without a reload, first, with who asks; the terminal bell rings
            await wait_until(pilot, lambda: f"request:{rid}" in _row_keys(app), "the request's row")
            assert _row_keys(app)[0] == f"request:{rid}"
            assert rings and any("agent asks spec" in m for _, m in notes)
            text = screen_text(app)
            assert "1 gate request" in text and "agent asks" in text and "PENDING" in text
            app.screen.query_one("#loops-table", DataTable).move_cursor(row=0)
            await pilot.press("enter")
            await on_screen(app, pilot, "LoopGate")
            text = screen_text(app)
            assert f"request {rid}: agent asks" in text
            assert "ITERATE judges the goal still unmet because of a SPEC-level gap" in text
            assert "changed since" not in text
            await _answer(app, pilot, "ship", REASON)
            assert any(t == "Answered" and "the waiting loop records it" in m for t, m in notes)
            out, err = waiter.communicate(timeout=60)
        finally:
            waiter.kill()
        assert waiter.returncode == 0, err
        result = json.loads(out.splitlines()[-1])
        assert (result["answer"], result["decided_by"], result["reason"]) == ("ship", "bob", REASON)
        assert result["source"] == f"request {rid} (app)"
        # recorded: the row leaves the inbox without a reload
        await wait_until(pilot, lambda: f"request:{rid}" not in _row_keys(app), "the request gone from the inbox")
    assert len(_entries(fdir)) == 1
    assert rq.load_request(root, rid).status == "applied"


@aio
async def test_a_request_whose_loop_moved_on_opens_refreshed_with_a_note(tmp_path, monkeypatch):
    clean_env(monkeypatch, user="bob")
    root, fdir = _repo(tmp_path)
    req = rq.post_request(gather("spec", fdir), fdir, user="agent")
    data = json.loads((fdir / "feature.json").read_text())
    data["iterate"]["used"] = 3
    (fdir / "feature.json").write_text(json.dumps(data))
    app = ScarsApp(None, inbox=(discover_loops(root), root), user="bob")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(app, pilot, "LoopsScreen")
        assert _row_keys(app)[0] == f"request:{req.id}" and "EXPIRED" in screen_text(app)
        assert "Loops inbox — 1 gate request · " in screen_text(app)  # counted from the first paint
        await pilot.press("enter")
        await on_screen(app, pilot, "LoopGate")
        text = screen_text(app)
        assert "The loop's files changed since this request was posted" in text
        assert "3 of 10 used" in text  # the gate as it reads now, not as it was posted (2 of 10)
        await _answer(app, pilot, "ship", REASON)
    got = rq.load_request(root, req.id)
    assert got.status == "answered" and got.answer["by"] == "bob"
    assert rq.apply_request(root, req.id).answer == "ship"


@aio
async def test_a_request_answered_elsewhere_meanwhile_is_refused_in_the_app_naming_who(tmp_path, monkeypatch):
    clean_env(monkeypatch, user="bob")
    root, fdir = _repo(tmp_path)
    req = rq.post_request(gather("spec", fdir), fdir, user="agent")
    app = ScarsApp(None, inbox=(discover_loops(root), root), user="bob")
    notes = record_notes(app)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(app, pilot, "LoopsScreen")
        await pilot.press("enter")
        await on_screen(app, pilot, "LoopGate")
        rq.answer_request(root, req.id, "stop", "the sync design needs a rethink", user="carol", source="shell")
        await _answer(app, pilot, "ship", REASON)
        await wait_until(pilot, lambda: any("carol answered 'stop'" in m for _, m in notes), "the refusal shown")
    assert rq.load_request(root, req.id).answer["by"] == "carol"


@aio
async def test_hostile_text_of_a_request_is_inert_in_the_app(tmp_path, monkeypatch):
    clean_env(monkeypatch, user="bob")
    root, fdir = _repo(tmp_path)
    data = json.loads((fdir / "feature.json").read_text())
    hostile = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J[bold red]boom[/] \u202e"
    data["iterate"]["lastVerdict"]["gap"]["description"] = hostile
    data["iterate"]["feedback"] = data["iterate"]["lastVerdict"]["gap"]
    (fdir / "feature.json").write_text(json.dumps(data))
    rq.post_request(gather("spec", fdir), fdir, user="[bold]agent\x1b[31m")
    app = ScarsApp(None, inbox=(discover_loops(root), root), user="bob")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(app, pilot, "LoopsScreen")
        text = screen_text(app)
        assert "[bold]agent" in text  # shown as typed, not as markup
        await pilot.press("enter")
        await on_screen(app, pilot, "LoopGate")
        text = screen_text(app)
        assert "[bold red]boom[/]" in text
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text


@aio
async def test_a_triage_request_is_answered_by_triaging_in_the_app(tmp_path, monkeypatch):
    from tests.factories import samsara_feature

    clean_env(monkeypatch, user="bob")
    f = samsara_feature(tmp_path / "repo", auto=True)
    root = rq.requests_root(f)
    req = rq.post_request(gather("triage", f), f, user="agent")
    app = ScarsApp(None, inbox=(discover_loops(root), root), user="bob")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(app, pilot, "LoopsScreen")
        assert _row_keys(app)[0] == f"request:{req.id}"
        await pilot.press("enter")  # opens the feature for triage
        await on_screen(app, pilot, "MainScreen")
        await app.wait_loaded()
        await pilot.press("f")
        await wait_until(pilot, lambda: len(app.decisions) == 1, "the first item's fix recorded")
        await pilot.press("L")
        await on_screen(app, pilot, "LoopsScreen")
        app.screen.query_one("#loops-table", DataTable).move_cursor(row=_row_keys(app).index(f"request:{req.id}"))
        await pilot.press("enter")  # the feature is this app's: the triage gate itself
        await on_screen(app, pilot, "LoopGate")
        await _answer(app, pilot, "done", "the retry limit is fixed in this round")
        # the app holds the feature's lock, so it records through its own session, once
        await wait_until(pilot, lambda: rq.load_request(root, req.id).status == "applied", "the request recorded")
    result = rq.apply_request(root, req.id)  # what the waiter prints
    assert (result.gate, result.answer, result.decided_by) == ("triage", "done", "bob")
    assert [e.gate_id for e in _entries(f)] == ["triage"]


@aio
async def test_enter_on_a_loop_a_process_waits_on_answers_its_request(tmp_path, monkeypatch):
    """Before: the loop's own row recorded in place and the waiting process never woke (its
    request then expired)."""
    clean_env(monkeypatch, user="bob")
    root, fdir = _repo(tmp_path)
    req = rq.post_request(gather("spec", fdir), fdir, user="agent")
    app = ScarsApp(None, inbox=(discover_loops(root), root), user="bob")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(app, pilot, "LoopsScreen")
        keys = _row_keys(app)
        loop_row = next(i for i, k in enumerate(keys) if not k.startswith("request:"))
        app.screen.query_one("#loops-table", DataTable).move_cursor(row=loop_row)
        await pilot.press("enter")
        await on_screen(app, pilot, "LoopGate")
        assert f"request {req.id}: agent asks" in screen_text(app)
        await _answer(app, pilot, "ship", REASON)
    assert rq.load_request(root, req.id).status == "answered"
    assert _entries(fdir) == []  # recorded by the waiter (here: the next applier), not in place


@aio
async def test_a_poll_that_ends_after_the_inbox_was_left_changes_nothing(tmp_path, monkeypatch):
    """Before: a poll's result arriving after `q` looked for the inbox's table and raised."""
    from tests.factories import samsara_feature

    clean_env(monkeypatch, user="bob")
    f = samsara_feature(tmp_path / "repo")
    app = ScarsApp(f, user="bob")
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_loaded()
        await pilot.press("L")
        await on_screen(app, pilot, "LoopsScreen")
        inbox = app.screen
        await pilot.press("q")
        await on_screen(app, pilot, "MainScreen")
        inbox._requests_read(("late",), [])  # the worker's result, delivered late
        inbox._tick()
        await wait_settled(pilot, "whatever the late result set off done")
        assert type(app.screen).__name__ == "MainScreen"


@aio
async def test_an_expired_request_is_answered_in_the_app_against_the_gate_it_shows(tmp_path, monkeypatch):
    """The other side of ``requests.answerable`` (`scars answer` refuses an expired request:
    tests/tui/cli/test_requests_cli.py): the app shows its gate as it reads now and takes the answer."""
    clean_env(monkeypatch, user="bob")
    root, fdir = _repo(tmp_path)
    req = rq.post_request(gather("spec", fdir), fdir, user="agent")
    (fdir / "feature.json").write_text((fdir / "feature.json").read_text().replace('"used": 2', '"used": 3'))
    assert rq.inspect_request(root, req).state == "expired"
    app = ScarsApp(None, inbox=(discover_loops(root), root), user="bob")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(app, pilot, "LoopsScreen")
        await wait_until(pilot, lambda: f"request:{req.id}" in _row_keys(app), "the request's row")
        assert "1 gate request" in screen_text(app)
        app.screen.query_one("#loops-table", DataTable).move_cursor(row=_row_keys(app).index(f"request:{req.id}"))
        await pilot.press("enter")
        await on_screen(app, pilot, "LoopGate")
        assert "changed since" in screen_text(app)
        await _answer(app, pilot, "ship", REASON)
    assert rq.load_request(root, req.id).status == "answered"
