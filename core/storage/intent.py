"""A record of several writes that a kill cannot leave half done: plan, intent file, roll-forward.

A record that writes several files (a gate's answer of loop-spec, ARIS / Mechanist, bkit or the
DAG loop: its auto-decisions.md entry, then the loop's own state) is first *planned*: every write
it will make, in order, as a replayable step that carries its result —

* ``replace``: the target, the bytes it will hold, the sha256 of the bytes it holds before (None:
  the target does not exist yet) and the mode it gets when it is not atomic_write's own rule;
* ``append``: the target, the bytes appended, the size of the target before (the offset of
  the appended bytes) and the sha256 of those first bytes — others may append to the file
  meanwhile (the loop's engine to its logs), so what comes after the offset is not checked;
* ``append_once``: the target, the bytes appended, a marker and how often the file held the
  marker when planned: done when it holds it more often (the repository's one BACKLOG.md, which
  every feature's records append to, each under its own feature's lock, and which loop-spec's
  own ``backlog.sh`` rewrites when it closes an entry: only the line itself says whether it is
  there; an earlier line with the same text, closed since, is not this one);
* ``remove``: the target and the sha256 of the bytes it holds before.

Every target is an absolute path whose directory is resolved (a symlinked feature folder writes
where the record's own write would have gone). The steps are first checked against the files
(nothing is written, and no intent is left, when one changed since the plan); then the plan is
written durably (``durable.atomic_write``) as this user's intent for the record's directory —
under the user's state directory (``settings.state_dir``/intents, keyed by the directory's real
path), never in the repository: an intent says which files to write, so one that came with a
clone (or anyone else's) is never read — then the steps run in order, then the intent is removed.

The next taker of the directory's lock calls :func:`complete_pending` first: a leftover intent
means its writer died mid-record. Each step is *done* when the target already holds its result
(replace: the sha256 of the result; append: the appended bytes after the recorded offset;
append_once: the marker; remove: the target is gone), *applied* when the target still holds what
it held before (an append: its first bytes, whatever was appended after them), and otherwise
refused with :class:`ChangedOnDisk` naming the file (someone changed it since: a change scars did
not make is never overwritten; the intent stays for a person to look at). Completing is
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
import re
import socket
import stat
from pathlib import Path
from typing import Any

from scars.core import settings
from scars.core.errors import ChangedOnDisk, OutsideRepository, ScarsError
from scars.core.records import record
from scars.core.storage import confine
from scars.core.storage.durable import (
    WriteFailed,
    _fsync_dir,
    append_record,
    atomic_write,
    clean_stale_temps,
    ensure_private_dir,
    own_private_dir,
)
from scars.core.storage.lock import STATE_DIR
from scars.core.storage.paths import Unreadable, folder_refusal, read_with_fingerprint

FORMAT_VERSION = 2  # 1: kept in the repository's .scars/ (never read again)
POINTER_NAME = "interrupted.json"  # <directory>/.scars/: a record is under way (who, where its intent is)
OPS = ("replace", "append", "append_once", "remove")
MAX_INTENT_BYTES = 64 * 1024 * 1024  # an intent holds a record's bytes: a feature.json, a few lines


def _real(directory: str | os.PathLike) -> str:
    return os.path.realpath(os.path.abspath(directory))


def intent_path(directory: str | os.PathLike) -> Path:
    """This user's intent file for the record directory ``directory`` (by its real path)."""
    key = hashlib.sha256(os.fsencode(_real(directory))).hexdigest()[:32]
    return settings.current().state_dir / "intents" / f"{key}.json"


def pointer_path(directory: str | os.PathLike) -> Path:
    """The mark a record leaves in its directory while it runs: names who records and where their
    intent is (never the steps), so another user's gate sees an interrupted record it cannot
    complete."""
    return Path(directory) / STATE_DIR / POINTER_NAME


class InterruptedElsewhere(ScarsError):
    """A record interrupted in this directory whose intent is not this user's to complete."""

    exit_code = 5


