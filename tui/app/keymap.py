"""The user keymap: ``$XDG_CONFIG_HOME/scars/keymap.toml`` rebinds any binding id.

Format — binding id to one key or a comma-separated list of keys::

    "scars.fix" = "x"
    "scars.next_undecided" = "N,tab"
    [keys]                     # the same entries may also sit under a [keys] table
    "scars.quit" = "Q"

``?`` in the app lists every binding id. A broken file never stops the app: the problems
are returned and shown as a warning.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from scars.core import settings
from scars.core.storage import paths
from scars.core.storage.durable import atomic_write


def save_config_value(path: Path, key: str, value: str) -> None:
    """Set ``key = "value"`` in config.toml, keeping every other line (comments included): the
    key's line is replaced, or appended when absent. Written atomically."""
    line = f"{key} = {json.dumps(value)}"
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = ["# scars settings (docs/configuration.md)"]
    pattern = re.compile(rf"^\s*{re.escape(key)}\s*=")
    for n, old in enumerate(lines):
        if pattern.match(old):
            lines[n] = line
            break
    else:
        lines.append(line)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, ("\n".join(lines) + "\n").encode("utf-8"))


def keymap_path() -> Path:
    return settings.current().config_home / "scars" / "keymap.toml"


def load_keymap(path: Path | None = None, known_ids: set[str] | None = None) -> tuple[dict[str, str], list[str]]:
    """(binding id -> keys, problems). A missing file is not a problem."""
    path = path or keymap_path()
    try:
        data = tomllib.loads(paths.read_text(path, what="the keymap"))
    except FileNotFoundError:
        return {}, []
    except paths.Unreadable as exc:
        return {}, [f"{path}: cannot read ({exc})"]
    except tomllib.TOMLDecodeError as exc:
        return {}, [f"{path}: not valid TOML ({exc})"]
    entries = dict(data)
    nested = entries.pop("keys", None)
    if isinstance(nested, dict):
        entries.update(nested)
    keymap: dict[str, str] = {}
    problems: list[str] = []
    for bid, keys in entries.items():
        if isinstance(keys, list) and all(isinstance(k, str) for k in keys):
            keys = ",".join(keys)
        if not isinstance(keys, str) or not keys.strip():
            problems.append(f'{path}: \'{bid}\' must be a key string, e.g. "x" or "x,ctrl+x"')
            continue
        if known_ids is not None and bid not in known_ids:
            problems.append(f"{path}: unknown binding id '{bid}' (press ? to list them)")
            continue
        keymap[bid] = keys.strip()
    return keymap, problems


def _keys(text: str) -> list[str]:
    return [k.strip() for k in text.split(",") if k.strip()]


def refuse_conflicts(keymap: Mapping[str, str], bindings: Iterable[Any]) -> tuple[dict[str, str], list[str]]:
    """(the rebindings kept, the problems) of ``keymap`` over ``bindings`` (Textual bindings
    with an ``id``): a rebinding that gives a key another binding also has — a default one, or
    another rebinding's — is refused by name, so that no key does two things (``"scars.fix" =
    "q"`` would fix on q and leave Ctrl-C the only way out). Entries are judged in file order;
    the defaults they would shadow stay."""
    defaults = {b.id: _keys(b.key) for b in bindings if getattr(b, "id", None)}
    kept: dict[str, str] = {}
    problems: list[str] = []
    for bid, text in keymap.items():
        if bid not in defaults:
            kept[bid] = text
            continue
        taken: dict[str, str] = {}
        for other, keys in defaults.items():
            if other == bid:
                continue
            for k in _keys(kept[other]) if other in kept else keys:
                taken.setdefault(k, other)
        clash = [(k, taken[k]) for k in _keys(text) if k in taken]
        if clash:
            said = ", ".join(f"{k} is {other}'s key" for k, other in clash)
            problems.append(f"'{bid}' = {json.dumps(text)} is refused: {said} (bind that one elsewhere first)")
            continue
        kept[bid] = text
    return kept, problems
