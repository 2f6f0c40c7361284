"""`scars answer ID --answer VALUE [--reason TEXT]`: answer a gate request from a plain shell.

The same validation as `scars gate` (the gate gathered again from the loop's files, its answers,
its reason rule); refused when the loop's files changed since the request was posted, or when
someone answered it first (naming who and what). The waiting loop records the answer; with
nobody waiting, `scars requests apply ID` (or `--apply` here) does.
"""

from __future__ import annotations

import argparse
import json

from scars.core.sanitize import one_line

DESCRIPTION = (
    "Answer a pending gate request of the repository's inbox (`scars requests` lists them). The answer is "
    "checked like one given to `scars gate` and written into the request with who answered; the process "
    "waiting on it records it in the loop's files and goes on. Exit codes: 0 answered; 2 usage error or no "
    "such request; 4 answer refused (invalid, no reason where one is needed, answered already, or the "
    "loop's files changed since the request was posted); 5 lock held."
)


def add_arguments(parser) -> None:
    parser.add_argument("request", metavar="ID", help="the request id (scars requests)")
    parser.add_argument("--answer", metavar="VALUE", required=True, help="the answer (its value or its letter)")
    parser.add_argument("--reason", metavar="TEXT", help="the question-specific reason recorded with the answer")
    parser.add_argument(
        "--value",
        metavar="N",
        help="sprint-pause: the new budget (tokens) of increase-budget, or the new phase timeout (hours) of extend-timeout",
    )
    parser.add_argument("--path", metavar="PATH", default=".", help="a directory of the repository (default: .)")
    parser.add_argument(
        "--apply",
        action="store_true",
        help="also record it now when no process waits for it (else the waiter or `scars requests apply` does)",
    )
    parser.add_argument("--as", dest="user", metavar="NAME", help="who answers (default: $SCARS_USER, git user, login)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.gates import requests as rq
    from scars.core.samsara.decisions import resolve_user
    from scars.tui.cli.commands._feature import answered_here

    root = rq.requests_root(args.path)
    user = resolve_user(args.user)
    req = rq.answer_request(
        root,
        args.request,
        args.answer,
        args.reason,
        user=user,
        source=answered_here("request-answer", "scars answer"),
        value=args.value,
    )
    out: dict = {"request": req.id, "status": req.status, "answer": req.answer}
    waiter = rq.waiter_of(root, req.id)
    applied = None
    if args.apply and waiter is None:
        applied = rq.apply_request(root, req.id, user=user)
        out["status"] = "applied"
        out["result"] = applied.as_json()
    out["waiting"] = waiter
    if args.json:
        print(json.dumps(out, ensure_ascii=True, indent=2))
        return 0
    a = req.answer or {}
    print(one_line(f"{req.id}: answered {a.get('answer')} by {a.get('by')}", 200))
    if applied is not None:
        print(one_line(f"recorded: {', '.join(applied.recorded) or 'nothing'}", 300))
    elif waiter is not None:
        print(one_line(f"the waiting process (pid {waiter.get('pid', '?')}) records it and goes on", 200))
    else:
        print(
            one_line(
                f"nobody waits for it now: the next `scars gate … --wait --request {req.id}` or "
                f"`scars requests apply {req.id}` records it",
                300,
            )
        )
    return 0
