"""Bare `scars`: the one console — open what waits for a person, or explain.

In a repository with ``changes/`` it opens the newest feature (by its dated directory name)
with an undecided item, or the Loops inbox when more than one loop waits. Elsewhere it looks
for every other loop under the current directory (loop-spec, review, bkit, DAG, as `scars
loops` finds them) and opens the Loops inbox when one waits; with none it says what scars is
for and suggests ``scars demo``. Without a terminal it never starts the app: it names what
waits and the command that answers each.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scars.core.sanitize import one_line, shell_word
from scars.tui.cli.commands._app import (
    beside_the_app,
    interactive,
    launch,
    launch_inbox,
    refuse_without_tty,
    waiting_features,
)

HELP = "open the most recent feature that still needs triage"

EXPLAIN = (
    "scars is the human gate of agentic iteration loops: it shows leftover scar items of a samsara "
    "feature (changes/<date>_<name>/), records fix / accept / defer decisions and round decisions "
    "into the loop's own files.\n"
    "No changes/ directory was found here or above, and no other loop waits under this directory.\n"
    "  scars demo              try it on a bundled example feature\n"
    "  scars loops             every iteration loop under this directory\n"
    "  scars triage DIR        open a feature directory\n"
    "  scars --help            every command"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:  # bare `scars` takes no arguments
    return None


def other_waiting_loops(states: list) -> list:
    """The loop states other than samsara features that wait for a person."""
    return [s for s in states if s.waiting_for_human and s.kind != "samsara"]


def read_inbox(where: Path) -> tuple[list, list]:
    """(every loop state under ``where`` — [] when unreadable —, the gate requests still waiting
    for an answer there — [] when unreadable): what bare `scars` decides from and the Loops inbox
    shows. A pending request this checkout did not post (shipped, planted: `scars requests` lists
    it as planted) is never offered for an answer."""
    try:
        # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
        from scars.core.loops import discover_loops

        states = discover_loops(where)
    except Exception:  # noqa: BLE001 - the inbox is a convenience; triage still works without it
        states = []
    try:
        # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
        from scars.core.gates import requests as rq

        inbox = rq.requests_root(where)
        found, _ = rq.list_requests(inbox)
        asks = [r for r in found if r.status == "pending" and rq.not_posted_here(r, inbox) is None]
    except Exception:  # noqa: BLE001 - the inbox is a convenience; `scars requests` explains a bad file
        asks = []
    return states, asks


def _tell_requests(asks: list) -> None:
    if asks:
        print(
            f"Gate requests waiting: {', '.join(one_line(f'{r.id} ({r.gate}, asked by {r.asked_by})') for r in asks)}",
            file=sys.stderr,
        )
        for r in asks:
            print(f"  scars answer {shell_word(r.id)} --answer … --reason …", file=sys.stderr)


def _commands(others: list, root: Path) -> list[str]:
    """`scars gate …` for each waiting loop (core's gate_call: the gate the app opens too)."""
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.gates.inbox import gate_call

    calls = [gate_call(s, root) for s in others]
    return [f"  {c.command()}" for c in calls if c is not None]


def run(args: argparse.Namespace) -> int:
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.storage import resume_after_startup

    try:
        return _run()
    finally:
        resume_after_startup()  # paused for an app that did not start, or never drew (else done)


def _run() -> int:
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.samsara.layout import find_repo_root

    cwd = Path.cwd()
    root = find_repo_root(cwd)
    samsara = root is not None and (root / "changes").is_dir()
    # No samsara feature here: the other loops under this directory are the inbox.
    where = root if samsara and root is not None else cwd
    # Every loop read once (bare `scars` read each feature three times): in a terminal in a child
    # while the app loads, which opens on it, and the modules its states are made of and the Loops
    # inbox, which it opens unless one feature alone waits (issue 31).
    states, asks = (
        beside_the_app(read_inbox, (where,), also=("scars.core.loops", "scars.tui.app.screens.loops"))
        if interactive()
        else read_inbox(where)
    )
    others = other_waiting_loops(states)
    if not samsara:
        if not others and not asks:
            print(EXPLAIN)
            return 0
        if not interactive():
            _tell_requests(asks)
            if others:
                print(
                    f"Waiting for a person: {', '.join(one_line(f'{s.kind} {s.name}') for s in others)}",
                    file=sys.stderr,
                )
            for line in _commands(others, where):
                print(line, file=sys.stderr)
            return refuse_without_tty()
        return launch_inbox(where, states)
    waiting = waiting_features(states, where)
    picked = waiting[0] if waiting else None
    if picked is None and not others and not asks:
        print(
            f"Nothing waits for triage in {where / 'changes'}: every feature's items are decided.\n"
            "  scars status FEATURE    figures of one feature\n"
            "  scars triage FEATURE    open one anyway"
        )
        return 0
    if not interactive():
        _tell_requests(asks)
        names = [one_line(p.name) for p in waiting] + [one_line(f"{s.kind} {s.name}") for s in others]
        if names:
            print(f"Waiting for a person: {', '.join(names)}", file=sys.stderr)
        for line in _commands(others, where):
            print(line, file=sys.stderr)
        return refuse_without_tty()
    if asks or len(waiting) + len(others) > 1 or picked is None:
        return launch_inbox(where, states)
    return launch(picked)
