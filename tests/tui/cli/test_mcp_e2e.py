"""End to end: the MCP SDK's stdio client is the agent (it spawns `python -m scars.tui mcp`), a
Pilot-driven app is the person. A samsara round: list_waiting → request_gate(entry) →
wait_for_answer (pending, then answered in the app) → request_gate(triage) → the person triages →
the items to fix come back → the agent fixes a report → request_gate(round-continue) → the person
stops → `scars log verify` passes and every record says the person answered in the app."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import Implementation
from textual.widgets import DataTable

from scars.core.formats.auto_decisions import parse_auto_decisions
from scars.core.gates import requests as rq
from scars.core.gates.inbox import gate_call
from scars.core.loops import discover_loops
from scars.core.loops.registry import GATES
from scars.core.provenance import PERSON_CHANNELS, Provenance
from scars.core.samsara.feature import read_feature
from scars.core.storage.journal import journal_path, read_journal
from scars.tui.app.app import ScarsApp
from tests.factories import (
    GATE_ANSWERS,
    clean_env,
    gate_state,
    resolve_in_report,
    samsara_feature,
    scars_process,
    wait_until,
)
from tests.tui.app.test_app_pilot import SIZE, aio, on_screen
from tests.tui.app.test_loops_console import _answer

AGENT_VARS = ("CLAUDECODE", "GEMINI_CLI")
AGENT_PREFIXES = ("CLAUDE_CODE_", "CODEX_")
CLIENT = Implementation(name="test-agent", version="9.9.1")


def no_agent_env(monkeypatch) -> None:
    """The person's side: no agent session in this process's environment (the machine may set one)."""
    for name in list(os.environ):
        if name in AGENT_VARS or name.startswith(AGENT_PREFIXES):
            monkeypatch.delenv(name)


def agent_env() -> dict[str, str]:
    """The server's environment: a Claude Code session, the agent's user."""
    env = {k: v for k, v in os.environ.items() if k not in AGENT_VARS and not k.startswith(AGENT_PREFIXES)}
    return {**env, "CLAUDECODE": "1", "CLAUDE_CODE_SESSION_ID": "sess-42", "SCARS_USER": "agent", "NO_COLOR": "1"}


def server_params(cwd: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "scars.tui", "mcp"], cwd=str(cwd), env=agent_env())


async def call(session: ClientSession, name: str, **arguments) -> dict:
    res = await session.call_tool(name, arguments)
    assert not res.is_error, res.content[0].text
    return json.loads(res.content[0].text)


def _row_keys(app: ScarsApp) -> list[str]:
    return [str(k.value) for k in app.screen.query_one("#loops-table", DataTable).rows]


async def _open_request(app: ScarsApp, pilot, rid: str) -> None:
    await on_screen(app, pilot, "LoopsScreen")
    await wait_until(pilot, lambda: f"request:{rid}" in _row_keys(app), f"request {rid} in the inbox")
    app.screen.query_one("#loops-table", DataTable).move_cursor(row=_row_keys(app).index(f"request:{rid}"))
    await pilot.press("enter")


async def answered_in_app(agent: ClientSession, app: ScarsApp, pilot, rid: str, answer: str, reason: str) -> dict:
    """The agent waits on ``rid`` while the person opens it in the Loops inbox and answers it; what
    ``wait_for_answer`` returned."""
    pending = asyncio.ensure_future(call(agent, "wait_for_answer", request_id=rid, timeout_s=120))
    await _open_request(app, pilot, rid)
    await on_screen(app, pilot, "LoopGate")
    await _answer(app, pilot, answer, reason)
    return await pending


@aio
async def test_an_agent_drives_a_samsara_round_while_a_person_answers_in_the_app(tmp_path, monkeypatch):
    clean_env(monkeypatch, user="bob")
    no_agent_env(monkeypatch)
    f = samsara_feature(tmp_path / "repo")  # human-in-the-loop mode (no execution mode given)
    root = rq.requests_root(f)
    rel = str(f.relative_to(root))
    async with stdio_client(server_params(root)) as (r, w), ClientSession(r, w, client_info=CLIENT) as agent:
        await agent.initialize()
        names = {t.name for t in (await agent.list_tools()).tools}
        assert names == {"list_waiting", "feature_status", "budget_context", "request_gate", "wait_for_answer"}
        listed = await call(agent, "list_waiting", path=".")
        assert [(lp["path"], lp["gate"]["id"]) for lp in listed["loops"]] == [(rel, "triage")]

        # entry: pending while nobody answered, then answered in the app
        entry = await call(agent, "request_gate", gate="entry", path=rel)
        rid = entry["request"]
        assert rq.load_request(root, rid).status == "pending"  # in the inbox before the call returned
        via = rq.load_request(root, rid).asked_from["via"]
        assert via == {
            "channel": "mcp",
            "client": "test-agent",
            "client_version": "9.9.1",
            "agent": "claude-code",
            "agent_session": "sess-42",
        }
        waited = await call(agent, "wait_for_answer", request_id=rid, timeout_s=0.3)
        assert (waited["status"], waited["waited_s"]) == ("pending", 0.3)

        app = ScarsApp(None, inbox=(discover_loops(root), root), user="bob")
        async with app.run_test(size=SIZE) as pilot:
            got = await answered_in_app(agent, app, pilot, rid, "enter", "five undecided items: worth a round")
            assert got["status"] == "answered"
            assert (got["answer"]["answer"], got["answer"]["decided_by"]) == ("enter", "bob")
            assert got["next"]["do"]

            # triage: the person decides item by item in the app, then says done
            tri = (await call(agent, "request_gate", gate="triage", path=rel))["request"]
            pending = asyncio.ensure_future(call(agent, "wait_for_answer", request_id=tri, timeout_s=120))
            await _open_request(app, pilot, tri)
            await on_screen(app, pilot, "MainScreen")
            await app.wait_loaded()
            await pilot.press("f")
            await wait_until(pilot, lambda: len(app.decisions) == 1, "the first item's fix recorded")
            fixed = next(iter(app.decisions))
            await pilot.press("L")
            await _open_request(app, pilot, tri)
            await on_screen(app, pilot, "LoopGate")
            await _answer(app, pilot, "done", "the retry limit is fixed in this round")
            got = await pending
        assert got["status"] == "answered", got
        fixes = got["next"]["fix"]
        item = next(it for it in read_feature(f).items if it.id == fixed)
        assert fixes == [
            {"id": fixed, "text": item.text, "file": item.file, "line": item.line, "category": item.category}
        ]
        assert got["next"]["accept"] == [] and got["next"]["defer"] == []
        assert len(got["next"]["undecided"]) == len(read_feature(f).items) - 1

        # the agent fixes it: the report says so
        resolve_in_report(f, item.text)
        status = await call(agent, "feature_status", path=rel)
        assert fixed not in status["undecided"]
        cont = (await call(agent, "request_gate", gate="round-continue", path=rel))["request"]
        app = ScarsApp(None, inbox=(discover_loops(root), root), user="bob")
        async with app.run_test(size=SIZE) as pilot:
            got = await answered_in_app(
                agent, app, pilot, cont, "stop", "the rest is for the person to accept next week"
            )
        assert got["status"] == "answered", got
        assert got["answer"]["answer"] == "stop"
    assert all(rq.load_request(root, x).status == "applied" for x in (rid, tri, cont))
    verify = scars_process("log", "verify", str(f), "--json", cwd=root)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    # every record (the decision, the round's start and close, each gate) is the person's, in the app
    records = read_journal(journal_path(f)).records
    kinds = [r["type"] for r in records]
    assert "decision" in kinds and "round_start" in kinds and "round_close" in kinds, kinds
    for r in records:
        prov = Provenance.from_record(r.get("provenance"))
        assert prov is not None and prov.by_a_person and prov.channel in PERSON_CHANNELS, r
        assert r["by"] == "bob" or r.get("decided_by") == "bob", r
    log = (f / "iteration-log.yaml").read_text(encoding="utf-8")
    assert "decision: stop" in log and "claude-code" not in log


OTHER_LOOPS = ("spec", "review-continue", "pdca-max-iterations", "sprint-pause", "dag-escalate")


@pytest.mark.parametrize("gate", OTHER_LOOPS)
@aio
async def test_an_agent_asks_one_gate_of_each_other_loop_and_the_person_answers_in_the_app(gate, tmp_path, monkeypatch):
    clean_env(monkeypatch, user="bob")
    no_agent_env(monkeypatch)
    (tmp_path / ".git").mkdir()
    path, entries_dir, _selectors = gate_state(gate, tmp_path)
    answer, reason = GATE_ANSWERS[gate]
    root = rq.requests_root(path)
    async with stdio_client(server_params(root)) as (r, w), ClientSession(r, w, client_info=CLIENT) as agent:
        await agent.initialize()
        listed = await call(agent, "list_waiting", path=".")
        # the loops that wait, with their gate: the inbox's one rule (core's gate_call)
        waiting = [s for s in discover_loops(root) if s.waiting_for_human]
        assert [(lp["gate"] or {}).get("id") for lp in listed["loops"]] == [
            getattr(gate_call(s, root), "gate", None) for s in waiting
        ]
        rid = (await call(agent, "request_gate", gate=gate, path=str(path)))["request"]
        app = ScarsApp(None, inbox=(discover_loops(root), root), user="bob")
        async with app.run_test(size=SIZE) as pilot:
            got = await answered_in_app(agent, app, pilot, rid, answer, reason)
    assert got["status"] == "answered", got
    assert (got["answer"]["answer"], got["answer"]["decided_by"]) == (answer, "bob")
    assert got["next"]["do"] == GATES[gate].answer(answer).consequence
    entries = parse_auto_decisions((entries_dir / "auto-decisions.md").read_text(encoding="utf-8"))
    assert [e.gate_id for e in entries][-1:] == [GATES[gate].entry_id]
