"""`scars export [FEATURE_DIR] --format sarif|openvex|json [-o FILE]`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from scars.core import __version__
from scars.core.errors import PathNotFound, UsageError

DESCRIPTION = (
    "Export a samsara feature's remaining scar items with their decisions, or every feature of a "
    "repository. SARIF (for GitHub code scanning): every item a result (ruleId = category), one "
    "run per feature with its own category (runAutomationDetails.id scars/<feature>/), each result "
    "at a location of its own; accept → suppression status accepted (kind external, rationale as "
    "justification, owner / re-review signal / round in properties), defer and fix → no "
    "suppression (an open alert). OpenVEX: one statement per item with status_notes. JSON: items, "
    "decisions and parse failures. FEATURE_DIR defaults to the current directory (or the features "
    "of its repository). Reads decisions without taking the lock."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "feature_dir",
        nargs="?",
        default=".",
        metavar="FEATURE_DIR",
        help="the feature directory changes/<date>_<name>/, or a repository: all its features (default: .)",
    )
    parser.add_argument(
        "--format",
        "-f",
        dest="format",
        default="json",
        choices=("sarif", "openvex", "json"),
        help="output format (default: json)",
    )
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE (atomically) instead of stdout")
    parser.add_argument("--author", help="OpenVEX author (default: the resolved scars user)")


def resolve_feature_dirs(path: str) -> list[Path]:
    """The feature directory named by ``path``, or every feature of its repository."""
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.samsara.layout import find_features, find_repo_root, is_feature_dir

    target = Path(path)
    if not target.exists():
        raise PathNotFound(f"{path}: no such file or directory")
    if is_feature_dir(target):
        return [target]
    repo = find_repo_root(target)
    features = find_features(repo) if repo is not None else []
    if not features:
        raise PathNotFound(f"{path}: not a samsara feature directory and no feature found under changes/")
    return features


def load_decisions(feature_dir: Path):
    """(feature, decisions, rounds per item, current round, problems) via a read-only session."""
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.samsara.export import decision_rounds
    from scars.core.samsara.session import FeatureSession

    with FeatureSession.open(feature_dir, read_only=True) as session:
        decisions = dict(session.decisions)
        round_number = session.current_round()
        if round_number is None:
            round_number = session.next_round_number()
        rounds = decision_rounds(list(session.records), decisions)
        problems = list(session.problems)
        return session.feature, decisions, rounds, round_number, problems


def run(args: argparse.Namespace) -> int:
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.samsara import export as ex
    from scars.core.sanitize import visible

    feature_dirs = resolve_feature_dirs(args.feature_dir)
    entries: list[ex.FeatureExport] = []
    problems = []
    for feature_dir in feature_dirs:
        feature, decisions, rounds, round_number, found = load_decisions(feature_dir)
        entries.append(ex.FeatureExport(feature, decisions, rounds, round_number))
        problems += found
    author = args.author
    if args.format == "openvex" and not author:
        # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
        from scars.core.samsara.decisions import resolve_user

        author = resolve_user()
    tool_version = __version__
    if len(entries) == 1:
        (one,) = entries
        document = ex.export(
            one.feature,
            one.decisions,
            args.format,
            round_number=one.round_number,
            author=author,
            tool_version=tool_version,
            item_rounds=one.item_rounds,
        )
    else:
        document = ex.export_many(
            entries, args.format, name=Path(args.feature_dir).absolute().name, tool_version=tool_version, author=author
        )
    data = (json.dumps(document, indent=2, ensure_ascii=True) + "\n").encode("utf-8")
    warnings = [str(p) for p in problems]
    if args.format == "sarif":
        warnings += ex.github_limit_warnings(document)
    for warning in warnings:
        print(visible(f"scars: warning: {warning}"), file=sys.stderr)  # names and text from the repository: inert
    if args.output:
        # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
        from scars.core.storage import atomic_write

        out = Path(args.output)
        if out.exists() and out.is_dir():
            raise UsageError(f"{args.output}: is a directory")
        if not out.parent.exists():
            raise PathNotFound(f"{out.parent}: no such directory for --output")
        atomic_write(out, data)
        items = sum(len(e.feature.items) for e in entries)
        where = f" of {len(entries)} features" if len(entries) > 1 else ""
        print(visible(f"scars: wrote {items} item(s){where} as {args.format} to {args.output}"), file=sys.stderr)
    else:
        sys.stdout.buffer.write(data) if hasattr(sys.stdout, "buffer") else sys.stdout.write(data.decode())
        sys.stdout.flush()
    return 0
