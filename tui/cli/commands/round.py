"""`scars round start | close | status | flush`: the rounds of a samsara iteration."""

from __future__ import annotations

import argparse

from scars.tui.cli.commands._feature import (
    add_auto_entry_arguments,
    add_feature_arguments,
    add_rule3_arguments,
    emit,
    open_session,
    rule3_from_args,
)

DESCRIPTION = (
    "`start` opens the next round and snapshots signal_lost_before and the budget context "
    "(remaining rounds, stagnation, net rot of the previous round, strategy hint). `close` records "
    "the round: fixes applied, new scar items since the start, signal_lost_after re-read from the "
    "reports, the triage result (the decisions made since the previous round) and the round "
    "decision, then appends the round to iteration-log.yaml without changing any earlier byte; it "
    "records the round decision as `scars gate round-continue` (or `safety-valve`) does, the same "
    "files and, in auto mode, the same auto-decisions.md entries (the round's triage entry when it "
    "has none yet, then the round's). `status` shows the open "
    "round; `flush` writes what the journal holds but iteration-log.yaml and auto-decisions.md lack. "
    "Exit 0 ok; 1 a durable write failed, nothing recorded; 2 usage (no open round, a round already open); "
    "4 refused; 5 lock held or the log changed on disk in a way scars will not merge; 8 the round is in the "
    "journal but a file was not written (disk full: the message names which; `round flush` writes it)."
)

ROUND_DECISIONS = ("continue", "stop", "forced_stop", "interrupted")
TRIGGERS = ("max_rounds", "stagnation", "net_rot", "reviewer_retry_limit")
VALVES = ("max_rounds", "stagnation", "net_rot")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # the CLI's --help formatter (main is loaded: it is what called this)
    from scars.tui.cli.main import Wrapped

    sub = parser.add_subparsers(dest="round_command", metavar="{start,close,status,flush}", required=True)
    p = sub.add_parser(
        "start",
        help="open the next round",
        description="Open the next round: snapshot signal_lost_before and the budget context (remaining rounds, "
        "stagnation, net rot of the previous round, strategy hint). The first decision opens one by itself, "
        "except after a stop (or forced stop): then this is the way to iterate again. "
        "A round past max_rounds is refused (the max-rounds safety valve forces a stop) unless "
        "--override-max-rounds says why.",
    )
    p.add_argument(
        "--override-max-rounds",
        metavar="WHY",
        help="start a round past max_rounds anyway (the max-rounds safety valve forces a stop): why",
    )
    add_feature_arguments(p)
    p = sub.add_parser(
        "close",
        help="close the open round and write it to iteration-log.yaml",
        description="Close the open round: signal_lost_after re-read from the reports, the round's fixes and new "
        "items, its triage and the round decision appended to iteration-log.yaml (no earlier byte changes); "
        "recorded as `scars gate round-continue` records it (in auto mode the same auto-decisions.md entries). "
        "--reason is the round's decision_reason word for word; a forced stop names its safety-valve trigger.",
        epilog="Examples:\n"
        '  scars round close --decision continue --reason "two fix-class items left" --feature changes/2026-07-10_x\n'
        '  scars round close --decision forced_stop --trigger max_rounds --reason "max_rounds reached"',
        formatter_class=Wrapped,
    )
    p.add_argument("--decision", required=True, choices=ROUND_DECISIONS, help="the round decision")
    p.add_argument("--reason", required=True, help="why (a forced stop must name its safety-valve trigger)")
    p.add_argument("--trigger", choices=TRIGGERS, help="forced_stop: the safety valve that fired")
    p.add_argument(
        "--override",
        action="append",
        choices=VALVES,
        default=None,
        metavar="VALVE",
        help="continue past this fired safety valve on purpose (repeatable; --reason says why)",
    )
    add_rule3_arguments(p)
    add_auto_entry_arguments(p)
    add_feature_arguments(p)
    p = sub.add_parser(
        "status",
        help="show the open round and its triage so far",
        description="Show the open round and its triage so far (read-only: no lock).",
    )
    add_feature_arguments(p, user=False)
    p = sub.add_parser(
        "flush",
        help="write rounds (and auto-decisions.md entries) the journal holds that the files lack",
        description="Write every round the journal closed but iteration-log.yaml lacks, and every "
        "auto-decisions.md entry the journal holds that the file lacks (after a crash, a full disk or a "
        "refused merge).",
    )
    add_feature_arguments(p)


