"""`scars mcp`: the human gate as an MCP server over stdio, for the coding agents that run the loops.

Built on the official ``mcp`` SDK (``mcp.server.mcpserver.MCPServer``), imported only when this
command runs. Each tool calls the function the CLI calls (one rule, one place):

* ``list_waiting(path)`` — `scars loops --waiting --json` (loops.inbox_json);
* ``feature_status(path, fields)`` — `scars status --json --summary --fields …` (status.summary_object);
* ``budget_context(path)`` — `scars budget-context --json` (budget_context.envelope_json);
* ``request_gate(gate, path, …)`` — posts as `scars gate … --wait` does (core.gates.gather, then
  requests.post_request: same evidence, fingerprint, inbox and signature), returns the id at once;
* ``wait_for_answer(request_id, timeout_s)`` — core.gates.outcome.request_outcome, which
  `scars gate … --wait --json` prints too.

The server never answers a gate: a person does, in the app's Loops inbox or with `scars answer`.
A request it posts records the MCP client (name and version from the handshake) and the agent
session in ``asked_from["via"]``. A scars error is an MCP tool error with the CLI's message and
exit code.
"""

import argparse
from typing import Any

DESCRIPTION = (
    "Serve the human gate to a coding agent as an MCP server over stdio (register it in the agent's MCP "
    "configuration as the command `scars mcp`). Tools: list_waiting, feature_status, budget_context, "
    "request_gate, wait_for_answer. The server posts requests and reports answers; a person answers them in "
    "the scars app's Loops inbox or with `scars answer ID`."
)

WAIT_DEFAULT_S = 60.0  # well under an agent's tool-call limit; the agent calls again on `pending`
WAIT_MAX_S = 540.0  # as `scars gate --wait`'s default: fits a shell tool's 600 s


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root",
        metavar="DIR",
        default=".",
        help="the directory relative paths of the tools are read from (default: the current directory)",
    )


def tool_error(exc: Exception) -> str:
    """A scars error as the tool's error text: the CLI's message and its exit code."""
    code = getattr(exc, "exit_code", 1)
    return f"{exc} (exit {code})"


def client_via(client_params: Any) -> dict[str, Any]:
    """What posts a request through this server: the MCP client from the handshake, the agent session."""
    # lazy: the settings only when a request is posted
    from scars.core.provenance import provenance

    info = getattr(client_params, "client_info", None)
    prov = provenance("mcp", tty=False, via="scars mcp")
    out: dict[str, Any] = {
        "channel": "mcp",
        "client": str(getattr(info, "name", "") or "unknown"),
        "client_version": str(getattr(info, "version", "") or ""),
    }
    if prov.agent:
        out["agent"] = prov.agent
        if prov.agent_session:
            out["agent_session"] = prov.agent_session
    return out


