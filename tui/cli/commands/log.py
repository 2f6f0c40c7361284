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
    "fields, Rule-3 fields in a budget-era log, every accept with re-review signal, owner and "
    "rationale that say something — legacy expiry_date accepts are notes —, every triaged item "
    "named by its description, matched as `scars status` matches it), that the two logs agree "
    "(the choice an entry's answer names against the round's decision), and that the rounds scars "
    "recorded in its journal are in iteration-log.yaml as recorded. Prints the outcome success / "
    "failure / unknown with its reasons. FEATURE_DIR may be a feature directory, a file inside "
    "one (a staged iteration-log.yaml, as the pre-commit hook passes them), several of them, or "
    "a repository root holding changes/ (every feature). Exit 0 success; 1 failure (of any "
    "feature); 3 unknown (nothing failed, something cannot be decided; with --hook: 0 unless "
    "--strict); 2 when a path is not a feature directory."
)

UNKNOWN_EXIT = 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="log_command", metavar="{verify}", required=True)
    p = sub.add_parser("verify", help="check the logs; exit 0 success, 1 failure, 3 unknown")
    p.add_argument(
        "feature_dir",
        nargs="*",
        default=None,
        metavar="FEATURE_DIR",
        help="feature directories, files inside them (e.g. a staged iteration-log.yaml), or a repository "
        "root holding changes/ to verify every feature (default: --feature, else the current directory)",
    )
    p.add_argument("--feature", metavar="DIR", default=".", help="same as FEATURE_DIR")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--hook",
        action="store_true",
        help="pre-commit mode: refuse (exit 1) only on failure; unknown is printed and passes (exit 0)",
    )
    p.add_argument("--strict", action="store_true", help="with --hook: unknown refuses too (exit 3)")


def _targets(paths: list[str]) -> tuple[list[Path], bool]:
    """The feature directories to verify, and whether a repository root was given."""
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.samsara.layout import find_features, is_feature_dir

    if len(paths) == 1:
        target = Path(paths[0])
        if target.is_dir() and not is_feature_dir(target) and (target / "changes").is_dir():
            return find_features(target), True  # a repository: every feature
    out: list[Path] = []
    for raw in paths:
        t = Path(raw)
        if t.is_file() or (not t.exists() and t.parent.is_dir() and is_feature_dir(t.parent)):
            t = t.parent  # a log file inside its feature directory (a staged file, or one being deleted)
            if t.name == "scar-reports":
                t = t.parent
        if t not in out:
            out.append(t)
    return out, False


# How a finding's level is shown: one word each, padded to one width (`--json` says the level).
FINDING_LABEL = {"failure": "FAIL", "unknown": "UNKNOWN", "note": "note"}


def run(args: argparse.Namespace) -> int:
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.gates.verify import verify_feature

    paths = list(args.feature_dir or []) or [args.feature]
    try:
        targets, repo = _targets(paths)
        results = [verify_feature(t) for t in targets]
    except PathNotFound as exc:
        if args.json:
            sys.stdout.write(
                json.dumps({"ok": False, "error": "PathNotFound", "message": str(exc), "exit_code": 2}) + "\n"
            )
        raise
    outcome = _overall([r.outcome for r in results])
    if args.json:
        if repo or len(results) != 1:
            out = {"outcome": outcome, "features": [r.to_json() for r in results]}
            if repo:
                out = {"root": str(Path(paths[0]).absolute()), **out}
        else:
            out = results[0].to_json()
        sys.stdout.write(json.dumps(out, ensure_ascii=True, indent=2) + "\n")
    else:
        if repo or len(results) > 1:
            print(f"{len(results)} feature(s): {outcome}" if results else "no feature under changes/: unknown")
        for result in results:
            print(f"{one_line(result.feature, 80)}: {result.outcome}")
            checked = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in result.checked.items())
            if checked:
                print(f"  checked: {checked}")
            for f in result.findings:
                print(f"  {FINDING_LABEL.get(f.severity, f.severity):<7}  {f.where}  {one_line(f.message, 160)}")
        if outcome == "unknown" and args.hook and not args.strict:
            print("unknown is not a failure: the hook lets the commit through (--strict refuses it)")
    if outcome == "success":
        return 0
    if outcome == "failure":
        return 1
    return 0 if (args.hook and not args.strict) else UNKNOWN_EXIT


def _overall(outcomes: list[str]) -> str:
    if not outcomes:
        return "unknown"
    if "failure" in outcomes:
        return "failure"
    if "unknown" in outcomes:
        return "unknown"
    return "success"
