"""`scars advise [PATH] [--json] [--token-budget N --tokens-used N]`: the iteration advisor."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from scars.core.errors import PathNotFound, UsageError
from scars.core.sanitize import one_line

DESCRIPTION = (
    "Apply the dag-iteration-detector's strategy tree, budget decision matrix, fixability "
    "assessment and five failure modes, and the dag-convergence-monitor's trend, to the history "
    "on disk: samsara rounds (quality = 1 - signal_lost / initial signal_lost; triggers = the "
    "open items by category) and the other loops found under PATH (loop-spec judge scores, "
    "ARIS/Mechanist review scores, bkit match rates, DAG convergence reports; a DAG iteration decision "
    "through its triggers and budget). Every recommendation names the rule that produced it and the "
    "figures it used. The token budget is optional: give both --token-budget and --tokens-used. "
    "The advice is shown beside your choice at the gate, never instead of it."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path",
        nargs="?",
        default=".",
        metavar="PATH",
        help="a feature directory, a loop state file, or a directory to search for loops (default: .)",
    )
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


def advices_for(path: str, *, token_budget=None, tokens_used=None) -> tuple[str, Path, list, list]:
    """(kind, target, [Advice], [skipped loops]) for a feature directory, or every loop under a
    directory (samsara features through their rounds, the other loops through their scores)."""
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.advice.feature import advise_feature
    from scars.core.loops.advise import advise_loop_state
    from scars.core.samsara.decisions import current_decisions
    from scars.core.samsara.feature import is_feature_dir, read_feature

    p = Path(path)
    if not p.exists():
        raise PathNotFound.missing(path)
    if p.is_dir() and is_feature_dir(p):
        f = read_feature(p)
        return (
            "feature",
            p,
            [advise_feature(f, current_decisions(p, f), token_budget=token_budget, tokens_used=tokens_used)],
            [],
        )
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.loops.discover import discover_loops

    root = p if p.is_dir() else p.parent
    advices, skipped = [], []
    for state in discover_loops(p):
        if state.kind == "samsara":
            d = (root / state.path) if state.path not in ("", ".") else root
            if is_feature_dir(d):
                feature = read_feature(d)
                advices.append(
                    advise_feature(
                        feature, current_decisions(d, feature), token_budget=token_budget, tokens_used=tokens_used
                    )
                )
                continue
        a = advise_loop_state(state, token_budget=token_budget, tokens_used=tokens_used)
        if a is None:
            skipped.append(
                {
                    "kind": state.kind,
                    "name": state.name,
                    "path": state.path,
                    "reason": "no measured quality history yet",
                }
            )
        else:
            advices.append(a)
    return "tree", p, advices, skipped


def run(args: argparse.Namespace) -> int:
    if (args.token_budget is None) != (args.tokens_used is None):
        raise UsageError("give both --token-budget and --tokens-used, or neither")
    if args.token_budget is not None and args.token_budget <= 0:
        raise UsageError("--token-budget must be greater than 0")
    kind, target, advices, skipped = advices_for(
        args.path, token_budget=args.token_budget, tokens_used=args.tokens_used
    )
    if args.json:
        objs = [a.to_dict() for a in advices]
        out = objs[0] if kind == "feature" else {"root": str(target.absolute()), "advice": objs, "skipped": skipped}
        sys.stdout.write(json.dumps(out, ensure_ascii=True, indent=2) + "\n")
        return 0
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.tui.cli.render.advice import print_advice

    if not advices and not skipped:
        print(f"No iteration loop found under {one_line(str(target), 200)}.")
    for i, a in enumerate(advices):
        if i:
            print()
        print_advice(a.to_dict())
    for s in skipped:
        print(one_line(f"(no advice for {s['kind']} {s['name']}: {s['reason']})", 200))
    return 0
