"""`scars requests [PATH]`: the gate requests of the repository's inbox (``.scars/requests/``):
pending (a loop waits for a person), expired (the loop's files changed since it was posted),
answered (waiting to be recorded), and with ``--all`` applied, refused and withdrawn ones.
`scars requests apply [ID …]` records answered requests no process waits for (the record path
is the gates' one); `scars requests withdraw ID …` withdraws pending ones. Request texts come
from the loops' files: every one is printed inert.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from scars.core.errors import PathNotFound, ScarsError, UsageError
from scars.core.sanitize import one_line

DESCRIPTION = (
    "List the gate requests of the repository's inbox (<root>/.scars/requests/, the root holding "
    "changes/, .samsara/, .git, .loop-spec or .bkit above PATH): who asks, since when, whether a process "
    "still waits, and whether the loop's files changed since (expired). `scars requests apply [ID …]` "
    "records answered requests nobody waits for; `scars requests withdraw ID …` withdraws pending ones. "
    "Answer one with `scars answer ID --answer … --reason …` or in the scars app's Loops inbox. "
    "Exit codes: 0 ok; 2 usage error; 3 an apply found a request not answered yet; 4 an answer refused "
    "(the loop moved on); 5 lock held."
)

ACTIONS = ("apply", "withdraw")


def add_arguments(parser) -> None:
    parser.add_argument(
        "words",
        metavar="PATH | apply ID | withdraw ID",
        nargs="*",
        help="a directory of the repository (default: .), or an action with request ids",
    )
    parser.add_argument("--path", metavar="PATH", default=None, help="apply / withdraw: the repository (default: .)")
    parser.add_argument("--all", action="store_true", help="also list applied, refused and withdrawn requests")
    parser.add_argument(
        "--as", dest="user", metavar="NAME", help="who withdraws (default: $SCARS_USER, git user, login)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.gates import requests as rq

    words = list(args.words)
    if words and words[0] in ACTIONS:
        root = rq.requests_root(args.path or ".")
        if words[0] == "apply":
            return _apply(args, rq, root, words[1:])
        return _withdraw(args, rq, root, words[1:])
    if len(words) > 1:
        raise UsageError(f"one PATH at most (or an action: {', '.join(ACTIONS)}), not {len(words)} words")
    path = words[0] if words else (args.path or ".")
    if not Path(path).exists():
        raise PathNotFound.missing(path)
    root = rq.requests_root(path)
    if args.all:
        found, problems = rq.list_requests(root)
        views = [rq.inspect_request(root, r) for r in found]
    else:
        views, problems = rq.open_requests(root)
    if args.json:
        out: dict[str, Any] = {
            "root": str(root),
            "inbox": str(rq.inbox_dir(root)),
            "requests": [v.as_json() for v in views],
            "problems": problems,
        }
        print(json.dumps(out, ensure_ascii=True, indent=2))
        return 0
    if not views:
        print(one_line(f"No {'' if args.all else 'open '}gate requests in {rq.inbox_dir(root)}.", 300))
    for v in views:
        for line in describe(v):
            print(line)
    for p in problems:
        print(one_line(f"unreadable request: {p}", 300))
    return 0


def describe(view: Any) -> list[str]:
    """Inert lines per request: id, state, gate, path; then core's lines of it, indented."""
    r = view.request
    head = one_line(f"{r.id}  {view.state:<9} {r.gate} ({r.loop_label})  {r.path}", 200)
    return [head] + ["    " + one_line(line, 300) for line in view.lines()]


def _apply(args, rq, root: Path, ids: list[str]) -> int:
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.samsara.decisions import resolve_user

    if not ids:
        found, _ = rq.list_requests(root)
        ids = [r.id for r in found if r.status == "answered" and rq.waiter_of(root, r.id) is None]
    results: list[dict[str, Any]] = []
    failures: list[ScarsError] = []
    for rid in ids:
        try:
            res = rq.apply_request(root, rid, user=resolve_user(args.user))
        except ScarsError as exc:
            failures.append(exc)
            results.append({"request": rid, "error": str(exc), "exit_code": exc.exit_code})
            if not args.json:
                print(one_line(f"{rid}: not recorded: {exc}", 300))
            continue
        results.append({"request": rid, **res.as_json()})
        if not args.json:
            print(
                one_line(
                    f"{rid}: gate {res.gate}: {res.answer} → {res.decision} (by {res.decided_by}); "
                    f"recorded: {', '.join(res.recorded) or 'nothing'}",
                    300,
                )
            )
    if args.json:
        print(json.dumps({"applied": results}, ensure_ascii=True, indent=2))
        args.json_error_printed = True
    elif not ids:
        print("No answered request waits to be recorded.")
    return max((f.exit_code for f in failures), default=0)


def _withdraw(args, rq, root: Path, ids: list[str]) -> int:
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.samsara.decisions import resolve_user

    if not ids:
        raise UsageError("withdraw which request? `scars requests` lists their ids")
    out = []
    for rid in ids:
        req = rq.withdraw_request(root, rid, user=resolve_user(args.user))
        out.append({"request": rid, "status": req.status})
        if not args.json:
            kept = "" if req.status == "withdrawn" else " (it was answered already: its answer is kept)"
            print(one_line(f"{rid}: {req.status}{kept}", 200))
    if args.json:
        print(json.dumps({"withdrawn": out}, ensure_ascii=True, indent=2))
    return 0
