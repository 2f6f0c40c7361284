"""`scars config`: where scars's configuration lives and what it holds now."""

from __future__ import annotations

import argparse
import json
import stat
import sys
from pathlib import Path
from typing import Any

DESCRIPTION = (
    "Print the files scars reads its configuration from — $XDG_CONFIG_HOME/scars/config.toml (user, theme, "
    "columns), keymap.toml beside it (the app's keys), the feature cache — whether each exists, the values in "
    "force and any problem with config.toml. The environment wins over the file (SCARS_USER over user)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def file_kind(path: Path) -> str:
    """What ``path`` is: ``file``, ``missing``, ``directory``, ``fifo``, ``device``, ``socket``,
    ``other`` or ``unreadable`` (stat only: a FIFO is never opened)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return "missing"
    except OSError:
        return "unreadable"
    mode = st.st_mode
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "socket" if stat.S_ISSOCK(mode) else "other"


_KIND_NOTE = {
    "file": "",
    "missing": " (not there: defaults apply)",
    "unreadable": " (cannot be read: defaults apply)",
    "directory": " (a directory, not a file: ignored, defaults apply)",
    "fifo": " (a FIFO, not a file: ignored, defaults apply)",
    "device": " (a device, not a file: ignored, defaults apply)",
    "socket": " (a socket, not a file: ignored, defaults apply)",
    "other": " (not a regular file: ignored, defaults apply)",
}


def run(args: argparse.Namespace) -> int:
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core import settings
    from scars.core.sanitize import one_line

    env = settings.current()
    config = settings.config_path(env.config_home)
    keymap = config.with_name("keymap.toml")
    values: dict[str, Any] = {
        "user": env.user or env.config_user,
        "user_from": "SCARS_USER" if env.user else ("config.toml" if env.config_user else "git user.name or login"),
        "theme": env.theme or settings.DEFAULT_THEME,
        "columns": list(env.columns),
    }
    out: dict[str, Any] = {
        "config_file": str(config),
        "config_file_exists": config.is_file(),
        "config_file_kind": file_kind(config),
        "keymap_file": str(keymap),
        "keymap_file_exists": keymap.is_file(),
        "keymap_file_kind": file_kind(keymap),
        "cache_dir": str(env.cache_dir) if env.cache_enabled else None,
        "values": values,
        "problems": list(env.config_problems),
    }
    if args.json:
        sys.stdout.write(json.dumps(out, ensure_ascii=True, indent=2) + "\n")
        return 0
    print(f"config.toml  {one_line(str(config))}{_KIND_NOTE[out['config_file_kind']]}")
    print(f"keymap.toml  {one_line(str(keymap))}{_KIND_NOTE[out['keymap_file_kind']]}")
    print(f"cache        {out['cache_dir'] or 'off (SCARS_NO_CACHE)'}")
    v = values
    print(
        f"user         {v['user'] or '(from ' + v['user_from'] + ')'}" + (f"  [{v['user_from']}]" if v["user"] else "")
    )
    print(f"theme        {v['theme']}")
    print(f"columns      {', '.join(v['columns'])}")
    for p in out["problems"]:
        print(f"problem      {p}", file=sys.stderr)
    return 0
