"""What `scars init` tells the agents, in CLAUDE.md / AGENTS.md / GEMINI.md: every human gate of
the loops is asked through scars. Built from the gates catalog (``scars.core.gatekit.catalog``), so
the gate named for each step of each loop is the one `scars gate` answers; the MCP tools are named
here once (``MCP_TOOLS``: the names `scars mcp` serves and clients call)."""

from __future__ import annotations

from scars.core.loops.registry import GATES

# The tools of `scars mcp` (issue 28), by name, with what each does: the instructions name them,
# docs/agents.md lists them. The server's own module serves these names.
MCP_TOOLS: tuple[tuple[str, str], ...] = (
    ("list_waiting", "the loops and gates under a path that wait for a person, with the gate to ask"),
    ("feature_status", "a compact status of a samsara feature or a loop's state, sized for an agent"),
    ("budget_context", "the iteration_budget_context envelope of the next dispatch"),
    ("request_gate", "post a gate request (as `scars gate … --wait` does) and return its id at once"),
    ("wait_for_answer", "wait, within a timeout, for the person's answer: answered (what to do next) or pending"),
)

# The loops as the instructions name them (catalog loop id -> words).
LOOP_NAMES = {
    "samsara": "samsara (implement → iteration)",
    "loop-spec": "loop-spec (ITERATE)",
    "aris": "ARIS / Mechanist (auto-review-loop, auto-iteration-loop)",
    "bkit": "bkit (PDCA, sprints)",
    "dag": "DAG iteration (dag-iteration-detector)",
}

BEGIN = "<!-- scars:begin (added by `scars init`; `scars init --remove` takes it out) -->"
END = "<!-- scars:end -->"


def gate_lines() -> list[str]:
    """One line per gate a loop asks a person, grouped by loop: the gate id, its step upstream."""
    lines: list[str] = []
    for loop, name in LOOP_NAMES.items():
        gates = [g for g in GATES.values() if g.loop == loop and g.cli]
        if not gates:
            continue
        lines.append(f"- **{name}**")
        for g in gates:
            lines.append(f"  - `{g.id}` — {g.title} (at {g.source})")
    return lines


def section() -> str:
    """The marked section, begin and end markers included, ending with a newline."""
    tools = "\n".join(f"- `{name}` — {what}" for name, what in MCP_TOOLS)
    body = f"""{BEGIN}
## Human gates go through scars

Every human gate of samsara, loop-spec, bkit, ARIS/Mechanist and DAG iteration loops in this
repository is asked to a person through **scars** (the `scars` MCP server), never answered by you
and never asked only in this chat.

At each step below, call `request_gate(gate, path, …)` with the gate id, then
`wait_for_answer(request_id)` until it returns `answered` (it returns `pending` before its timeout:
call it again with the same id — also after a restart or a new session, the request id is all you
need; `list_waiting(path)` shows the requests still open). Then do what the answer says: for a
triage, fix the items it lists and nothing else. `expired`, `withdrawn` or `refused`: stop and say so.

{chr(10).join(gate_lines())}

Without the MCP server, the same from a shell: `scars gate GATE PATH --wait` (it prints the
request id and how to re-attach with `--request ID` when it times out).

Never write a loop's gate decisions yourself: no `scars decide`, `scars answer`,
`scars gate … --answer`, `scars round start|close|flush`, and no edits of `iteration-log.yaml` or
`auto-decisions.md` while the loop runs in human mode — a person answers those in the scars app
(the Loops inbox) or with `scars answer` at their terminal. In auto mode (pre-thinking.md says
`Execution mode: auto`) the loop's gatekeeper answers as the loop's own instructions say.

Tools of the `scars` MCP server:
{tools}
{END}
"""
    return body
