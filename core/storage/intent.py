"""A record of several writes that a kill cannot leave half done: plan, intent file, roll-forward.

A record that writes several files (a gate's answer of loop-spec, ARIS / Mechanist, bkit or the
DAG loop: its auto-decisions.md entry, then the loop's own state) is first *planned*: every write
it will make, in order, as a replayable step that carries its result —

* ``replace``: the target, the bytes it will hold, the sha256 of the bytes it holds before (None:
  the target does not exist yet) and the mode it gets when it is not atomic_write's own rule;
* ``append``: the target, the bytes appended, the size of the target before (the offset of
  the appended bytes) and the sha256 of those first bytes — an append-only file may be appended
  to by other writers meanwhile (the repository's one BACKLOG.md, written by the records of every
  feature, each under its own feature's lock), so what comes after the offset is not checked;
* ``remove``: the target and the sha256 of the bytes it holds before.

The plan is written durably (``durable.atomic_write``: temporary file, fsync, rename, directory
fsync) as ``<directory>/.scars/intent.json`` — where the directory's lock lives, a file no loop's
engine reads — then the steps run in order, then the intent file is removed (directory fsynced).

The next taker of the directory's lock calls :func:`complete_pending` first: a leftover intent
means its writer died mid-record. Each step is *done* when the target already holds its result
(replace: the sha256 of the result; append: the appended bytes after the recorded offset;
remove: the target is gone), *applied* when the target still holds what it held before (an
append: its first bytes, whatever others appended after them), and otherwise
refused with :class:`ChangedOnDisk` naming the file (someone changed it since: a change scars
did not make is never overwritten; the intent stays for a person to look at). Completing is
idempotent: a kill during the completion leaves the same intent, completed by the next taker.

The caller holds the directory's lock (``storage.lock.FeatureLock``) from planning to the end of
:meth:`Plan.commit`; the plan reads the files under that lock.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scars.core.errors import ChangedOnDisk, ScarsError
from scars.core.storage.durable import _fsync_dir, append_record, atomic_write, clean_stale_temps, ensure_private_dir
from scars.core.storage.lock import STATE_DIR

INTENT_NAME = "intent.json"
FORMAT_VERSION = 1


def intent_path(directory: str | os.PathLike) -> Path:
    return Path(directory) / STATE_DIR / INTENT_NAME


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


class IntentUnreadable(ScarsError):
    """A leftover intent file that is not one scars wrote (edited, or damaged on disk)."""

    exit_code = 5


@dataclass(frozen=True, slots=True)
class Step:
    """One write of a record. ``op`` is ``replace``, ``append`` or ``remove``; ``path`` is the
    target relative to the record's directory (it may lead out of it: ``../../BACKLOG.md``)."""

    op: str
    path: str
    data: bytes = b""
    before: str | None = None  # replace / remove: sha256 of the target before (None: absent); append: of its first offset bytes
    offset: int = 0  # append: the target's size before
    mode: int | None = None  # replace: the mode the target gets (None: atomic_write's rule)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op, "path": self.path}
        if self.op != "remove":
            out["data"] = base64.b64encode(self.data).decode("ascii")
            out["sha256"] = _sha(self.data)
        if self.op in ("replace", "remove") or self.before is not None:
            out["before"] = self.before
        if self.op == "append":
            out["offset"] = self.offset
        if self.mode is not None:
            out["mode"] = self.mode
        return out

    @classmethod
    def from_json(cls, raw: Any) -> Step:
        if not isinstance(raw, dict) or raw.get("op") not in ("replace", "append", "remove"):
            raise ValueError("a step is not a replace, append or remove")
        path = raw.get("path")
        if not isinstance(path, str) or not path:
            raise ValueError("a step has no path")
        data = b""
        if raw["op"] != "remove":
            data = base64.b64decode(str(raw.get("data", "")), validate=True)
            if _sha(data) != raw.get("sha256"):
                raise ValueError(f"the bytes of the step on {path} do not match their sha256")
        before = raw.get("before")
        offset = raw.get("offset", 0)
        mode = raw.get("mode")
        if (
            (before is not None and not isinstance(before, str))
            or not isinstance(offset, int)
            or offset < 0
            or (mode is not None and not isinstance(mode, int))
            or (raw["op"] == "remove" and before is None)
        ):
            raise ValueError(f"the step on {path} is malformed")
        return cls(op=raw["op"], path=path, data=data, before=before, offset=offset, mode=mode)


def _state(step: Step, now: bytes | None) -> str:
    """``done`` (the target, holding ``now``, holds the step's result), ``todo`` (it holds what it
    held before the step) or ``changed``."""
    if step.op == "append":
        if now is None:
            return "todo" if step.offset == 0 else "changed"
        if len(now) < step.offset or (step.before is not None and _sha(now[: step.offset]) != step.before):
            return "changed"  # cut back or edited before the offset
        tail = now[step.offset :]
        if step.data in tail:  # after whatever others appended first
            return "done"
        if tail and step.data.startswith(tail):  # a torn write of this very append: a person looks
            return "changed"
        return "todo"
    if step.op == "remove":
        if now is None:
            return "done"
        return "todo" if _sha(now) == step.before else "changed"
    if now is not None and _sha(now) == _sha(step.data):
        return "done"
    if now is None:
        return "todo" if step.before is None else "changed"
    return "todo" if _sha(now) == step.before else "changed"


def _result(step: Step, now: bytes | None) -> bytes | None:
    if step.op == "append":
        return (now or b"") + step.data
    return None if step.op == "remove" else step.data


def _apply(step: Step, target: Path) -> None:
    if step.op != "remove":
        ensure_private_dir(target.parent)
    if step.op == "append":
        append_record(target, step.data)
    elif step.op == "replace":
        atomic_write(target, step.data, mode=step.mode)
    else:
        os.unlink(target)
        _fsync_dir(str(target.parent))


