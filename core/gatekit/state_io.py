"""Reading and writing the loops' own state files, as the gates do.

* loop-spec ``feature.json`` — load, modify, write ``feature.json.tmp``, fsync, copy the old
  file to ``feature.json.bak``, rename (as loop-spec's ``feature-write.sh`` does); key order,
  unknown keys and the file's indentation are kept.
* ARIS / Mechanist ``REVIEW_STATE.json`` and bkit ``pdca-status.json`` — atomic replace, key
  order and unknown keys kept; only what the gate decides is changed.

A file changed on disk between reading and writing raises ``ChangedOnDisk`` (nothing written).
The lock is ``scars.core.storage.lock``'s FeatureLock on the loop's state directory
(``<dir>/.scars/lock``), the same lock samsara features use. Each answer's auto-decisions.md
entry is appended next to the state file (:func:`record_entry`).

A record is one ``scars.core.storage.intent.Plan``: the helpers here compute the bytes of each
write and plan it (the entry first); the gate commits the plan, which writes it as an intent
file before its first write. :func:`state_lock` completes the record a killed writer left.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scars.core.errors import ChangedOnDisk, DecisionRefused, FieldError, LockHeld, PathNotFound, ScarsError, UsageError
from scars.core.formats.auto_decisions import FILE_NAME, entry_bytes
from scars.core.gatekit.catalog import Answer
from scars.core.gatekit.evidence import Evidence, GateResult, build_entry
from scars.core.storage import safe_read
from scars.core.storage.durable import Fingerprint
from scars.core.storage.intent import Plan, complete_pending, pending
from scars.core.storage.lock import FeatureLock


def check_unchanged(path: Path, fp: Fingerprint | None, root: Path | None = None) -> None:
    """Refuse (:class:`ChangedOnDisk`) when ``path`` no longer holds what was read (``fp``), read again
    by the read rule inside ``root`` (``storage/safe_read``)."""
    if fp is None:
        return
    try:
        now = safe_read.fingerprint(path, root=root, what=path.name)
    except safe_read.Unreadable as exc:
        raise ChangedOnDisk(f"{path} can no longer be read since it was read ({exc}); nothing was written") from None
    if now is None:
        raise ChangedOnDisk(f"{path} was removed since it was read; nothing was written")
    if not now.same_content(fp):
        raise ChangedOnDisk(f"{path} changed on disk since it was read; nothing was written — run the gate again")


@contextlib.contextmanager
def state_lock(directory: Path, user: str = "", *, root: Path | None = None) -> Iterator[None]:
    """The writer lock of a loop's state directory; a record a killed writer left there half
    written (its intent file) is completed first (``storage.intent.complete_pending``). ``root``:
    the loop's repository, which the lock and every write stay in (``storage/confine``; None: the
    directory is its own)."""
    with FeatureLock(directory, user=user, root=root):
        complete_pending(directory)
        yield


def complete_interrupted(directory: Path, root: Path | None = None) -> tuple[bool, str] | None:
    """Before a gate's evidence is read: complete the record a killed writer left in ``directory``
    (under its lock, as the next record would). None when there is none; else (completed, what
    the gate's warnings say). The lock held by another process, a file changed since the plan or
    a directory that cannot be written leaves it pending, said in the warning."""
    if not pending(directory):
        return None
    try:
        with FeatureLock(directory, root=root):
            what = complete_pending(directory)
    except LockHeld:
        return False, (
            f"a record interrupted earlier in {directory} waits to be completed; another process holds the "
            "lock there and completes it (the evidence may show the state before it)"
        )
    except ScarsError as exc:
        return False, f"a record interrupted earlier cannot be completed: {exc}"
    if what is None:
        return None
    return True, f"{what} was interrupted (its writer was killed) and has been completed before this was read"


def _detect_indent(text: str) -> int | None:
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" ")
        if stripped and line != stripped:
            return len(line) - len(stripped)
        if stripped:
            return None
    return 2


def load_json_state(path: Path, root: Path) -> tuple[dict, dict]:
    """(data, meta): meta holds the fingerprint, indent and trailing newline for the write.

    Read by the one policy (``storage/safe_read``: a regular file of at most 8 MiB, a symlink only
    inside the project ``root``, UTF-8, JSON without NaN and nested at most 64 levels), so the
    gate reads exactly what ``scars loops`` reads; the bytes read are fingerprinted for the write.
    """
    if path.is_dir():
        raise PathNotFound(f"{path} is a directory, not a state file")
    try:
        raw, fp = safe_read.read_with_fingerprint(
            path, root=root, limit=safe_read.JSON_MAX_BYTES, what="the state file"
        )
        if raw is None:
            raise FileNotFoundError(path)
        text = safe_read.decode(raw)
        data = safe_read.loads_json(text)
    except FileNotFoundError:
        raise PathNotFound.missing(path) from None
    except safe_read.Unreadable as exc:
        raise UsageError(f"{path}: {exc}; fix the file before answering its gate") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path} does not hold a JSON object")
    meta = {
        "fp": fp,
        "root": root,
        "indent": _detect_indent(text),
        "newline": text.endswith("\n"),
        "text": text,
        "original": safe_read.loads_json(text),
    }
    return data, meta


def _non_finite(value: Any, where: str = "") -> str | None:
    """The path of the first number in ``value`` JSON cannot hold (a `1e999` read as infinity), or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return where or "(the document)"
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for k, v in items:
        found = _non_finite(v, f"{where}.{k}" if where else str(k))
        if found is not None:
            return found
    return None


def require_finite(data: Any, path: Path | None = None) -> None:
    """Refuse (DecisionRefused) to write a state holding a number JSON cannot hold: ``json.dumps``
    would write it as ``Infinity`` / ``NaN``, which no JSON reader takes (bkit's node fails on its
    own state file). The one check of every JSON state scars writes; nothing is written."""
    where = _non_finite(data)
    if where is not None:
        name = f"{path.name}: " if path is not None else ""
        raise DecisionRefused(
            f"{name}{where} is not a finite number (a value such as 1e999 reads as infinity, and JSON "
            "cannot hold it): scars does not write it back as Infinity; nothing was written. Put a "
            "finite number there and answer again",
            [FieldError(where, "not a finite number")],
        )


def dump_json_state(data: dict, meta: dict) -> bytes:
    require_finite(data)
    text = json.dumps(data, indent=meta.get("indent", 2), ensure_ascii=False, allow_nan=False)
    return (text + ("\n" if meta.get("newline", True) else "")).encode("utf-8")


def plan_feature_json(plan: Plan, path: Path, data: dict, meta: dict) -> list[Path]:
    """loop-spec's write (``feature-write.sh``): the old file becomes ``feature.json.bak`` (with
    the file's mode), then ``feature.json`` is replaced; both planned, as atomic replaces."""
    check_unchanged(path, meta.get("fp"), meta.get("root"))
    require_finite(data, path)
    bak = path.with_name(path.name + ".bak")
    old = plan.read(path)
    if old is None:  # check_unchanged saw it a moment ago, under the lock
        raise ChangedOnDisk(f"{path} was removed since it was read; nothing was written")
    plan.replace(bak, old, mode=path.stat().st_mode & 0o7777)
    plan.replace(path, dump_json_state(data, meta))
    return [path, bak]


def _patch_top_level(text: str, original: dict, data: dict) -> str | None:
    """Edit only the changed top-level scalar values of ``text`` (every other byte kept).

    Returns None when the change is not of that shape or the result does not read back as
    ``data``; the caller then writes the whole document.
    """
    changed = [k for k in data if k not in original or original[k] != data[k]]
    if any(k not in data for k in original) or list(original) != [k for k in data if k in original]:
        return None
    out = text
    for key in changed:
        value = data[key]
        if isinstance(value, (dict, list)):
            return None
        enc = json.dumps(value, ensure_ascii=False)
        pat = re.compile(
            r"(?m)^(?P<ind>[ \t]*)"
            + re.escape(json.dumps(key, ensure_ascii=False))
            + r'(?P<sep>\s*:\s*)(?P<val>"(?:[^"\\]|\\.)*"|-?\d[\d.eE+-]*|true|false|null)'
        )
        if key in original:
            matches = list(pat.finditer(out))
            if len(matches) != 1 or isinstance(original[key], (dict, list)):
                return None
            m = matches[0]
            out = out[: m.start("val")] + enc + out[m.end("val") :]
        else:
            end = out.rstrip().rfind("}")
            body = out[:end].rstrip()
            if end < 0 or not body.endswith(("}", "]", '"', "e", "l", *"0123456789")):
                return None
            ind = re.search(r'(?m)^([ \t]+)"', out)
            indent = ind.group(1) if ind else "  "
            out = body + ",\n" + indent + json.dumps(key, ensure_ascii=False) + ": " + enc + "\n" + out[end:]
    try:
        if json.loads(out) != data:
            return None
    except ValueError:
        return None
    return out


def json_state_bytes(data: dict, meta: dict) -> bytes:
    """The bytes of a JSON state file holding ``data``: a change of top-level scalars only is a
    text edit keeping every other byte of the file as read; otherwise the whole document."""
    require_finite(data)
    patched = None
    if meta.get("text") is not None and meta.get("original") is not None:
        patched = _patch_top_level(meta["text"], meta["original"], data)
    return patched.encode("utf-8") if patched is not None else dump_json_state(data, meta)


def plan_json_state(plan: Plan, path: Path, data: dict, meta: dict) -> Path:
    """Plan the atomic replace of a JSON state file (ARIS / Mechanist, bkit)."""
    check_unchanged(path, meta.get("fp"), meta.get("root"))
    require_finite(data, path)
    plan.replace(path, json_state_bytes(data, meta))
    return path


def display_path(path: Path, root: Path | None) -> str:
    if root is not None:
        with contextlib.suppress(ValueError):
            return str(Path(os.path.abspath(path)).relative_to(os.path.abspath(root)))
    return path.name


def utc_date() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d")


def utc_now_z() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def record_entry(
    plan: Plan,
    evidence: Evidence,
    ans: Answer,
    reason: str | None,
    *,
    user: str,
    now: str,
    extra_consequences: list[str] | None = None,
) -> tuple[Path, int]:
    """Plan the gate's auto-decisions.md entry next to the loop's state file: the record's first
    write (``recording.proof_file``). Returns the file and the entry's number."""
    path = Path(evidence.context["decisions_dir"]) / FILE_NAME
    entry = build_entry(evidence, ans, reason, user=user, now=now, extra_consequences=extra_consequences)
    number, data = entry_bytes((plan.read(path) or b"").decode("utf-8", "replace"), entry)
    plan.append(path, data)
    plan.what = f"decision-{number:03d} ({evidence.gate.id}: {ans.value})"
    return path, number


def loop_extra(evidence: Evidence) -> dict[str, Any]:
    """The loop a gate stands in, as its reader has it (``loop_state``; a bkit feature's sprint
    as ``sprint_state``): the same budget and stop rule as ``scars loops --json`` shows for it."""
    out: dict[str, Any] = {}
    for key in ("loop_state", "sprint_state"):
        state = evidence.context.get(key)
        if state is not None:
            out[key] = state.brief()
    return out


def gate_result(
    evidence: Evidence,
    ans: Answer,
    reason: str | None,
    user: str,
    recorded: Sequence[Path | str],
    number: int | None,
    *,
    with_evidence: bool = False,
    **extra: Any,
) -> GateResult:
    """What every gate returns once it recorded (``scars gate … --json``): the answer, the
    decision, who, the files written once each in order (a path shown relative to the loop's
    root; a name given as text kept as it is), the loop's brief and the gate's own ``extra``;
    ``with_evidence`` adds the evidence as it was shown (samsara's gates)."""
    root = evidence.context.get("root")
    extra = {**({"evidence": evidence.as_json()} if with_evidence else {}), **loop_extra(evidence), **extra}
    seen: list[str] = []
    for p in recorded:
        d = p if isinstance(p, str) else display_path(p, root)
        if d not in seen:
            seen.append(d)
    return GateResult(
        gate=evidence.gate.id,
        answer=ans.value,
        decision=evidence.decision_for(ans),
        reason=reason,
        decided_by=user,
        recorded=seen,
        entry_number=number,
        extra=extra,
    )
