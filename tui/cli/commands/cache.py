"""`scars cache`: what the feature cache holds, and cleaning it (the bound, or everything)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

DESCRIPTION = (
    "The feature cache (scars.core.storage.cache) keeps each feature it read, so a reopen with "
    "unchanged files reads nothing. It is bounded: an entry unused for 30 days goes, then the least "
    "recently used while the whole is over 256 MiB; the bound is applied whenever scars writes the "
    "cache, and `scars cache clean` applies it now. `scars cache` alone says where the cache is and "
    "what it holds. Only files of the cache's own names are removed; a cache folder that is not this "
    "user's alone is left untouched."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="cache_command", metavar="{info,clean}")
    p = sub.add_parser("info", help="where the cache is, its entries and size (the default)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p = sub.add_parser(
        "clean",
        help="apply the bound now (entries unused for --older-than days, then the least recently used over the size)",
        description=(
            "Remove the cache entries the bound removes: unused for --older-than days (default 30), then the "
            "least recently used while the rest is over --max-size MiB (default 256). --all removes every "
            "entry. Temporary files that killed writes left (an hour old) go too. A feature whose entry "
            "was removed is read from its files next time, nothing else changes."
        ),
    )
    p.add_argument("--dry-run", action="store_true", help="say what would be removed; remove nothing")
    p.add_argument("--all", action="store_true", help="remove every entry")
    p.add_argument("--older-than", type=_days, metavar="DAYS", help="the age bound in days (default 30)")
    p.add_argument("--max-size", type=_mib, metavar="MIB", help="the size bound in MiB (default 256)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _number(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what} must be a number, not {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{what} must be a finite number ≥ 0, not {text!r}")
    return value


def _days(text: str) -> float:
    return _number(text, "--older-than")


def _mib(text: str) -> float:
    return _number(text, "--max-size")


def size_text(n: int) -> str:
    """Bytes as a person reads them: ``812 B``, ``3.4 KiB``, ``27.0 MiB``."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def run(args: argparse.Namespace) -> int:
    # lazy: loaded when the command runs, not for its --help or completion
    from scars.core import storage
    from scars.core.sanitize import one_line

    if args.cache_command == "clean":
        kwargs: dict[str, Any] = {"everything": args.all, "dry_run": args.dry_run}
        if args.older_than is not None:
            kwargs["max_age"] = args.older_than * 86400.0
        if args.max_size is not None:
            kwargs["max_bytes"] = int(args.max_size * 1024 * 1024)
        res = storage.clean_cache(**kwargs)
        if args.json:
            out = {
                "cache_dir": str(res.directory),
                "dry_run": res.dry_run,
                "refused": res.refused,
                "removed": {"entries": len(res.removed), "bytes": res.removed_bytes},
                "kept": {"entries": len(res.kept), "bytes": res.kept_bytes},
                "temporary_files_removed": len(res.temps),
            }
            sys.stdout.write(json.dumps(out, ensure_ascii=True, indent=2) + "\n")
        else:
            where = one_line(str(res.directory))
            if res.refused:
                print(f"scars: {where}: {res.refused}: nothing removed", file=sys.stderr)
            else:
                verb = "would remove" if res.dry_run else "removed"
                print(
                    f"{where}: {verb} {len(res.removed)} entr{'y' if len(res.removed) == 1 else 'ies'} "
                    f"({size_text(res.removed_bytes)}), kept {len(res.kept)} ({size_text(res.kept_bytes)})"
                    + (f"; {len(res.temps)} temporary file(s) of killed writes removed" if res.temps else "")
                )
        return 1 if res.refused else 0
    found = storage.cache_entries()
    from scars.core import settings

    env = settings.current()
    total = sum(e.size for e in found)
    if getattr(args, "json", False):  # `scars cache` alone has no --json: `scars cache info --json`
        out = {
            "cache_dir": str(storage.cache_dir()),
            "enabled": env.cache_enabled,
            "entries": len(found),
            "bytes": total,
            "bound": {
                "max_age_days": storage.CACHE_MAX_AGE_SECONDS / 86400,
                "max_bytes": storage.CACHE_MAX_TOTAL_BYTES,
            },
        }
        sys.stdout.write(json.dumps(out, ensure_ascii=True, indent=2) + "\n")
        return 0
    state = "" if env.cache_enabled else "  (off: SCARS_NO_CACHE)"
    print(f"cache    {one_line(str(storage.cache_dir()))}{state}")
    print(f"holds    {len(found)} entr{'y' if len(found) == 1 else 'ies'}, {size_text(total)}")
    print(
        f"bound    unused for {storage.CACHE_MAX_AGE_SECONDS / 86400:g} days, then least recently used over "
        f"{size_text(storage.CACHE_MAX_TOTAL_BYTES)} (`scars cache clean` applies it now)"
    )
    return 0
