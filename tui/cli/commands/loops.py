"""`scars loops [PATH] [--json]`: every loop state under PATH, waiting ones first."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from scars.core.sanitize import one_line

DESCRIPTION = (
    "Find every loop state under PATH (default: the current directory) and print one summary per "
    "loop: budget used and left, the loop's own stop rule with its reasons, the next route, the "
    "score trend, and whether a person is needed (WAITING, with why). Loops waiting for a person "
    "come first. The open gate requests of the repository's inbox (`scars requests`) are listed before "
    "them, each with its state: planted for one this checkout did not post (shipped in a clone, copied, "
    "edited), which is never answered or applied here. A state file may be given instead of a directory."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path", nargs="?", default=".", metavar="PATH", help="directory to search (default: .) or one loop state file"
    )
    parser.add_argument("--json", action="store_true", help="print the loops as JSON for scripts")
    parser.add_argument("--waiting", action="store_true", help="only the loops waiting for a person")
    parser.add_argument(
        "--strict", action="store_true", help="exit 3 when any loop has a parse failure (after printing)"
    )


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def inbox_json(path: str, *, waiting_only: bool = False) -> tuple[dict, int]:
    """THE `scars loops --json` object (the MCP server's ``list_waiting`` too) and the count of
    parse failures (``--strict``): the loops under ``path`` with the gate that answers each (core's
    gate_call), and the open requests of the inbox."""
    states, calls, requests, unreadable, inbox = _gathered(path)
    if waiting_only:
        states = [s for s in states if s.waiting_for_human]
    failures = sum(1 for s in states for f in s.parse_failures if f.severity != "warning")
    payload = {
        "path": os.path.abspath(path),
        "count": len(states),
        "waiting": sum(1 for s in states if s.waiting_for_human),
        "loops": [_with_gate(s.to_dict(), calls[id(s)]) for s in states],
        "requests_root": str(inbox),
        "requests": [v.as_json() for v in requests],
        "planted": sum(1 for v in requests if v.state == "planted"),
        "unreadable_requests": unreadable,
    }
    return payload, failures


def _gathered(path: str):
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.errors import READ_ONLY
    from scars.core.gates import requests as rq
    from scars.core.gates.inbox import gate_call
    from scars.core.loops import discover_loops

    states = discover_loops(path)
    base = Path(path).absolute()
    root = base if base.is_dir() else base.parent
    calls = {id(s): gate_call(s, root) for s in states}
    # The inbox as the app's Loops screen lists it (core's open_requests: planted ones said so);
    # a listing writes nothing, so an interrupted record is left for a writer to complete.
    inbox = rq.requests_root(path)
    requests, unreadable = rq.open_requests(inbox, read_only=READ_ONLY)
    return states, calls, requests, unreadable, inbox


def run(args: argparse.Namespace) -> int:
    if args.json:
        payload, failures = inbox_json(args.path, waiting_only=args.waiting)
        print(json.dumps(payload, indent=2, ensure_ascii=True))
        return 3 if args.strict and failures else 0
    states, calls, requests, unreadable, _inbox = _gathered(args.path)
    if args.waiting:
        states = [s for s in states if s.waiting_for_human]
    waiting = sum(1 for s in states if s.waiting_for_human)
    failures = sum(1 for s in states for f in s.parse_failures if f.severity != "warning")  # --strict
    _print_requests(requests, unreadable)
    _print_report(states, args.path, waiting, calls)
    return 3 if args.strict and failures else 0


def _with_gate(loop: dict, call) -> dict:
    """A loop's JSON with the gate that answers it (core's gate_call) and its command line."""
    loop["gate"] = None if call is None else {"id": call.gate, "command": call.command()}
    return loop


def _print_requests(views: list, unreadable: list[str]) -> None:
    """The open gate requests first, as `scars requests` prints them (planted ones said so)."""
    # lazy: another command's module, loaded when this report is printed
    from scars.tui.cli.commands.requests import describe

    if not views and not unreadable:
        return
    planted = sum(1 for v in views if v.state == "planted")
    head = f"{len(views)} open gate request(s)"
    if planted:
        head += f" — {planted} planted: not posted in this checkout, never answered or applied here"
    print(one_line(head, 300))
    for v in views:
        for line in describe(v):
            print(line)
    for problem in unreadable:
        print(one_line(f"unreadable request: {problem}", 300))
    print()


def _print_report(states, path: str, waiting: int, calls: dict) -> None:
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from rich.text import Text

    # lazy: rich output, loaded when this report is printed
    from scars.core.loops.registry import kind_label
    from scars.core.text import sparkline
    from scars.tui.cli.render.console import make_console

    console = make_console()
    # Piped output is never wrapped (scripts and pagers get whole lines).
    wrap = console.is_terminal
    print_ = (lambda *a: console.print(*a)) if wrap else (lambda *a: console.print(*a, soft_wrap=True))
    if not states:
        print_(Text(f"No loop state found under {one_line(path)}."))
        return
    head = Text()
    head.append(f"{len(states)} loop(s) under {one_line(path)}")
    head.append(
        f" — {waiting} waiting for a person" if waiting else " — none waiting for a person",
        style="bold" if waiting else "",
    )
    print_(head)
    for state in states:
        print_()
        title = Text()
        title.append(
            "WAITING " if state.waiting_for_human else "        ",
            style="bold reverse" if state.waiting_for_human else "",
        )
        title.append(f"{kind_label(state.kind):<16} ", style="bold")
        title.append(one_line(state.name))
        print_(title)
        indent = "    "
        lines = [("path", state.path)]
        lines.append(("status", f"{state.status or 'unknown'} · {state.budget.describe()} · next {state.route or '—'}"))
        met = {True: "met", False: "not met", None: "cannot be evaluated"}[state.stop_rule.met]
        lines.append(("stop rule", met))
        lines.extend(("", f"· {r}") for r in state.stop_rule.reasons)
        if state.trend:
            numbers = " → ".join(_fmt(v) for v in state.trend[-8:])
            more = "… " if len(state.trend) > 8 else ""
            lines.append(("trend", f"{state.trend_label}: {more}{numbers}  {sparkline(state.trend)}"))
        if state.reason:
            lines.append(("why" if state.waiting_for_human else "note", state.reason))
        call = calls.get(id(state))
        if state.waiting_for_human and call is not None:
            lines.append(("answer", call.command()))
        for label, text in lines:
            line = Text(indent)
            line.append(f"{label:<10}", style="dim")
            line.append(one_line(text))
            print_(line)
        for failure in state.parse_failures[:5]:
            line = Text(indent)
            line.append(f"{'warning' if failure.severity == 'warning' else 'failure':<10}", style="bold")
            line.append(one_line(str(failure)))
            print_(line)
        if len(state.parse_failures) > 5:
            print_(
                Text(f"{indent}{'':<10}… and {len(state.parse_failures) - 5} more parse failure(s) (--json lists all)")
            )