class Plan:
    """The writes of one record, planned under the directory's lock, then committed.

    :meth:`read` gives a file as the steps planned so far leave it, so a record that writes one
    file twice (two backlog lines) plans the second write on the first's result.
    """

    def __init__(self, directory: str | os.PathLike, what: str = ""):
        self.directory = Path(directory)
        self.what = what
        self.steps: list[Step] = []
        self._view: dict[str, bytes | None] = {}

    def _key(self, path: str | os.PathLike) -> str:
        return os.path.relpath(os.path.abspath(path), os.path.abspath(self.directory))

    def read(self, path: str | os.PathLike) -> bytes | None:
        """The bytes of ``path`` once the planned steps ran (None: absent)."""
        key = self._key(path)
        if key not in self._view:
            self._view[key] = _read(Path(path))
        return self._view[key]

    def replace(self, path: str | os.PathLike, data: bytes, *, mode: int | None = None) -> None:
        before = self.read(path)
        key = self._key(path)
        self.steps.append(Step("replace", key, bytes(data), before=None if before is None else _sha(before), mode=mode))
        self._view[key] = bytes(data)

    def append(self, path: str | os.PathLike, data: bytes) -> int:
        """Plan appending ``data``; returns the offset it will start at."""
        if not data:
            raise ValueError("an append needs bytes")
        before = self.read(path) or b""
        key = self._key(path)
        self._view[key] = before + bytes(data)
        last = next((n for n in range(len(self.steps) - 1, -1, -1) if self.steps[n].path == key), None)
        if last is not None and self.steps[last].op == "append":
            # A second append to the same file is one step with the first: the bytes others append
            # between the two runs of a record (a shared log) would else fail the second's check.
            prev = self.steps[last]
            self.steps[last] = Step("append", key, prev.data + bytes(data), before=prev.before, offset=prev.offset)
        else:
            self.steps.append(Step("append", key, bytes(data), before=_sha(before), offset=len(before)))
        return len(before)

    def remove(self, path: str | os.PathLike) -> bool:
        """Plan removing ``path``; False (nothing planned) when it is already absent."""
        before = self.read(path)
        if before is None:
            return False
        key = self._key(path)
        self.steps.append(Step("remove", key, before=_sha(before)))
        self._view[key] = None
        return True

    def as_json(self) -> dict[str, Any]:
        return {"v": FORMAT_VERSION, "what": self.what, "steps": [s.as_json() for s in self.steps]}

    def commit(self) -> None:
        """Write the intent durably, run the steps in order, remove the intent."""
        if not self.steps:
            return
        path = intent_path(self.directory)
        ensure_private_dir(path.parent)
        body = json.dumps(self.as_json(), ensure_ascii=True, separators=(",", ":")) + "\n"
        atomic_write(path, body.encode("ascii"))
        _run(self.directory, self.steps, path, self.what)


def _run(directory: Path, steps: list[Step], path: Path, what: str) -> None:
    """Check every step first, on the files as the steps before it leave them (nothing is written
    when one target changed), then apply the steps still to do, in order, and remove the intent."""
    view: dict[str, bytes | None] = {}
    todo: list[Step] = []
    for n, step in enumerate(steps, start=1):
        key = os.path.normpath(step.path)
        if key not in view:
            view[key] = _read(directory / key)
        state = _state(step, view[key])
        if state == "changed":
            raise ChangedOnDisk(
                f"{os.path.normpath(directory / key)} changed since {what or 'a record'} planned its write "
                f"(step {n} of {len(steps)}, {step.op}): nothing more of that record was written and no file "
                f"was touched. Look at the file, then remove {path} to give up the rest of that record"
            )
        if state == "todo":
            todo.append(step)
            view[key] = _result(step, view[key])
    for step in todo:
        _apply(step, directory / step.path)
    os.unlink(path)
    _fsync_dir(str(path.parent))


def read_intent(directory: str | os.PathLike) -> tuple[str, list[Step]] | None:
    """The leftover intent of ``directory`` (what it records, its steps), or None when there is none."""
    path = intent_path(directory)
    raw = _read(path)
    if raw is None:
        return None
    try:
        doc = json.loads(raw.decode("ascii"))
        if not isinstance(doc, dict) or doc.get("v") != FORMAT_VERSION or not isinstance(doc.get("steps"), list):
            raise ValueError("not an intent of this version")
        steps = [Step.from_json(s) for s in doc["steps"]]
    except (ValueError, UnicodeDecodeError) as exc:
        raise IntentUnreadable(
            f"{path} holds an interrupted record that cannot be read ({exc}); nothing was written. "
            "Look at the files it names, then remove it"
        ) from None
    return str(doc.get("what") or ""), steps


def complete_pending(directory: str | os.PathLike) -> str | None:
    """Complete the record a killed writer left in ``directory`` (the caller holds its lock).

    Returns what the completed record was (None: there was none). Raises :class:`ChangedOnDisk`
    naming a target that changed since the plan (nothing of it overwritten; the intent stays)."""
    path = intent_path(directory)
    if path.parent.is_dir():  # we hold the lock: no writer of ours is mid-write there
        clean_stale_temps(path, older_than=0)
    found = read_intent(directory)
    if found is None:
        return None
    what, steps = found
    for step in steps:
        if step.op == "replace":
            clean_stale_temps(Path(directory) / step.path, older_than=0)
    _run(Path(directory), steps, path, what)
    return what or "an interrupted record"


def pending(directory: str | os.PathLike) -> bool:
    """Whether a record interrupted in ``directory`` waits for the next taker of its lock."""
    with contextlib.suppress(OSError):
        return intent_path(directory).is_file()
    return False