_SAFE_NAME = re.compile(r"[\w.@+-]{1,64}", re.ASCII)


def _mark(directory: Path, intent: Path, root: Path) -> None:
    who = settings.current().user or settings.current().login or "someone"
    body = {"v": 1, "user": who, "host": socket.gethostname(), "intent": str(intent)}
    ensure_private_dir(pointer_path(directory).parent, root=root)  # the lock's folder: there when the caller holds it
    atomic_write(
        pointer_path(directory), (json.dumps(body, ensure_ascii=True) + "\n").encode("ascii"), mode=0o644, root=root
    )


def _same(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def read_mark(directory: str | os.PathLike) -> dict[str, Any] | None:
    """The mark left in ``directory`` (None: none). A file that is not a small regular file, or not
    a JSON object, reads as ``{}``: a mark of someone unknown."""
    mark = pointer_path(directory)
    try:
        st = os.lstat(mark)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise WriteFailed(f"cannot read {mark}: {exc.strerror or exc}", mark, exc.errno) from None
    try:  # a mark is small; read by the read rule: one in a folder leading out of the repository is none
        raw = (_read(mark, directory) if stat.S_ISREG(st.st_mode) and st.st_size <= 4096 else None) or b""
    except WriteFailed:
        if folder_refusal(mark, directory) is not None:
            return None
        raise
    try:
        doc = json.loads(raw.decode("ascii"))
        if isinstance(doc, dict):
            return doc
    except (ValueError, UnicodeDecodeError, RecursionError):
        pass
    return {}


def mark_is_own(directory: str | os.PathLike, doc: dict[str, Any] | None = None) -> bool:
    """Whether the mark in ``directory`` names this user's own intent for it (the same file, however
    its path is spelled): a record of this user's, whose intent is there or was removed."""
    doc = read_mark(directory) if doc is None else doc
    named = doc.get("intent") if doc else None
    return isinstance(named, str) and os.path.isabs(named) and _same(named, intent_path(directory))


def _unmark(directory: Path) -> None:
    """Remove this user's own mark (never another's: their interrupted record stays seen)."""
    if not mark_is_own(directory):
        return
    with (
        contextlib.suppress(FileNotFoundError),
        confine.placed(pointer_path(directory), directory, create=False) as where,
    ):
        os.unlink(where.name, dir_fd=where.dir_fd)  # by the write rule: never in a folder a link leads to
        _fsync_dir(where.dir_fd)


def _foreign(directory: Path) -> None:
    """No intent of this user for ``directory``: a mark left there is this user's own finished
    record (removed), this user's record from another path of the repository (its intent named),
    or another's interrupted one (refused, said: its intent is theirs)."""
    doc = read_mark(directory)
    if doc is None:
        return
    mark = pointer_path(directory)
    if mark_is_own(directory, doc):  # ours: the intent was removed, then the kill
        _unmark(directory)
        return
    named = doc.get("intent")
    if (
        isinstance(named, str)
        and os.path.isabs(named)
        and _same(os.path.dirname(named), intent_path(directory).parent)
        and os.path.isfile(named)
    ):
        raise InterruptedElsewhere(
            f"a gate's record in {directory} was interrupted, by you when the repository had another path "
            f"(moved or renamed since): its steps not yet written are in {named}. Look at them and at the "
            f"loop's files, then remove both {named} and {mark} to go on"
        )
    user, host = doc.get("user"), doc.get("host")  # text of a file: shown only when it is a plain name
    who = (
        f"{user}@{host}"
        if isinstance(user, str) and isinstance(host, str) and _SAFE_NAME.fullmatch(user) and _SAFE_NAME.fullmatch(host)
        else "another user or another state directory"
    )
    raise InterruptedElsewhere(
        f"a gate's record in {directory} was interrupted ({who}): its intent is that user's own, and "
        "their next gate on this loop completes it; until then the loop's files may lack part of that "
        f"answer. To go on without it, remove {mark}"
    )


def _target(path: str | os.PathLike) -> str:
    """A step's target: absolute, its directory resolved as the OS resolves it (the file itself
    not: a symlink in its place is what the write replaces, as ``atomic_write`` does)."""
    full = os.path.abspath(path)
    return os.path.join(os.path.realpath(os.path.dirname(full)), os.path.basename(full))


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read(path: str | os.PathLike, root: str | os.PathLike | None = None) -> bytes | None:
    """The bytes of ``path`` (None: absent), read by the read rule inside ``root`` (``storage/safe_read``;
    None: a file of the user's own, read where the OS resolves it)."""
    try:
        data, _fp = read_with_fingerprint(path, root=root, what=os.path.basename(path))
    except Unreadable as exc:
        raise WriteFailed(f"cannot read {path} for a gate's record: {exc}", path) from None
    except OSError as exc:
        raise WriteFailed(f"cannot read {path} for a gate's record: {exc.strerror or exc}", path, exc.errno) from None
    return data


class IntentUnreadable(ScarsError):
    """A leftover intent file that is not one scars wrote (edited, or damaged on disk)."""

    exit_code = 5


@record(slots=True)
class Step:
    """One write of a record. ``op`` is one of :data:`OPS`; ``path`` is the absolute target."""

    op: str
    path: str
    data: bytes = b""
    before: str | None = (
        None  # replace / remove: sha256 of the target before (None: absent); append: of its first offset bytes
    )
    offset: int = 0  # append: the target's size before
    mode: int | None = None  # replace: the mode the target gets (None: atomic_write's rule)
    marker: bytes = b""  # append_once: the bytes whose presence says the step is done …
    seen: int = 0  # append_once: … once the file holds them more often than this (as planned)
    root: str | None = None  # the repository the write stays in (storage/confine); None: the user's own file

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op, "path": self.path}
        if self.root is not None:
            out["root"] = self.root
        if self.op != "remove":
            out["data"] = base64.b64encode(self.data).decode("ascii")
            out["sha256"] = _sha(self.data)
        if self.op in ("replace", "remove") or self.before is not None:
            out["before"] = self.before
        if self.op == "append":
            out["offset"] = self.offset
        if self.op == "append_once":
            out["marker"] = base64.b64encode(self.marker).decode("ascii")
            out["seen"] = self.seen
        if self.mode is not None:
            out["mode"] = self.mode
        return out

    @classmethod
    def from_json(cls, raw: Any, default_root: str | None = None) -> Step:
        """A step read back; ``default_root``: the repository of a step written before steps named
        theirs (the intent's directory)."""
        if not isinstance(raw, dict) or raw.get("op") not in OPS:
            raise ValueError("a step is not a replace, append, append_once or remove")
        path = raw.get("path")
        if not isinstance(path, str) or not os.path.isabs(path) or "\x00" in path or path != os.path.normpath(path):
            raise ValueError("a step's target is not an absolute, normal path")
        try:
            os.fsencode(path)
        except UnicodeEncodeError:
            raise ValueError("a step's target is not a file name of this system") from None
        data = b""
        if raw["op"] != "remove":
            data = base64.b64decode(str(raw.get("data", "")), validate=True)
            if _sha(data) != raw.get("sha256"):
                raise ValueError(f"the bytes of the step on {path} do not match their sha256")
        marker = base64.b64decode(str(raw.get("marker", "")), validate=True)
        before = raw.get("before")
        offset = raw.get("offset", 0)
        seen = raw.get("seen", 0)
        mode = raw.get("mode")
        root = raw.get("root", default_root)
        if root is not None and (not isinstance(root, str) or not os.path.isabs(root) or "\x00" in root):
            raise ValueError(f"the step on {path} names no absolute repository")
        if (
            (before is not None and not isinstance(before, str))
            or not isinstance(offset, int)
            or offset < 0
            or not isinstance(seen, int)
            or seen < 0
            or (mode is not None and (not isinstance(mode, int) or not 0 <= mode <= 0o7777))
            or (raw["op"] == "remove" and before is None)
            or (raw["op"] == "append_once" and not marker)
        ):
            raise ValueError(f"the step on {path} is malformed")
        return cls(
            op=raw["op"],
            path=path,
            data=data,
            before=before,
            offset=offset,
            mode=mode,
            marker=marker,
            seen=seen,
            root=root,
        )


