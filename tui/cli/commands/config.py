"""`scars config`: where scars's configuration lives and what it holds now."""

from __future__ import annotations

import argparse
import json
import sys

DESCRIPTION = (
    "Print the files scars reads its configuration from — $XDG_CONFIG_HOME/scars/config.toml (user, theme, "
    "columns), keymap.toml beside it (the app's keys), the feature cache — whether each exists, the values in "
    "force and any problem with config.toml. The environment wins over the file (SCARS_USER over user)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core import settings

    env = settings.current()
    config = settings.config_path(env.config_home)
    keymap = config.with_name("keymap.toml")
    out = {
        "config_file": str(config),
        "config_file_exists": config.is_file(),
        "keymap_file": str(keymap),
        "keymap_file_exists": keymap.is_file(),
        "cache_dir": str(env.cache_dir) if env.cache_enabled else None,
        "values": {
            "user": env.user or env.config_user,
            "user_from": "SCARS_USER" if env.user else ("config.toml" if env.config_user else "git user.name or login"),
            "theme": env.theme or "textual-dark",
            "columns": list(env.columns),
        },
        "problems": list(env.config_problems),
    }
    if args.json:
        sys.stdout.write(json.dumps(out, ensure_ascii=True, indent=2) + "\n")
        return 0
    have = {True: "", False: " (not there: defaults apply)"}
    print(f"config.toml  {config}{have[out['config_file_exists']]}")
    print(f"keymap.toml  {keymap}{have[out['keymap_file_exists']]}")
    print(f"cache        {out['cache_dir'] or 'off (SCARS_NO_CACHE)'}")
    v = out["values"]
    print(
        f"user         {v['user'] or '(from ' + v['user_from'] + ')'}" + (f"  [{v['user_from']}]" if v["user"] else "")
    )
    print(f"theme        {v['theme']}")
    print(f"columns      {', '.join(v['columns'])}")
    for p in out["problems"]:
        print(f"problem      {p}", file=sys.stderr)
    return 0
