"""`scars mcp`'s tools call the CLI's functions: the contracts between them (the summary of
`scars status --json --summary` and ``feature_status``; what `scars gate … --wait --json` prints
and ``wait_for_answer``), the size of an agent's status, the wait's bounds and its states, and a
request that outlives its server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import stdio_client

from scars.core.errors import UsageError
from scars.core.gates import gather
from scars.core.gates import requests as rq
from scars.core.gates.outcome import request_outcome
from scars.core.provenance import provenance
from scars.tui.cli import main as cli
from scars.tui.cli.commands import gate as gate_cmd
from scars.tui.cli.commands.mcp import WAIT_MAX_S, Tools
from tests.factories import clean_env, loop_spec_feature, report, run_cli, samsara_feature, write_feature
from tests.tui.cli.test_mcp_e2e import CLIENT, no_agent_env, server_params
from tests.tui.cli.test_requests_cli import _waiter

REASON = "offline sync is v2 scope; the backlog keeps it"
SUMMARY_LIMIT = 12 * 1024  # the bound for a real 85-item feature

WORDS = (
    "the retry budget of the export worker is hard-coded and a slow storage backend exhausts it before the "
    "second attempt, so the export silently stops at the first partial page"
)


def feature_of(root: Path, n: int) -> Path:
    """A feature of ``n`` counted items spread over reports as samsara writes them (long texts)."""
    reports = {}
    per = 5
    for t in range((n + per - 1) // per):
        ks = [
            f'description: "{WORDS} (case {t}-{i})"\nwhere: "src/export/worker_{t}.py:{10 + i}"'
            for i in range(min(per, n - t * per))
        ]
        reports[f"task-{t + 1}-scar.yaml"] = report(f"task-{t + 1}", ks=ks)
    return write_feature(root, reports, name="2026-11-20_export-retries")


def test_an_85_item_feature_status_fits_an_agent_unless_more_fields_are_asked(tmp_path, capsys):
    f = feature_of(tmp_path / "repo", 85)
    code, full, _ = run_cli(["status", str(f), "--json"], capsys)
    assert code == 0 and len(json.loads(full)["items"]) == 85
    assert len(full.encode()) > 4 * SUMMARY_LIMIT  # the full object is what an agent cannot take
    small = Tools().feature_status(str(f))
    assert len(json.dumps(small).encode()) <= SUMMARY_LIMIT
    assert small["counts"] == json.loads(full)["counts"] and len(small["undecided"]) == 85
    asked = Tools().feature_status(str(f), ["items"])
    assert len(json.dumps(asked).encode()) > SUMMARY_LIMIT  # asked for: given whole
    assert asked["items"] == json.loads(full)["items"]


def test_status_summary_and_feature_status_are_one_object(tmp_path, capsys):
    f = samsara_feature(tmp_path / "repo")
    code, out, _ = run_cli(["status", str(f), "--json", "--summary", "--fields", "groups,warnings"], capsys)
    assert code == 0
    assert json.loads(out) == Tools().feature_status(str(f), ["groups", "warnings"])
    code, out, _ = run_cli(["status", str(f), "--json", "--summary"], capsys)
    assert json.loads(out) == Tools().feature_status(str(f)) and "groups" not in json.loads(out)


def test_an_unknown_field_is_a_usage_error_in_both(tmp_path, capsys):
    f = samsara_feature(tmp_path / "repo")
    code, _, err = run_cli(["status", str(f), "--json", "--summary", "--fields", "nope"], capsys)
    assert code == 2 and "unknown field(s) nope" in err
    with pytest.raises(UsageError, match="unknown field"):
        Tools().feature_status(str(f), ["nope"])
    code, _, err = run_cli(["status", str(f), "--summary"], capsys)
    assert code == 2 and "go with --json" in err


def test_a_waiting_gate_prints_what_the_loop_does_next_as_wait_for_answer_says(tmp_path, monkeypatch):
    clean_env(monkeypatch, user="bob")
    no_agent_env(monkeypatch)
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    fdir = loop_spec_feature(root)
    proc = _waiter("spec", str(fdir), "--wait", "--json", cwd=root)
    try:
        rid = json.loads(proc.stdout.readline())["request"]
        rq.answer_request(root, rid, "ship", REASON, user="bob", source=provenance("request-answer", tty=True))
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    printed = json.loads(out.splitlines()[-1])
    got = request_outcome(root, rid, timeout=1)  # applied: the stored result, and the same next step
    assert got["status"] == "answered"
    assert printed["next"] == got["next"]
    assert got["next"]["do"] == gather("spec", fdir).gate.answer("ship").consequence
    assert printed["answer"] == got["answer"]["answer"] == "ship"


def test_gate_wait_defaults_to_a_timeout_an_agents_shell_tool_allows(capsys):
    assert gate_cmd.WAIT_TIMEOUT <= 540
    with pytest.raises(SystemExit):
        cli.main(["gate", "--help"])
    assert "default 540" in capsys.readouterr().out.replace("\n", " ").replace("  ", " ")


def test_wait_for_answer_returns_pending_within_its_timeout_and_refuses_a_longer_one(tmp_path, monkeypatch):
    clean_env(monkeypatch, user="agent")
    f = samsara_feature(tmp_path / "repo")
    tools = Tools()
    rid = tools.request_gate("entry", str(f))["request"]
    got = tools.wait_for_answer(rid, 0.2, path=str(f))
    assert got == {"status": "pending", "request": rid, "gate": "entry", "waited_s": 0.2}
    rq.withdraw_request(rq.requests_root(f), rid, user="agent")  # without the bound: settled at once, no error
    for bad in (0, -1, WAIT_MAX_S + 1):
        with pytest.raises(UsageError, match="timeout_s"):
            tools.wait_for_answer(rid, bad, path=str(f))
    assert tools.wait_for_answer(rid, WAIT_MAX_S, path=str(f))["status"] == "withdrawn"  # the bound itself is allowed
    assert WAIT_MAX_S <= 540


def test_withdrawn_refused_and_expired_requests_say_why(tmp_path, monkeypatch):
    clean_env(monkeypatch, user="bob")
    no_agent_env(monkeypatch)
    f = samsara_feature(tmp_path / "repo")
    root = rq.requests_root(f)
    tools = Tools()
    gone = tools.request_gate("entry", str(f))["request"]
    rq.withdraw_request(root, gone, user="bob")
    assert request_outcome(root, gone, timeout=1) == {
        "status": "withdrawn",
        "request": gone,
        "gate": "entry",
        "reason": "withdrawn by bob",
    }
    late = tools.request_gate("entry", str(f))["request"]
    rq.answer_request(root, late, "enter", "worth a round", user="bob", source=provenance("request-answer", tty=True))
    (f / "scar-reports" / "task-2-scar.yaml").write_text(report("task-2", ks=['description: "New"']))
    got = request_outcome(root, late, timeout=1)
    assert got["status"] == "refused" and "changed since bob answered" in got["reason"]
    stale = tools.request_gate("entry", str(f))["request"]
    (f / "scar-reports" / "task-2-scar.yaml").write_text(report("task-2", ks=['description: "Newer"']))
    got = request_outcome(root, stale, timeout=0.1)
    assert got["status"] == "expired" and "task-2-scar.yaml" in got["reason"]


def test_a_killed_server_loses_no_request_and_errors_keep_the_cli_exit(tmp_path, monkeypatch):
    clean_env(monkeypatch, user="bob")
    no_agent_env(monkeypatch)
    f = samsara_feature(tmp_path / "repo")
    root = rq.requests_root(f)

    async def agent() -> tuple[str, str]:
        async with stdio_client(server_params(root)) as (r, w), ClientSession(r, w, client_info=CLIENT) as s:
            await s.initialize()
            bad = await s.call_tool("feature_status", {"path": "no-such-feature"})
            assert bad.is_error
            res = await s.call_tool("request_gate", {"gate": "entry", "path": str(f)})
            assert not res.is_error
            # the session ends here: the server is terminated with the request posted, not answered
            return json.loads(res.content[0].text)["request"], bad.content[0].text

    rid, error = asyncio.run(agent())
    assert "does not exist (exit 2)" in error
    req = rq.load_request(root, rid)
    assert req.status == "pending" and rq.not_posted_here(req, root) is None
    assert req.asked_by == "agent" and req.asked_from["via"]["client"] == "test-agent"
    # a person answers it later; the agent (or `scars gate entry --wait --request ID`) picks it up
    rq.answer_request(root, rid, "enter", "worth a round", user="bob", source=provenance("request-answer", tty=True))
    got = request_outcome(root, rid, timeout=1)
    assert got["status"] == "answered" and got["answer"]["decided_by"] == "bob"


def test_budget_context_is_the_envelope_budget_context_prints(tmp_path, capsys):
    f = samsara_feature(tmp_path / "repo")
    code, out, _ = run_cli(["budget-context", str(f), "--json"], capsys)
    assert code == 0
    assert Tools().budget_context(str(f)) == json.loads(out)
    assert "iteration_budget_context" in json.loads(out)
    with pytest.raises(UsageError, match="one feature directory"):
        Tools().budget_context(str(tmp_path / "repo"))


def test_the_server_serves_exactly_the_tools_scars_init_tells_the_agents_to_call():
    """The agents' instructions (``scars init``'s section, core's ``MCP_TOOLS``) and the server name
    the same tools, in the same order: a tool renamed or added on one side only fails here."""
    from scars.core.agents.instructions import MCP_TOOLS
    from scars.tui.cli.commands.mcp import build_server

    served = [t.name for t in asyncio.run(build_server().list_tools())]
    assert served == [name for name, _what in MCP_TOOLS]