def _state(step: Step, now: bytes | None) -> str:
    """``done`` (the target, holding ``now``, holds the step's result), ``todo`` (it holds what it
    held before the step) or ``changed``."""
    if step.op == "append_once":
        return "done" if now is not None and now.count(step.marker) > step.seen else "todo"
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
    if step.op in ("append", "append_once"):
        return (now or b"") + step.data
    return None if step.op == "remove" else step.data


def _apply(step: Step, target: Path) -> None:
    """One step written by the write rule (``storage/confine``) inside the step's repository."""
    root = step.root
    try:
        if step.op != "remove":
            ensure_private_dir(target.parent, root=root, private=False)
        if step.op in ("append", "append_once"):
            append_record(target, step.data, root=root)
        elif step.op == "replace":
            atomic_write(target, step.data, mode=step.mode, root=root)
        elif root is not None:
            with confine.placed(target, root, create=False) as where:
                os.unlink(where.name, dir_fd=where.dir_fd)
                _fsync_dir(where.dir_fd)
        else:
            os.unlink(target)
            _fsync_dir(str(target.parent))
    except (WriteFailed, OutsideRepository):
        raise
    except OSError as exc:
        raise WriteFailed(
            f"cannot write {target} for a gate's record: {exc.strerror or exc}", target, exc.errno
        ) from None


