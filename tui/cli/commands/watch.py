"""`scars watch check [PATH] [--json] [--dry-run]`: evaluate the watches of accepted items."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from scars.core.errors import LockHeld

DESCRIPTION = (
    "An accept may carry a watch besides its prose re-review signal: 'path-changed: <glob>', "
    "'pattern: <regex> in <glob>' or 'recurs'. `scars watch check` evaluates every watch of a "
    "feature (or of every feature of a repository) as fired, quiet or unobservable (never quiet "
    "when it cannot be evaluated). A fired watch reopens its item: a journal record and an "
    "auto-decisions.md entry name the cause. --dry-run only reports. Exit 0 when checked, 2 when "
    "PATH is not readable, 5 when another writer holds a feature's lock (nothing reopened there)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="watch_command", metavar="ACTION", required=True)
    check = sub.add_parser(
        "check", help="evaluate every watch; reopen the items whose watch fired", description=DESCRIPTION
    )
    check.add_argument(
        "path",
        nargs="?",
        default=".",
        metavar="PATH",
        help="feature directory or repository root holding changes/ (default: .)",
    )
    check.add_argument("--json", action="store_true", help="print the results as JSON")
    check.add_argument("--dry-run", action="store_true", help="evaluate only; reopen nothing, record nothing")
    check.add_argument(
        "--as", dest="user", metavar="NAME", help="who reopens (default: $SCARS_USER, git user.name, login)"
    )
    check.add_argument("--user", dest="user", metavar="NAME", help=argparse.SUPPRESS)  # the earlier spelling


def run(args: argparse.Namespace) -> int:
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.gates import reopen_fired
    from scars.core.samsara.decisions import current_decisions
    from scars.core.samsara.feature import read_feature
    from scars.core.samsara.watches import check_feature
    from scars.tui.cli.commands._feature import answered_here
    from scars.tui.cli.commands.status import resolve_target

    kind, target, features = resolve_target(args.path)
    dirs = [target] if kind == "feature" else features
    reports: list[dict[str, Any]] = []
    held = None
    for d in dirs:
        f = read_feature(d)
        decisions = current_decisions(d, f)
        results = check_feature(f, decisions)
        outcomes: list[dict] = []
        note = None
        if not args.dry_run and any(r.state == "fired" for r in results):
            try:
                outcomes = reopen_fired(d, results, user=args.user, source=answered_here("flag", "scars watch check"))
            except LockHeld as exc:
                held = exc
                note = f"not reopened: {exc}"
        by_item = {o["item_id"]: o for o in outcomes}
        rows = []
        for r in results:
            row = r.to_dict()
            o = by_item.get(r.item_id)
            if o is not None:
                row["reopened"] = (
                    f"now (auto-decisions entry {o['auto_decision']:03d})"
                    if o["reopened"]
                    else f"already, at {o['already']}"
                )
            elif r.state == "fired":
                row["reopened"] = note or ("not reopened (--dry-run)" if args.dry_run else None)
            rows.append(row)
        reports.append({"feature": f.name, "path": f.path, "watches": rows})
    if args.json:
        out = reports[0] if kind == "feature" else {"root": str(target.absolute()), "features": reports}
        sys.stdout.write(json.dumps(out, ensure_ascii=True, indent=2) + "\n")
    else:
        # lazy: rich output, loaded when this report is printed
        from scars.tui.cli.render.advice import print_watch_results

        for i, rep in enumerate(reports):
            if i:
                print()
            print_watch_results(rep["feature"], rep["watches"])
    if held is not None:
        print(f"scars: {held}", file=sys.stderr)
        return held.exit_code
    return 0
