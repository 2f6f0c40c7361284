"""`scars advise [PATH] [--json] [--token-budget N --tokens-used N]`: the iteration advisor."""

from __future__ import annotations

import argparse
import json
import sys

from scars.core.errors import UsageError

HELP = "advise on the next iteration: budget matrix, fixability, failure modes, convergence trend"
DESCRIPTION = (
    "Apply the dag-iteration-detector's strategy tree, budget decision matrix, fixability "
    "assessment and five failure modes, and the dag-convergence-monitor's trend, to the history "
    "on disk: samsara rounds (quality = 1 - signal_lost / initial signal_lost; triggers = the "
    "open items by category). Every recommendation names the rule that produced it and the "
    "figures it used. The token budget is optional: give both --token-budget and --tokens-used. "
    "The advice is shown beside your choice at the gate, never instead of it."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", nargs="?", default=".", metavar="PATH",
                        help="feature directory, or a repository root holding changes/ (default: .)")
    parser.add_argument("--json", action="store_true", help="print the advice as JSON")
    parser.add_argument("--token-budget", type=_nonneg, metavar="N", help="the token budget of the loop")
    parser.add_argument("--tokens-used", type=_nonneg, metavar="N", help="tokens used so far")


def _nonneg(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if v < 0 or v != v or v == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number ≥ 0: {text!r}")
    return v


def advices_for(path: str, *, token_budget=None, tokens_used=None) -> tuple[str, object, list]:
    """(kind, target, [Advice]) for a feature directory or a repository root."""
    from scars.core.advisor import advise_feature
    from scars.core.decided import current_decisions
    from scars.core.reader import read_feature
    from scars.tui.commands.status import resolve_target

    kind, target, features = resolve_target(path)
    dirs = [target] if kind == "feature" else features
    out = []
    for d in dirs:
        out.append(advise_feature(read_feature(d), current_decisions(d), token_budget=token_budget,
                                  tokens_used=tokens_used))
    return kind, target, out


def run(args: argparse.Namespace) -> int:
    if (args.token_budget is None) != (args.tokens_used is None):
        raise UsageError("give both --token-budget and --tokens-used, or neither")
    if args.token_budget is not None and args.token_budget <= 0:
        raise UsageError("--token-budget must be greater than 0")
    kind, target, advices = advices_for(args.path, token_budget=args.token_budget, tokens_used=args.tokens_used)
    if args.json:
        objs = [a.to_dict() for a in advices]
        out = objs[0] if kind == "feature" and len(objs) == 1 else {"root": str(target.absolute()), "advice": objs}
        sys.stdout.write(json.dumps(out, ensure_ascii=True, indent=2) + "\n")
        return 0
    from scars.tui.intel_report import print_advice

    if not advices:
        print(f"Nothing to advise on under {target}.")
    for i, a in enumerate(advices):
        if i:
            print()
        print_advice(a.to_dict())
    return 0
