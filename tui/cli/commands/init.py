"""`scars init`: wire a repository for the agents that run the loops (Claude Code, Codex CLI,
Gemini CLI) — the plan is ``scars.core.agents.wiring``'s; this module only prints and writes it."""

from __future__ import annotations

import argparse
import json
import sys

DESCRIPTION = (
    "Wire a repository for the coding agents in one command: register the scars MCP server in the file "
    "each agent reads (.mcp.json for Claude Code, .codex/config.toml for Codex CLI, .gemini/settings.json "
    "for Gemini CLI), add a marked section to CLAUDE.md / AGENTS.md / GEMINI.md saying that every human "
    "gate is asked through scars, and, for Claude Code, a PreToolUse hook in .claude/settings.json "
    "(`scars hook pre-tool-use`) that stops the agent from answering a human-mode gate itself. JSON files "
    "are merged (what you wrote stays byte for byte), sections are appended; a second run changes nothing. "
    "--dry-run prints the plan as a unified diff and writes nothing; --remove takes out exactly what "
    "scars added. Default: all three agents."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", nargs="?", default=".", help="the repository (default: .)")
    parser.add_argument(
        "--agent",
        dest="agents",
        action="append",
        choices=["claude-code", "codex", "gemini"],
        help="wire this agent only (repeatable; default: all three)",
    )
    parser.add_argument("--dry-run", action="store_true", help="print the plan as a unified diff; write nothing")
    parser.add_argument("--remove", action="store_true", help="take out what scars init added")
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object (the files and what happens to each)"
    )


def run(args: argparse.Namespace) -> int:
    # lazy: loaded when the command runs, not for its --help or completion
    from scars.core.agents import wiring
    from scars.core.sanitize import one_line

    changes = wiring.plan(args.path, args.agents, remove=args.remove)
    if not args.dry_run:
        wiring.apply(args.path, changes)
    if args.json:
        out = {
            "ok": True,
            "dry_run": bool(args.dry_run),
            "remove": bool(args.remove),
            "files": [
                {
                    "path": c.target.rel,
                    "agent": c.target.agent,
                    "changed": c.changed,
                    "what": c.target.what,
                    "note": c.note,
                }
                for c in changes
            ],
        }
        if args.dry_run:
            out["diff"] = wiring.diff(changes)
        print(json.dumps(out, ensure_ascii=False))
        return 0
    if args.dry_run:
        sys.stdout.write(wiring.diff(changes))
    verb = "would change" if args.dry_run else "changed"
    for c in changes:
        mark = verb if c.changed else "unchanged"
        print(f"{one_line(c.target.rel)}: {mark} — {one_line(c.note)}" + ("" if args.remove else f" ({c.target.what})"))
    if not any(c.changed for c in changes):
        print("nothing to do: the repository is already " + ("clean of scars' wiring" if args.remove else "wired"))
    return 0
