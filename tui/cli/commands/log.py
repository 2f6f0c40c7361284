"""`scars log verify [FEATURE_DIR] [--json]`: check the loop's two logs."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from scars.core.errors import PathNotFound
from scars.core.sanitize import one_line

DESCRIPTION = (
    "`verify` checks auto-decisions.md (well-formed entries, numbering, decision values, generic "
    'answers such as "approved" or "looks good" flagged), iteration-log.yaml (required round '
    "fields, every accept with re-review signal, owner and rationale — legacy expiry_date accepts "
    "are reported as legacy —, every triaged item present in the reports), that the two logs agree, "
    "and that the rounds scars recorded in its journal are in iteration-log.yaml as recorded. "
    "Prints the outcome success / failure / unknown with its reasons; given a repository root, "
    "every feature under changes/ is verified. Exit 0 only on success (of every feature); "
    "1 on failure or unknown; 2 when FEATURE_DIR is not a feature directory."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="log_command", metavar="{verify}", required=True)
    p = sub.add_parser("verify", help="check the logs; exit 0 only on success")
    p.add_argument(
        "feature_dir",
        nargs="?",
        default=None,
        metavar="FEATURE_DIR",
        help="the feature directory, or a repository root holding changes/ to verify every feature "
        "(default: --feature, else the current directory)",
    )
    p.add_argument("--feature", metavar="DIR", default=".", help="same as FEATURE_DIR")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.gates.verify import verify_feature
    from scars.core.samsara.feature import find_features, is_feature_dir

    target = Path(args.feature_dir or args.feature)
    try:
        if target.is_dir() and not is_feature_dir(target) and (target / "changes").is_dir():
            results = [verify_feature(f) for f in find_features(target)]  # a repository: every feature
            repo = True
        else:
            results = [verify_feature(target)]
            repo = False
    except PathNotFound as exc:
        if args.json:
            sys.stdout.write(
                json.dumps({"ok": False, "error": "PathNotFound", "message": str(exc), "exit_code": 2}) + "\n"
            )
        raise
    outcome = _overall([r.outcome for r in results])
    if args.json:
        if repo:
            out = {"root": str(target.absolute()), "outcome": outcome, "features": [r.to_json() for r in results]}
        else:
            out = results[0].to_json()
        sys.stdout.write(json.dumps(out, ensure_ascii=True, indent=2) + "\n")
    else:
        if repo:
            print(f"{len(results)} feature(s): {outcome}" if results else "no feature under changes/: unknown")
        for result in results:
            print(f"{one_line(result.feature, 80)}: {result.outcome}")
            checked = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in result.checked.items())
            if checked:
                print(f"  checked: {checked}")
            for f in result.findings:
                mark = {"failure": "FAIL", "unknown": "????", "note": "note"}[f.severity]
                print(f"  {mark}  {f.where}  {one_line(f.message, 160)}")
    return 0 if outcome == "success" else 1


def _overall(outcomes: list[str]) -> str:
    if not outcomes:
        return "unknown"
    if "failure" in outcomes:
        return "failure"
    if "unknown" in outcomes:
        return "unknown"
    return "success"
