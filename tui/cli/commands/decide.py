"""`scars decide ITEM_ID… (--fix | --accept … | --defer … | --blocked OUTCOME | --sign-off NAME)`."""

from __future__ import annotations

import argparse

from scars.core.errors import UsageError
from scars.tui.cli.commands._feature import (
    add_feature_arguments,
    decision_json,
    decision_line,
    emit,
    open_session,
)

DESCRIPTION = (
    "Record a decision for one scar item (or several: one batch, reverted by one `scars undo`). "
    "Item ids are those `scars status --json` prints. An accept needs --signal, --owner and "
    "--rationale, each saying something (empty, placeholder or generic values such as n/a, tbd, "
    'none, <owner>, ok, approved are refused, exit 4; see docs/decisions.md, "Texts that say nothing"). '
    "The decision is written to the feature's journal (.scars/journal.jsonl) and fsynced before "
    "`saved` is printed; iteration-log.yaml is written when the round closes. Made while no round is "
    "open, the decision opens the next round first (as in the app; `scars undo` of all it holds takes "
    "it back) — unless the iteration stopped (its last round's decision was stop or forced_stop): then "
    "it is refused (exit 4) until `scars round start` opens the next round explicitly. "
    "--blocked answers the blocked-fix gate (as `scars gate blocked-fix`: a reason is required; in "
    "auto mode its auto-decisions.md entry is appended). In auto mode the decision that leaves no item "
    "undecided appends the round's triage entry. "
    "Exit 0 saved; 2 usage / unknown path; 4 refused; 5 another writer holds the lock."
)

BLOCKED = {"retry": "retry_with_context", "reclassify": "reclassify_as_defer"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("item_ids", nargs="+", metavar="ITEM_ID", help="item id(s) from `scars status --json`")
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--fix", dest="action", action="store_const", const="fix", help="fix the item this round")
    action.add_argument(
        "--accept",
        dest="action",
        action="store_const",
        const="accept",
        help="accept as a known risk (needs --signal, --owner, --rationale)",
    )
    action.add_argument("--defer", dest="action", action="store_const", const="defer", help="not handled now")
    action.add_argument(
        "--blocked",
        choices=sorted(BLOCKED),
        metavar="{retry,reclassify}",
        help="outcome of a fix the implementer reported blocked: retry with more context, or reclassify as "
        "defer (the blocked-fix gate's answer; needs --reason)",
    )
    action.add_argument("--sign-off", metavar="NAME", help="a second person signs off the item's current decision")
    parser.add_argument(
        "--signal",
        dest="re_review_signal",
        metavar="S",
        help="accept: the observable condition that triggers a re-review",
    )
    parser.add_argument("--owner", metavar="O", help="accept: who watches for the signal")
    parser.add_argument("--rationale", metavar="R", help="why (required for an accept)")
    parser.add_argument(
        "--watch",
        metavar="W",
        help="accept: a machine-checkable watch that reopens the item: 'path-changed: GLOB', "
        "'pattern: REGEX in GLOB' or 'recurs' (see scars watch check)",
    )
    parser.add_argument("--reason", metavar="R", help="defer / blocked: why")
    parser.add_argument("--revisit-when", metavar="W", help="defer: when to look at it again")
    parser.add_argument("--reviewed-by", metavar="NAME", help="a second person who reviewed this decision")
    add_feature_arguments(parser)


def run(args: argparse.Namespace) -> int:
    return _run(args)


def _fields(args: argparse.Namespace) -> dict:
    names = ("re_review_signal", "owner", "rationale", "watch", "reason", "revisit_when", "reviewed_by")
    return {n: getattr(args, n) for n in names if getattr(args, n) is not None}


def _run(args: argparse.Namespace) -> int:

    with open_session(args, via="scars decide") as session:
        was_open = session.current_round()
        if args.sign_off is not None:
            if len(args.item_ids) != 1:
                raise UsageError("--sign-off takes one item id")
            saved = [session.sign_off(args.item_ids[0], args.sign_off)]
        elif args.blocked is not None:
            if len(args.item_ids) != 1:
                raise UsageError("--blocked takes one item id")
            extra = set(_fields(args)) - {"reason"}
            if extra:
                raise UsageError(f"--blocked takes only --reason (not {', '.join(sorted(extra))})")
            # lazy: the gates load their loops' modules; only --blocked records through them
            from scars.core.gates import record_blocked

            # The blocked-fix gate's answer: the same record (and, in auto mode, entry) as `scars gate blocked-fix`.
            record_blocked(session, args.item_ids[0], BLOCKED[args.blocked], args.reason)
            saved = [session.decisions[args.item_ids[0]]]
        else:
            if len(args.item_ids) == 1:
                saved = [session.decide(args.item_ids[0], args.action, **_fields(args))]
            else:
                saved = session.decide_many(args.item_ids, args.action, **_fields(args))
            # lazy: the gates load their loops' modules
            from scars.core.gates import record_triage_decided

            # In auto mode, the decision that completes the round's triage writes its entry now.
            record_triage_decided(session)
        descriptions = {}
        for d in saved:
            try:
                descriptions[d.item_id] = session.feature.item(d.item_id).text
            except KeyError:
                descriptions[d.item_id] = None
        if args.json:
            emit(
                {
                    "ok": True,
                    "saved": [decision_json(d) for d in saved],
                    "feature": str(session.path),
                    "round": session.current_round(),
                    "round_opened": was_open is None and session.current_round() is not None,
                    "journal": ".scars/journal.jsonl",
                }
            )
        else:
            for d in saved:
                print("saved: " + decision_line(d, descriptions.get(d.item_id)))
            if was_open is None and session.current_round() is not None:
                print(f"round {session.current_round()} opened: the first decision of a round opens it")
    return 0