class Plan:
    """The writes of one record, planned under the directory's lock, then committed.

    :meth:`read` gives a file as the steps planned so far leave it, so a record that writes one
    file twice (two backlog lines) plans the second write on the first's result.
    """

    def __init__(self, directory: str | os.PathLike, what: str = "", *, root: str | os.PathLike | None = None):
        self.directory = Path(directory)
        self.what = what
        # The repository every step stays in (storage/confine): the loop's root, or the record's
        # directory itself when there is none around it. A step may name its own (``own=True``: a
        # file the user configured, such as LOOP_SPEC_BACKLOG_FILE: its own folder).
        self.root = os.path.abspath(root if root is not None else directory)
        self.steps: list[Step] = []
        self._view: dict[str, bytes | None] = {}

    def read(self, path: str | os.PathLike, *, own: bool = False) -> bytes | None:
        """The bytes of ``path`` once the planned steps ran (None: absent). A file the plan writes:
        checked by the write rule before a byte of it is read (a link leading out of the repository
        is refused, never opened), then read by the read rule (``own``: a file of the user's own)."""
        root = self._root(path, own)
        key = _target(path)
        if key not in self._view:
            self._view[key] = _read(key, None if own else root)
        return self._view[key]

    def _root(self, path: str | os.PathLike, own: bool) -> str:
        """The repository the write of ``path`` stays in, checked now as the caller spelt the path
        (a refusal names the link met, not the folder it resolved to)."""
        if own:
            return os.path.dirname(_target(path))
        confine.check(path, self.root)
        return self.root

    def replace(self, path: str | os.PathLike, data: bytes, *, mode: int | None = None, own: bool = False) -> None:
        before = self.read(path, own=own)
        key = _target(path)
        self.steps.append(
            Step(
                "replace",
                key,
                bytes(data),
                before=None if before is None else _sha(before),
                mode=mode,
                root=self._root(path, own),
            )
        )
        self._view[key] = bytes(data)

    def append(self, path: str | os.PathLike, data: bytes, *, own: bool = False) -> int:
        """Plan appending ``data``; returns the offset it will start at."""
        if not data:
            raise ValueError("an append needs bytes")
        before = self.read(path, own=own) or b""
        key = _target(path)
        self._view[key] = before + bytes(data)
        last = next((n for n in range(len(self.steps) - 1, -1, -1) if self.steps[n].path == key), None)
        if last is not None and self.steps[last].op == "append":
            # A second append to the same file is one step with the first: the bytes others append
            # between the two runs of a record would else fail the second's check.
            prev = self.steps[last]
            self.steps[last] = Step(
                "append", key, prev.data + bytes(data), before=prev.before, offset=prev.offset, root=prev.root
            )
        else:
            self.steps.append(
                Step("append", key, bytes(data), before=_sha(before), offset=len(before), root=self._root(path, own))
            )
        return len(before)

    def append_once(self, path: str | os.PathLike, data: bytes, marker: bytes, *, own: bool = False) -> None:
        """Plan appending ``data`` to a file others write too (append or rewrite), done once the
        file holds ``marker`` (a part of ``data`` that no other line holds)."""
        if not data or not marker or marker not in data:
            raise ValueError("an append_once needs bytes and a marker they hold")
        key = _target(path)
        before = self.read(path, own=own) or b""
        self._view[key] = before + bytes(data)
        self.steps.append(
            Step(
                "append_once",
                key,
                bytes(data),
                marker=bytes(marker),
                seen=before.count(marker),
                root=self._root(path, own),
            )
        )

    def remove(self, path: str | os.PathLike, *, own: bool = False) -> bool:
        """Plan removing ``path``; False (nothing planned) when it is already absent."""
        before = self.read(path, own=own)
        if before is None:
            return False
        key = _target(path)
        self.steps.append(Step("remove", key, before=_sha(before), root=self._root(path, own)))
        self._view[key] = None
        return True

    def as_json(self) -> dict[str, Any]:
        return {
            "v": FORMAT_VERSION,
            "dir": _real(self.directory),
            "what": self.what,
            "steps": [s.as_json() for s in self.steps],
        }

    def commit(self) -> None:
        """Write the mark and the intent durably, check the steps against the files (a file changed
        since the plan: refused, nothing of the record written, neither left), run the steps in
        order, remove the intent and the mark."""
        if not self.steps:
            return
        # Every target by the write rule before anything is written: a link leading out of the
        # repository refuses the whole record, not its third write.
        _check_places(self.steps)
        path = intent_path(self.directory)
        _state_dir(path.parent)
        # The mark first: a kill before the intent leaves only this user's own mark (cleared by their
        # next gate), never an intent another user's gate cannot see.
        _mark(self.directory, path, Path(self.root))
        body = json.dumps(self.as_json(), ensure_ascii=True, separators=(",", ":")) + "\n"
        try:
            atomic_write(path, body.encode("ascii"), mode=0o600)
            todo = _check(self.steps, path, self.what)  # with the intent written: nothing changed since the plan
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)  # nothing of the record was written: no intent, no mark to leave
            _unmark(self.directory)
            raise
        _run(self.steps, path, self.what, todo, self.directory)


