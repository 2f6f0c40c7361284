"""`scars triage [FEATURE_DIR]`: the full-screen triage app (resumes from the journal)."""

from __future__ import annotations

import argparse
from pathlib import Path

from scars.core.errors import PathNotFound, UsageError
from scars.tui.cli.commands._app import interactive, launch, pick_feature, refuse_without_tty

DESCRIPTION = (
    "Open the full-screen triage app on a samsara feature directory (changes/<date>_<name>/). "
    "Without FEATURE_DIR: the current directory when it is a feature, else the most recent feature "
    "of the repository that still needs triage. Every decision is on disk the moment it is shown; "
    "reopening resumes with the cursor on the first undecided item. Needs an interactive terminal."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "feature_dir", nargs="?", metavar="FEATURE_DIR", help="the feature directory (default: see above)"
    )
    parser.add_argument(
        "--read-only",
        action="store_true",
        help="look without recording anything (also used when another writer holds the lock)",
    )
    parser.add_argument(
        "--pair", metavar="NAME1,NAME2", help="pair triage: decisions record the current driver; p swaps the driver"
    )
    parser.add_argument(
        "--require-second",
        metavar="ACTION",
        action="append",
        choices=["accept"],
        default=[],
        help="keep an accept pending until the other person signs it off (s)",
    )
    parser.add_argument(
        "--as",
        dest="as_user",
        metavar="NAME",
        help="record decisions as NAME (default: $SCARS_USER, git user.name, login)",
    )
    parser.add_argument(
        "--keymap", metavar="FILE", type=Path, help="keymap TOML (default: $XDG_CONFIG_HOME/scars/keymap.toml)"
    )


def parse_pair(value: str | None) -> list[str]:
    if not value:
        return []
    names = [n.strip() for n in value.split(",")]
    if len(names) != 2 or not all(names) or names[0].casefold() == names[1].casefold():
        raise UsageError("--pair takes two different names: --pair NAME1,NAME2")
    return names


def is_feature_dir(path: Path) -> bool:
    return path.is_dir() and (
        (path / "scar-reports").is_dir() or (path / "iteration-log.yaml").is_file() or (path / "index.yaml").is_file()
    )


def resolve_feature(arg: str | None) -> Path:
    """The feature directory to open, from the argument or the current directory."""
    if arg:
        path = Path(arg)
        if not path.exists():
            raise PathNotFound.missing(arg)
        if not path.is_dir():
            raise PathNotFound(f"{arg}: not a directory (give a feature directory: changes/<date>_<name>/)")
        return path.resolve()
    cwd = Path.cwd()
    if is_feature_dir(cwd):
        return cwd
    picked, _ = pick_feature(cwd)
    if picked is None:
        raise PathNotFound(
            "no feature directory here: give FEATURE_DIR, or run inside a repository with "
            "changes/<date>_<name>/ (try `scars demo`)"
        )
    return picked


def run(args: argparse.Namespace) -> int:
    pair = parse_pair(args.pair)
    if args.require_second and not pair:
        raise UsageError("--require-second needs --pair NAME1,NAME2 (the second person signs off)")
    if args.as_user and pair:
        raise UsageError("--as and --pair exclude each other: with --pair the driver is recorded")
    feature_dir = resolve_feature(args.feature_dir)
    if not interactive():
        return refuse_without_tty("triage")
    return launch(
        feature_dir,
        read_only=args.read_only,
        pair=pair,
        require_second=args.require_second,
        user=args.as_user,
        keymap=args.keymap,
    )
