"""index.yaml's reversible skip record (samsara's entry gate: ``iteration_skip_record``), read
and written in this one module.

``skip`` writes ``iteration_skip_record: "<one-line record>"`` at the top level of index.yaml;
``enter`` removes it. A text edit of that one line (and its continuation lines), atomic: every
other byte of index.yaml is kept, and the edit is checked by reading the result back.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from scars.core.errors import ChangedOnDisk, UsageError
from scars.core.storage import safe_read
from scars.core.storage.durable import atomic_write

SKIP_KEY = "iteration_skip_record"


def _yaml_quote(text: str) -> str:
    """A YAML double-quoted scalar on one line (JSON escapes are valid YAML escapes)."""
    out = []
    for ch in json.dumps(" ".join(str(text).split()), ensure_ascii=False)[1:-1]:
        if ch.isprintable() or ch == " ":
            out.append(ch)
        else:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


_KEY_LINE = re.compile(rf"^{SKIP_KEY}[ \t]*:")


def read_skip_record(path: Path, root: Path) -> str | None:
    """The skip record index.yaml holds (None: none, or the file cannot be read)."""
    try:
        data = safe_read.load_yaml(path, root=root).value
    except (safe_read.Unreadable, FileNotFoundError):
        return None
    if isinstance(data, dict) and data.get(SKIP_KEY) is not None:
        return str(data.get(SKIP_KEY))
    return None


_TOP_KEY = re.compile(r"^(?![#%\s-]|\.\.\.)[^:\n]+:(\s|$)")


def edit_skip_record(text: str, value: str | None) -> str:
    """``text`` with the top-level ``iteration_skip_record`` set to ``value`` (None: removed).

    Only that key's line (and its continuation lines) changes; every other byte is kept.
    """
    lines = text.splitlines(keepends=True)
    start = next((i for i, ln in enumerate(lines) if _KEY_LINE.match(ln)), None)
    new_line = f"{SKIP_KEY}: {_yaml_quote(value)}\n" if value is not None else ""
    if start is not None:
        end = start + 1
        while end < len(lines) and lines[end][:1] in (" ", "\t") and lines[end].strip():
            end += 1
        return "".join(lines[:start]) + new_line + "".join(lines[end:])
    if value is None:
        return text
    # A new record goes at the top of the mapping (README): before its first top-level key, after
    # any leading comments, directives and document start.
    first = next((i for i, ln in enumerate(lines) if _TOP_KEY.match(ln)), None)
    if first is not None:
        return "".join(lines[:first]) + new_line + "".join(lines[first:])
    if text and not text.endswith("\n"):
        text += "\n"
    return text + new_line


def write_skip_record(index_path: Path, value: str | None, feature_name: str, *, root: Path) -> bool:
    """Set or remove the record in index.yaml; True when the file changed. Checked by a re-read.

    index.yaml is read by the one policy (``storage/safe_read``: size, a symlink only inside
    ``root``, UTF-8, the YAML guards) before a byte of it is edited."""
    try:
        raw, fp = safe_read.read_with_fingerprint(
            index_path, root=root, limit=safe_read.YAML_MAX_BYTES, what="index.yaml"
        )
    except safe_read.Unreadable as exc:
        raise UsageError(f"{index_path}: {exc}; the skip record was not written") from None
    try:
        text = safe_read.decode(raw) if raw is not None else ""
        before = safe_read.loads(text).value if text.strip() else {}
    except safe_read.Unreadable as exc:
        raise UsageError(f"{index_path} is not usable YAML ({exc}); the skip record was not written") from None
    if raw is None:
        if value is None:
            return False
        text = f"feature: {_yaml_quote(feature_name)}\n"
        before = safe_read.loads(text).value
    if before is None:
        before = {}
    if not isinstance(before, dict):
        raise UsageError(f"{index_path} is not a mapping; the skip record was not written")
    new = edit_skip_record(text, value)
    if new == text and raw is not None:
        return False
    after = safe_read.loads(new).value
    expected = {k: v for k, v in before.items() if k != SKIP_KEY}
    got = {k: v for k, v in (after or {}).items() if k != SKIP_KEY}
    if got != expected or (after or {}).get(SKIP_KEY) != (" ".join(value.split()) if value is not None else None):
        raise UsageError(f"{index_path}: the skip record could not be edited safely; nothing was written")
    if raw is not None:
        try:
            _again, fp2 = safe_read.read_with_fingerprint(index_path, root=root, what="index.yaml")
        except safe_read.Unreadable:
            fp2 = None
        if fp2 is None or not fp2.same_content(fp):
            raise ChangedOnDisk(f"{index_path} changed on disk while the gate wrote it; nothing was written")
    atomic_write(index_path, new.encode("utf-8"), root=root)
    return True