def _check(steps: list[Step], path: Path, what: str, *, left: bool = False) -> list[Step]:
    """The steps still to do, checked on the files as the steps before each leave them; raises
    :class:`ChangedOnDisk` naming the first target that changed (``left``: the intent of a killed
    writer stays at ``path`` for a person)."""
    view: dict[str, bytes | None] = {}
    todo: list[Step] = []
    states: list[str] = []
    for n, step in enumerate(steps, start=1):
        if step.path not in view:
            view[step.path] = _read(step.path, step.root)
        state = _state(step, view[step.path])
        states.append(state)
        if state == "changed":
            record = what or "a gate's record"
            if not left:
                raise ChangedOnDisk(
                    f"{step.path} changed since {record} planned its write ({step.op}): nothing of it was "
                    "written — read the gate again and answer it"
                )
            done = [f"{s.op} {s.path}" for s, st in zip(steps, states, strict=False) if st == "done"]
            rest = [f"{s.op} {s.path}" for s in steps[n - 1 :]]
            raise ChangedOnDisk(
                f"{step.path} changed since {record} planned its write (step {n} of {len(steps)}, {step.op}), "
                "and its writer was killed midway: nothing more of it was written. On disk already: "
                f"{'; '.join(done) or 'nothing'}. Not written: {'; '.join(rest)}. Look at the file; to give up "
                f"the rest of that record (its entry then stands without the rest), remove {path}"
            )
        if state == "todo":
            todo.append(step)
            view[step.path] = _result(step, view[step.path])
    return todo


