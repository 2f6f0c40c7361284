"""`scars hook pre-tool-use`: Claude Code's PreToolUse hook (``scars init`` registers it). The
rule is ``scars.core.agents.guard``'s; this module reads the hook's JSON and prints the verdict."""

from __future__ import annotations

import argparse
import json
import sys

DESCRIPTION = (
    "Agent hooks. `scars hook pre-tool-use` reads Claude Code's PreToolUse JSON on stdin and stops a shell "
    "call or an edit that would answer a human-mode gate in the person's place (scars decide, scars answer, "
    "scars gate … --answer, scars round start|close|flush, edits of iteration-log.yaml / auto-decisions.md): "
    "it prints a deny decision whose reason points at the request_gate MCP tool. Everything else passes "
    "(nothing printed, exit 0)."
)

_MAX_INPUT = 4 << 20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="hook", metavar="HOOK", required=True)
    p = sub.add_parser(
        "pre-tool-use",
        help="Claude Code's PreToolUse hook: stop an agent answering a human gate itself",
        description=DESCRIPTION,
    )
    p.add_argument(
        "--payload", metavar="JSON", help="judge this hook JSON instead of stdin's (to try the hook by hand)"
    )


def run(args: argparse.Namespace) -> int:
    # lazy: loaded when the hook runs, not for --help or completion
    from scars.core.agents import guard

    if args.payload is not None:
        raw = args.payload
    else:
        try:
            raw = sys.stdin.read(_MAX_INPUT)
        except (OSError, ValueError):  # no stdin to read: nothing to judge
            raw = ""
    try:
        payload = json.loads(raw) if raw.strip() else None
    except (json.JSONDecodeError, RecursionError):
        payload = None  # not a hook payload: nothing to judge, the call goes on
    verdict = guard.check_tool_call(payload)
    output = verdict.hook_output()
    if output is not None:
        print(json.dumps(output, ensure_ascii=False))
    return 0
