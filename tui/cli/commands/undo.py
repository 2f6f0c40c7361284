"""`scars undo [ITEM]`: revert the latest decision (or batch) of the open round, or ITEM's."""

from __future__ import annotations

import argparse

from scars.tui.cli.commands._feature import add_feature_arguments, emit, open_session

DESCRIPTION = (
    "Revert the most recent decision of the current round (a batch made by one `scars decide` "
    "with several items is reverted as a whole). The undo is itself a journal record, so nothing "
    "is erased; decisions of a closed round are in iteration-log.yaml and are not undone. Prints "
    "the items reverted and what each is decided now. With ITEM: the latest decision of this round "
    "that touched ITEM, however many came after it (its batch as a whole). When the round was opened "
    "by a decision and the undo leaves it holding nothing, the round start goes with it (no round is "
    "left open; a round `scars round start` opened stays). Exit 0 (also when there is nothing to undo); "
    "4 when ITEM is no item of the feature; 5 when another writer holds the lock."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("item", nargs="?", metavar="ITEM", help="undo this item's decision (default: the latest)")
    add_feature_arguments(parser)


def run(args: argparse.Namespace) -> int:
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    with open_session(args, via="scars undo") as session:
        was_open = session.current_round()
        reverted = session.undo_item(args.item) if args.item else session.undo()
        now = {i: session.decisions.get(i) for i in reverted}
        # A round a decision opened, left holding nothing: its start went with the undo.
        withdrawn = was_open if was_open is not None and session.current_round() is None else None
        if args.json:
            emit(
                {
                    "ok": True,
                    "reverted": reverted,
                    "now": {i: (d.to_dict() if d else None) for i, d in now.items()},
                    "can_undo_more": session.can_undo(),
                    "round_withdrawn": withdrawn,
                }
            )
        elif not reverted:
            print("nothing to undo in this round")
        else:
            for i in reverted:
                d = now[i]
                print(f"undone: {i}  now {'undecided' if d is None else d.action.upper()}")
            if withdrawn is not None:
                print(f"round {withdrawn} is no longer open: a decision opened it and it holds nothing now")
    return 0