def _state_dir(directory: Path) -> None:
    """The intents' directory, made when missing: this user's alone (0700; another user's is
    refused: ``durable.own_private_dir``)."""
    try:
        own_private_dir(directory)
    except (WriteFailed, OSError) as exc:
        raise WriteFailed(_state_dir_problem(directory, exc), directory, exc.errno) from None


def _state_dir_problem(where: Path, exc: Exception) -> str:
    return (
        f"cannot use {where} for the intents of gate records ({getattr(exc, 'strerror', None) or exc}): nothing of the record "
        "was written; set SCARS_STATE_DIR (or XDG_STATE_HOME) to a directory of your own"
    )


def _check_places(steps: list[Step]) -> None:
    """Every step's target by the write rule (``storage/confine.check``), before the first write."""
    for step in steps:
        if step.root is not None:
            confine.check(step.path, step.root)


def _run(steps: list[Step], path: Path, what: str, todo: list[Step] | None, directory: Path) -> None:
    """Check every step first (nothing is written when one target changed), then apply the steps
    still to do (``todo``: checked already), in order, and remove the intent, then the mark."""
    for step in _check(steps, path, what, left=True) if todo is None else todo:
        _apply(step, Path(step.path))
    os.unlink(path)
    _fsync_dir(str(path.parent))
    _unmark(directory)


def read_intent(directory: str | os.PathLike) -> tuple[str, list[Step]] | None:
    """The leftover intent of ``directory`` (what it records, its steps), or None when there is none."""
    path = intent_path(directory)
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise WriteFailed(_state_dir_problem(path.parent, exc), path.parent, exc.errno) from None
    if st.st_uid != os.getuid():
        raise IntentUnreadable(
            f"{path} is not yours (another user's intent in your state directory): nothing was written. Remove it"
        )
    if st.st_size > MAX_INTENT_BYTES:
        raise IntentUnreadable(f"{path} is larger than any record scars writes; nothing was written. Remove it")
    raw = _read(path)
    if raw is None:
        return None
    try:
        doc = json.loads(raw.decode("ascii"))
        if not isinstance(doc, dict) or doc.get("v") != FORMAT_VERSION or not isinstance(doc.get("steps"), list):
            raise ValueError("not an intent of this version")
        if doc.get("dir") != _real(directory):
            raise ValueError("it is the intent of another directory")
        steps = [Step.from_json(s, default_root=doc["dir"]) for s in doc["steps"]]
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise IntentUnreadable(
            f"{path} holds an interrupted record that cannot be read ({exc}); nothing was written. "
            "Look at the files it names, then remove it"
        ) from None
    return str(doc.get("what") or ""), steps


def complete_pending(directory: str | os.PathLike) -> str | None:
    """Complete the record a killed writer left for ``directory`` (the caller holds its lock).

    Returns what the completed record was (None: there was none). Raises :class:`ChangedOnDisk`
    naming a target that changed since the plan (nothing of it overwritten; the intent stays)."""
    path = intent_path(directory)
    if path.parent.is_dir():  # a temporary file of an intent write a kill cut short
        clean_stale_temps(path, older_than=0)
    found = read_intent(directory)
    if found is None:
        _foreign(Path(directory))
        return None
    what, steps = found
    _check_places(steps)  # replayed steps obey the write rule too: refused before any is written
    for step in steps:
        if step.op == "replace":  # we hold the lock: no writer of ours is mid-write there
            clean_stale_temps(step.path, older_than=0, root=step.root)
    _run(steps, path, what, None, Path(directory))
    return what or "a gate's record"


def pending(directory: str | os.PathLike) -> bool:
    """Whether a record interrupted in ``directory`` waits for the next taker of its lock (this
    user's intent, or the mark of anyone's record)."""
    with contextlib.suppress(OSError):
        return intent_path(directory).is_file() or pointer_path(directory).is_file()
    return False
