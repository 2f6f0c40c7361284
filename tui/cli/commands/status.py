"""`scars status [PATH] [--json] [--strict] [--schema]`: what a feature (or a repository) holds."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from scars.core.errors import PathNotFound

if TYPE_CHECKING:
    from scars.core.model import Feature

DESCRIPTION = (
    "Read a samsara feature directory (changes/<feature>/) and print signal_lost, the counts per "
    "category, the three triage groups with their items, parse failures, the iteration-entry "
    "verdict and the rounds so far. On a repository root holding changes/, print one line per "
    "feature. Exit 0 when read (parse failures are listed), 2 when PATH is not readable, 3 with "
    "--strict when any parse failure exists."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path",
        nargs="?",
        default=".",
        metavar="PATH",
        help="feature directory or repository root (default: the current directory)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the summary")
    parser.add_argument("--strict", action="store_true", help="exit 3 when any parse failure exists")
    parser.add_argument(
        "--summary",
        action="store_true",
        help="with --json: an agent-sized object (counts, rounds, decisions counted, the undecided items) "
        "instead of the full one; a feature directory only",
    )
    parser.add_argument(
        "--schema",
        action="store_true",
        help="print the JSON Schema of --json's output (core/schemas/status.schema.json in the package) and exit",
    )
    parser.add_argument(
        "--fields",
        metavar="NAMES",
        help="with --json --summary: comma-separated fields of the full object to add (items, groups …)",
    )


def resolve_target(path: str) -> tuple[str, Path, list[Path]]:
    """("feature", dir, []) or ("repo", root, features). Raises PathNotFound otherwise."""
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.samsara.layout import find_features, is_feature_dir

    p = Path(path)
    if not p.exists():
        raise PathNotFound.missing(path)
    if not p.is_dir():
        raise PathNotFound(f"{path} is not a directory; give a feature directory or a repository root")
    if is_feature_dir(p):
        return "feature", p, []
    if (p / "changes").is_dir():
        return "repo", p, find_features(p)
    raise PathNotFound(
        f"{path} is neither a samsara feature directory (changes/<feature>/ with scar-reports/, "
        "index.yaml …) nor a repository root holding changes/" + _other_loops_hint(path)
    )


def _other_loops_hint(path: str) -> str:
    """The pointer to `scars loops` for a path that is not samsara's: the other loops' state
    (loop-spec, bkit, review loops, DAG reports) is shown there. Said without walking the tree
    (an error path stays instant on a large directory)."""
    # lazy: loaded only on this error path
    from scars.core.sanitize import shell_join

    return "; `scars status` reads samsara features: for loop-spec, bkit, review or DAG loop state, see " + shell_join(
        ["scars", "loops", path]
    )


def run(args: argparse.Namespace) -> int:
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.storage import cache_written_after, gc_paused

    if getattr(args, "schema", False):  # another command's Namespace has none
        # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
        from scars.core.samsara.status import status_schema_text

        sys.stdout.write(status_schema_text())
        return 0
    # The cyclic GC stays off for the whole command: its imports (their collections: ~1-2 ms of a
    # warm `scars status`), the read, the cache writes (re-enabled after the read, its first
    # collection scanned every object the read made: ~0.07 s at 50,000 items).
    with gc_paused():
        kind, target, features = resolve_target(args.path)
        if getattr(args, "summary", False) or getattr(args, "fields", None):  # another command's Namespace has neither
            return _summary_json(args, kind, target)
        # The cache files a cold read stores are written after the output, which is flushed first.
        with cache_written_after():
            code = _run(args, kind, target, features)
            sys.stdout.flush()
    return code


def summary_object(path: str | Path, fields: list[str] | None = None) -> dict:
    """THE agent-sized status of one feature (`scars status --json --summary`, the MCP server's
    ``feature_status``). UsageError on an unknown field; PathNotFound when not a feature."""
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.errors import UsageError
    from scars.core.samsara.feature import read_feature
    from scars.core.samsara.status import feature_summary, feature_to_json

    kind, target, _features = resolve_target(str(path))
    if kind != "feature":
        raise UsageError(f"{path}: a summary is of one feature directory (changes/<feature>/), not a repository")
    try:
        return feature_summary(feature_to_json(read_feature(target)), fields)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _summary_json(args: argparse.Namespace, kind: str, target: Path) -> int:
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.errors import UsageError

    if not args.json:
        raise UsageError("--summary and --fields go with --json")
    fields = [f.strip() for f in (getattr(args, "fields", None) or "").split(",") if f.strip()]
    obj = summary_object(args.path, fields)
    sys.stdout.write(json.dumps(obj, ensure_ascii=True) + "\n")
    return 3 if (args.strict and obj["parse_failure_count"]) else 0


def _run(args: argparse.Namespace, kind: str, target: Path, features: list[Path]) -> int:
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.samsara.layout import cached_feature, fast_tracks_json, find_fast_tracks, repo_root_of
    from scars.core.samsara.status import (
        encode_items,
        feature_json_line,
        feature_to_json,
        json_line_around_patterns,
        keep_encoded_items,
        possible_patterns_json,
    )

    one_line = args.json and not sys.stdout.isatty()
    encoded: list[str] = []  # the items' JSON, encoded while the possible patterns were computed …
    around: tuple[str, str] | None = None  # … and the line but for their JSON (before it, after it)
    summarised = False  # the summary but its possible patterns printed while they were computed
    if kind == "feature":
        where = target.absolute()
        root = repo_root_of(where)
        fp, feature = cached_feature(where, root)  # unchanged files: no reader imported
        if feature is None:
            # lazy: the reader (YAML, the log matcher, the possible patterns) only when the cache has not the feature
            from scars.core.samsara.feature import read_missed
            from scars.tui.cli.progress import Reading, reports_label

            progress = Reading(reports_label(where, root))
            gone: BrokenPipeError | None = None

            def meanwhile(aggregated: Feature) -> None:
                # while the possible patterns are computed beside: what does not show them
                nonlocal encoded, around, summarised, gone
                progress.stop()  # the output starts: the progress line goes
                if one_line:
                    encoded = encode_items(aggregated)
                    around = json_line_around_patterns(aggregated, encoded)
                    return
                summarised = True
                try:
                    _summary(aggregated, possible=False)
                    sys.stdout.flush()
                except BrokenPipeError as exc:  # the reader left: ends the command once the read is done (and cached)
                    gone = exc

            with progress:
                feature = read_missed(where, root, fp, meanwhile if one_line or not args.json else None)
            if gone is not None:
                raise gone
        feats = [feature]
    elif not args.json:
        # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
        from scars.core.samsara.feature import read_summaries
        from scars.tui.cli.progress import Reading

        # lazy: rich output, loaded when this report is printed
        from scars.tui.cli.render.status import print_repo

        with Reading(f"reading {len(features)} features…"):
            summaries = read_summaries(features)  # one line per feature: no possible patterns, no log matches
        print_repo(target, summaries, find_fast_tracks(target))
        return 3 if (args.strict and any(s.parse_failures for s in summaries)) else 0
    else:
        # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
        from scars.core.samsara.feature import read_features
        from scars.tui.cli.progress import Reading

        with Reading(f"reading {len(features)} features…"):
            feats = read_features(features)
    failures = sum(len(f.parse_failures) for f in feats)
    if args.json:
        # Indented for a person at a terminal; one line for a pipe (json's C encoder only
        # runs without indent: at 50,000 items the indented form costs seconds), the items'
        # JSON kept with the cached feature (feature_json_line: the same bytes as json.dumps).
        if not one_line:
            objs = [feature_to_json(f) for f in feats]
            out = objs[0] if kind == "feature" else {"root": str(target.absolute()), "features": objs}
            if kind == "repo" and (fast := fast_tracks_json(target)):
                out["fast_tracks"] = fast
            text = json.dumps(out, ensure_ascii=True, indent=2)
        elif kind == "feature" and around is not None:
            keep_encoded_items(feats[0], encoded)
            # built while the possible patterns were computed (tens of megabytes): written around them, not joined again
            sys.stdout.write(around[0])
            sys.stdout.write(possible_patterns_json(feats[0]))
            text = around[1]
        elif kind == "feature":
            text = feature_json_line(feats[0])
        else:
            root_json = json.dumps(str(target.absolute()), ensure_ascii=True)
            fast = fast_tracks_json(target)
            more = f', "fast_tracks": {json.dumps(fast, ensure_ascii=True)}' if fast else ""
            text = f'{{"root": {root_json}, "features": [{", ".join(feature_json_line(f) for f in feats)}]{more}}}'
        sys.stdout.write(text)  # tens of megabytes at 50,000 items: not copied again for the newline
        sys.stdout.write("\n")
    else:
        _summary(feats[0], rest=not summarised)
    return 3 if (args.strict and failures) else 0


def _summary(feature: Feature, possible: bool = True, rest: bool = True) -> None:
    """The text summary of one feature: all but its possible patterns (``rest``), then them
    (``possible``): a cold read prints the rest while they are computed."""
    # lazy: rich output, loaded when this report is printed
    from scars.tui.cli.render.status import print_feature, print_possible_patterns

    if rest:
        # lazy: the decisions in force (journal and carried) are read only for this summary
        from scars.core.samsara.decisions import current_decisions

        print_feature(feature, decisions=current_decisions(feature.path, feature), possible=possible)
    elif possible:
        print_possible_patterns(feature)