class Tools:
    """The tools' bodies, plain functions of scars (the server wraps each; tests call them too)."""

    def __init__(self, base: str = ".") -> None:
        self.base = base

    def _path(self, path: str | None) -> str:
        # lazy: path handling only when a tool runs
        import os

        p = path or "."
        return p if os.path.isabs(p) else os.path.join(self.base, p)

    def list_waiting(self, path: str = ".") -> dict[str, Any]:
        from scars.tui.cli.commands.loops import inbox_json

        return inbox_json(self._path(path), waiting_only=True)[0]

    def feature_status(self, path: str, fields: list[str] | None = None) -> dict[str, Any]:
        from scars.tui.cli.commands.status import summary_object

        return summary_object(self._path(path), list(fields or ()))

    def budget_context(self, path: str) -> dict[str, Any]:
        from scars.core.errors import UsageError
        from scars.tui.cli.commands.budget_context import feature_envelope
        from scars.tui.cli.commands.status import resolve_target

        kind, target, _features = resolve_target(self._path(path))
        if kind != "feature":
            raise UsageError(f"{path}: the budget context is of one feature directory")
        return feature_envelope(target)

    def request_gate(
        self,
        gate: str,
        path: str,
        options: dict[str, Any] | None = None,
        *,
        via: dict[str, Any] | None = None,
        user: str | None = None,
    ) -> dict[str, Any]:
        from scars.core import gates as core
        from scars.core.errors import UsageError
        from scars.core.gates import requests as rq
        from scars.core.loops.registry import GATES
        from scars.core.samsara.decisions import resolve_user

        if gate not in GATES:
            raise UsageError(f"unknown gate {gate!r}; gates: {', '.join(GATES)}")
        where = self._path(path)
        opts = {k: v for k, v in (options or {}).items() if v is not None}
        evidence = core.gather(gate, where) if gate == "triage" else core.gather(gate, where, **opts)
        root = rq.requests_root(where)
        req = rq.post_request(evidence, where, user=resolve_user(user), options=opts, root=root, via=via)
        return {
            "request": req.id,
            "status": req.status,
            "gate": gate,
            "path": req.path,
            "inbox": str(rq.inbox_dir(root)),
            "how_a_person_answers": f"in the scars app's Loops inbox, or: scars answer {req.id} --answer … --reason …",
        }

    def wait_for_answer(self, request_id: str, timeout_s: float = WAIT_DEFAULT_S, path: str = ".") -> dict[str, Any]:
        from scars.core.errors import UsageError
        from scars.core.gates import requests as rq
        from scars.core.gates.outcome import request_outcome
        from scars.core.samsara.decisions import resolve_user

        if not timeout_s > 0 or timeout_s > WAIT_MAX_S:
            raise UsageError(f"timeout_s must be more than 0 and at most {WAIT_MAX_S:g} seconds")
        root = rq.requests_root(self._path(path))
        user = resolve_user(None)
        with rq.waiting(root, request_id, user):  # the app shows a waiter while it waits
            return request_outcome(root, request_id, timeout=timeout_s, user=user)


def build_server(base: str = "."):  # the SDK's type, imported lazily
    """The MCP server with scars's five tools."""
    # lazy: the MCP SDK only for this command (the start-up import tests guard every other)
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from scars.core import __version__
    from scars.core.errors import ScarsError

    tools = Tools(base)
    server = MCPServer(
        name="scars",
        version=__version__,
        instructions=(
            "The human gate of agentic iteration loops (samsara, loop-spec, bkit, ARIS/Mechanist). Ask every "
            "human gate with request_gate, then call wait_for_answer until it is no longer pending; never write "
            "the loop's gate decisions yourself."
        ),
    )

    def guarded(fn, *args: Any, **kw: Any) -> Any:
        try:
            return fn(*args, **kw)
        except ScarsError as exc:
            raise ToolError(tool_error(exc)) from None

    @server.tool()
    def list_waiting(path: str = ".") -> dict[str, Any]:
        """The loops and gate requests under path that wait for a person, each loop with the gate to ask."""
        return guarded(tools.list_waiting, path)

    @server.tool()
    def feature_status(path: str, fields: list[str] | None = None) -> dict[str, Any]:
        """A compact status of a samsara feature directory; fields adds fields of `scars status --json` (items …)."""
        return guarded(tools.feature_status, path, fields)

    @server.tool()
    def budget_context(path: str) -> dict[str, Any]:
        """The iteration_budget_context envelope of a samsara feature, with its safety valves."""
        return guarded(tools.budget_context, path)

    @server.tool()
    def request_gate(
        gate: str,
        path: str,
        ctx: Context,
        item: str | None = None,
        blocked: str | None = None,
        bkit_feature: str | None = None,
        value: str | None = None,
    ) -> dict[str, Any]:
        """Post a human gate as a request in the repository's inbox (as `scars gate GATE PATH --wait`) and
        return its id at once; a person answers it in the scars app or with `scars answer`."""
        via = client_via(ctx.session.client_params)
        options = {"item": item, "blocked": blocked, "feature": bkit_feature, "value": value}
        return guarded(tools.request_gate, gate, path, options, via=via)

    @server.tool()
    def wait_for_answer(request_id: str, timeout_s: float = WAIT_DEFAULT_S, path: str = ".") -> dict[str, Any]:
        """Wait at most timeout_s seconds (default 60) for a person's answer: answered (with what the loop does
        next), pending (call again), expired, withdrawn or refused (with the reason)."""
        return guarded(tools.wait_for_answer, request_id, timeout_s, path)

    return server


def run(args: argparse.Namespace) -> int:
    build_server(args.root).run("stdio")
    return 0
