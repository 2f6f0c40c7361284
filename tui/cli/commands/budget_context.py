"""`scars budget-context [FEATURE_DIR] [--json]`: the iteration_budget_context envelope."""

from __future__ import annotations

import argparse
import json
import sys

DESCRIPTION = (
    "Compute, from the files on disk (scar reports, iteration-log.yaml and the decisions journal), "
    "the iteration_budget_context envelope samsara's fix dispatch needs: round, max_rounds, "
    "remaining_rounds, signal_lost_before, stagnation_count, net_rot_previous_round, "
    "reviewer_retry_budget_remaining, expected_signal_reduction and strategy_hint; and the "
    "safety valves and watch-fors with their figures. On a repository root, one envelope per "
    "feature. The rules are in docs/advice.md."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path",
        nargs="?",
        default=".",
        metavar="FEATURE_DIR",
        help="feature directory, or a repository root holding changes/ (default: .)",
    )
    parser.add_argument(
        "--json", action="store_true", help='print {"iteration_budget_context": {...}, "basis": {...}, "valves": [...]}'
    )


def envelope_json(feature, decisions, open_round=None) -> dict:
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.samsara.rounds import budget_basis, budget_context, evaluate_valves

    return {
        "feature": feature.name,
        "path": feature.path,
        "iteration_budget_context": budget_context(feature, decisions, open_round),
        "basis": budget_basis(feature, open_round),
        "valves": [v.to_dict() for v in evaluate_valves(feature, decisions)],
    }


def feature_envelope(feature_dir) -> dict:
    """THE envelope of one feature directory (`scars budget-context`, the MCP server's ``budget_context``)."""
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.samsara.decisions import current_decisions, feature_state
    from scars.core.samsara.feature import read_feature

    f = read_feature(feature_dir)
    return envelope_json(f, current_decisions(feature_dir, f), feature_state(feature_dir).open_round)


def run(args: argparse.Namespace) -> int:
    # lazy: another command's module, loaded when this command runs
    from scars.tui.cli.commands.status import resolve_target

    kind, target, features = resolve_target(args.path)
    dirs = [target] if kind == "feature" else features
    outs = [feature_envelope(d) for d in dirs]
    if args.json:
        out = outs[0] if kind == "feature" else {"root": str(target.absolute()), "features": outs}
        sys.stdout.write(json.dumps(out, ensure_ascii=True, indent=2) + "\n")
        return 0
    # lazy: rich output, loaded when this report is printed
    from scars.tui.cli.render.advice import print_budget

    if kind == "repo" and not outs:
        print(f"No feature directories under {target}/changes.")
    for i, o in enumerate(outs):
        if i:
            print()
        print_budget(o)
    return 0