def run(args: argparse.Namespace) -> int:
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    cmd = args.round_command
    # Every round command that writes keeps its provenance in what it records, and is refused as a
    # decision is (an agent's session without a terminal at a human-in-the-loop feature: exit 7).
    via = None if cmd == "status" else f"scars round {cmd}"
    with open_session(args, read_only=(cmd == "status"), via=via) as session:
        if cmd == "start":
            info = session.start_round(override_max_rounds=args.override_max_rounds)
            if args.json:
                emit({"ok": True, **info})
            else:
                bc = info["budget_context"]
                print(
                    f"round {info['round']} started: signal_lost {info['signal_lost_before']}; "
                    f"{bc['remaining_rounds_at_start']} round(s) remain after this one of {info['max_rounds']}; "
                    f"stagnation {bc['stagnation_count_at_start']}; net rot of the previous round "
                    f"{bc['net_rot_previous_round']}; strategy hint: {bc['strategy_hint']}"
                )
        elif cmd == "close":
            # lazy: the gates load their loops' modules; only `round close` records through them
            from scars.core.gates import close_round_result

            fields: dict = rule3_from_args(args)
            if args.trigger is not None:
                fields["trigger"] = args.trigger
            result, entry = close_round_result(
                session, args.decision, args.reason, auto_entry=args.auto_entry, override=args.override, **fields
            )
            tr = entry["triage_result"]
            transition = result.extra.get("transition")  # the line auto-decisions.md records too
            if args.json:
                out = {"ok": True, "round": entry, "iteration_log": "iteration-log.yaml"}
                emit({**out, "transition": transition} if transition else out)
            else:
                print(
                    f"round {entry['round']} closed ({entry['decision']}): signal_lost "
                    f"{entry['signal_lost_before']} \u2192 {entry['signal_lost_after']}; "
                    f"{len(tr['fix'])} fix, {len(tr['accept'])} accept, {len(tr['defer'])} defer; "
                    f"{entry['fixes_scar_count']} new scar item(s); written to iteration-log.yaml"
                )
                if transition:
                    print(transition)
        elif cmd == "flush":
            written, entries = session.flush()
            if args.json:
                emit({"ok": True, "written": written, "entries_written": entries})
            else:
                said = [f"wrote round(s) {', '.join(map(str, written))} to iteration-log.yaml"] if written else []
                said += [f"wrote {entries} auto-decisions.md entr{'y' if entries == 1 else 'ies'}"] if entries else []
                print("; ".join(said) if said else "iteration-log.yaml and auto-decisions.md are up to date")
        else:
            rnd = session.open_round()
            triage = session.round_triage()
            counts = {a: sum(1 for d in triage.values() if d.action == a) for a in ("fix", "accept", "defer")}
            undecided = [i.id for i in session.feature.items if i.counted and i.id not in session.decisions]
            if args.json:
                emit(
                    {
                        "ok": True,
                        "open_round": None
                        if rnd is None
                        else {k: rnd.get(k) for k in ("round", "signal_lost_before", "budget_context", "at", "by")},
                        "next_round": session.next_round_number() if rnd is None else None,
                        "triage": {k: v for k, v in counts.items()},
                        "undecided": undecided,
                        "signal_lost": session.feature.signal_lost,
                        "lock_holder": session.lock_holder,
                    }
                )
            else:
                if rnd is None:
                    print(f"no round open; the next is round {session.next_round_number()}")
                else:
                    print(
                        f"round {rnd['round']} open since {rnd.get('at')} (signal_lost at start {rnd.get('signal_lost_before')})"
                    )
                print(
                    f"decided this round: {counts['fix']} fix, {counts['accept']} accept, {counts['defer']} defer; "
                    f"{len(undecided)} item(s) undecided; signal_lost now {session.feature.signal_lost}"
                )
    return 0
