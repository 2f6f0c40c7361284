"""Gate requests: a gate asked where no person is (a loop inside a coding agent, no terminal)
waits in the repository's one inbox until a person answers it, in the scars app or a shell.

The inbox is ``<root>/.scars/requests/`` (:func:`requests_root` finds the root): per request
``<id>.json`` (replaced atomically at every change), ``<id>.lock`` (a flock: one process changes
a request at a time) and ``<id>.wait`` (a flock the waiting process holds while it waits, so
anyone can see whether a process still waits). Nothing must be started first: no daemon, no
socket; the waiter polls one ``stat``.

A request's life: ``pending`` → ``answered`` (a person's answer, checked as the gate checks it,
with who answered) → ``applied`` (recorded in the loop's files through the gates' one record
path, :func:`scars.core.gates.recording.record`, by the waiter or `scars requests apply`) or
``refused`` (the loop's files moved on since the answer: never applied to another situation);
``pending`` → ``withdrawn``. Exactly once: answering and applying happen under the request's
lock; a second answerer is told who answered what; the loop files' fingerprint is checked
before recording, and a process killed while recording leaves a marker that tells the next
applier whether the record was written (:func:`recorded_since`: the entry the record path
appends first is there) or not (recorded then, once).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from scars.core.clock import how_long_ago, now_iso
from scars.core.errors import (
    ChangedOnDisk,
    DecisionRefused,
    FieldError,
    HumanNeeded,
    LockHeld,
    PathNotFound,
    ScarsError,
    UsageError,
    refuse_if_read_only,
)
from scars.core.gatekit.evidence import Evidence, GateResult, selector, validate_answer
from scars.core.gates import signing
from scars.core.gates.recording import gather, human_mode, proof_file
from scars.core.gates.recording import record as record_answer
from scars.core.loops.registry import GATES, lineage, loop_system, root_markers
from scars.core.provenance import Provenance, as_provenance, decided_by
from scars.core.records import field, record
from scars.core.samsara.layout import find_repo_root
from scars.core.samsara.session import FeatureSession
from scars.core.storage import confine, safe_read
from scars.core.storage.durable import atomic_write, ensure_private_dir
from scars.core.storage.lock import PRIVATE_FILES, FeatureLock, current_holder
from scars.core.storage.paths import is_inside

FORMAT = "scars-request/1"
INBOX = Path(".scars") / "requests"
STATUSES = ("pending", "answered", "applied", "refused", "withdrawn")
OPEN = ("pending", "answered")  # still waiting for a person or for its record
LOCK_TIMEOUT = 30.0  # seconds an answerer or applier waits for another one to finish
POLL_SECONDS = 0.1  # a waiter's stat interval: the answer is seen within this (+ the read)
_ID = re.compile(r"^[a-z0-9][a-z0-9-]{2,60}$")
_MAX_BYTES = 4 * 1024 * 1024


# Where an expired request is answered (see :func:`answerable`).
EXPIRED_ANSWER = (
    "answer: in the app (`scars`, the Loops inbox, enter), which shows its gate as it reads now; "
    "`scars answer` refuses it"
)


def requests_root(path: str | os.PathLike[str], cwd: str | os.PathLike[str] | None = None) -> Path:
    """The root whose ``.scars/requests/`` holds the requests of the loop at ``path`` (and the
    inbox the app shows for a root): samsara's repository root (``changes/`` or ``.samsara/``),
    else the nearest directory holding ``.git``, ``.loop-spec``, ``.bkit`` or an inbox already,
    else the current directory when ``path`` is inside it, else ``path``'s directory."""
    p = Path(path).absolute()
    if not p.is_dir():
        p = p.parent
    root = find_repo_root(p)
    if root is not None:
        return root
    markers = (".git", *root_markers(), str(INBOX))
    for candidate in (p, *p.parents):
        if any((candidate / m).exists() for m in markers):
            return candidate
    here = Path(cwd if cwd is not None else Path.cwd()).absolute()
    if p == here or here in p.parents:
        return here
    return p


def inbox_dir(root: str | os.PathLike[str]) -> Path:
    return Path(root) / INBOX


# -- the loop files' fingerprint ------------------------------------------------------------


def loop_files(evidence: Evidence, root: Path) -> list[Path]:
    """The files a gate's answer depends on and writes: the loop's state file, the
    auto-decisions.md its entries go to and, for a samsara feature, every file of the feature
    directory, its reports and its journal (the folders listed by the read rule inside ``root``:
    one leading out of the repository is never listed)."""
    files: set[Path] = set()
    if evidence.state_file is not None:
        files.add(Path(evidence.state_file))
    decisions_dir = evidence.context.get("decisions_dir")
    if decisions_dir is not None:
        files.add(Path(decisions_dir) / "auto-decisions.md")
    files.update(loop_system(evidence.gate.loop).loop_files(evidence, root))
    return sorted(files)


def loop_fingerprint(evidence: Evidence, root: Path) -> dict[str, str]:
    """{file (relative to ``root`` when inside): sha256 of its content, "absent", or why it is not
    read}. Each file is read by the read rule (``storage/safe_read``): a link leading out of the
    repository is never opened, and says so."""
    out: dict[str, str] = {}
    for f in loop_files(evidence, root):
        try:
            fd = safe_read.open_file(f, root=root, what="it")
        except FileNotFoundError:
            digest = "absent"
        except safe_read.Unreadable as exc:
            digest = f"unreadable ({exc.reason.removeprefix('it ').removeprefix('cannot read it: ')})"
        else:
            try:
                digest = _sha256_of(fd)
            except OSError as exc:
                digest = f"unreadable ({exc.strerror})"
            finally:
                os.close(fd)
        out[_display(f, root)] = digest
    return out


def _sha256_of(fd: int) -> str:
    h = hashlib.sha256()
    while chunk := os.read(fd, 1 << 20):
        h.update(chunk)
    return h.hexdigest()


EMPTY = hashlib.sha256(b"").hexdigest()


def _content(fp: dict[str, str], key: str) -> str:
    # An empty file is no content: what an append leaves that stopped between creating its file
    # and writing its record (nothing was recorded).
    digest = fp.get(key, "absent")
    return "absent" if digest == EMPTY else digest


def changed_files(before: dict[str, str], now: dict[str, str]) -> list[str]:
    """The files whose content differs between two fingerprints (added and removed included;
    an empty file is the same as an absent one)."""
    return sorted(k for k in set(before) | set(now) if _content(before, k) != _content(now, k))


def recorded_since(evidence: Evidence, root: Path, marker: dict[str, str], now: dict[str, str]) -> bool:
    """Whether the record path wrote the answer since ``marker`` (the loop files' fingerprint an
    applier took before it began recording and then stopped, killed or failed): the record's
    proof file (:func:`scars.core.gates.recording.proof_file`, the auto-decisions.md its entry
    is appended to first) changed, else — samsara — any loop file changed (:func:`changed_files`:
    a file created empty is no change)."""
    changed = changed_files(marker, now)
    proof = proof_file(evidence)
    return (_display(proof, root) in changed) if proof is not None else bool(changed)


def _display(path: Path, root: Path) -> str:
    with contextlib.suppress(ValueError):
        return str(Path(os.path.abspath(path)).relative_to(os.path.abspath(root)))
    return str(path)


# -- the request ---------------------------------------------------------------------------


@record(frozen=False)
class Request:
    """One gate request as its file holds it."""

    id: str
    gate: str
    loop: str
    path: str  # the loop's path as `scars gate` takes it: relative to the root, or absolute
    options: dict[str, Any]
    evidence: dict[str, Any]  # Evidence.as_json() when it was posted (what the gate showed)
    asked_by: str
    asked_at: str
    asked_from: dict[str, Any]  # {"pid", "host"} of the process that posted it
    fingerprint: dict[str, str]  # loop_fingerprint when it was posted
    status: str = "pending"
    answer: dict[str, Any] | None = None  # {answer, reason, value, by, at, source, fingerprint}
    result: dict[str, Any] | None = None  # GateResult.as_json() once applied
    refusal: str | None = None
    applying: dict[str, Any] | None = None  # {at, pid, fingerprint} while a process records it
    withdrawn: dict[str, Any] | None = None  # {by, at}
    signature: str | None = None  # signing.mac of what it asks and where it was posted (None: unsigned)
    file: Path | None = field(default=None, compare=False)

    def loop_path(self, root: Path) -> Path:
        p = Path(self.path)
        return p if p.is_absolute() else Path(root) / p

    @property
    def loop_label(self) -> str:
        """The loop as the request's evidence named it (``Evidence.loop_name``: a review gate's
        ``mechanist``), only where the gate serves that lineage; else the gate's loop. A request
        file names no other loop than its gate's."""
        named = self.evidence.get("loop") if isinstance(self.evidence, dict) else None
        return named if isinstance(named, str) and named in lineage(self.loop) else self.loop

    def as_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "id": self.id,
            "status": self.status,
            "gate": self.gate,
            "loop": self.loop,
            "path": self.path,
            "options": dict(self.options),
            "asked_by": self.asked_by,
            "asked_at": self.asked_at,
            "asked_from": dict(self.asked_from),
            "fingerprint": dict(self.fingerprint),
            "evidence": self.evidence,
            "answer": self.answer,
            "result": self.result,
            "refusal": self.refusal,
            "applying": self.applying,
            "withdrawn": self.withdrawn,
            **({"signature": {"alg": signing.ALG, "mac": self.signature}} if self.signature else {}),
        }

    def gather_options(self) -> dict[str, Any]:
        """The options of `scars gate` for this request, with the answer's value (sprint-pause)."""
        options = {k: v for k, v in self.options.items() if v is not None}
        if self.answer and self.answer.get("value") is not None:
            options["value"] = str(self.answer["value"])
        return options

    def selector(self) -> dict[str, str]:
        """What the request's gate was about when it was posted (``evidence.selector``): kept in
        its evidence; a request written before scars kept it there gives the options it named."""
        kept = (self.evidence or {}).get("selector")
        if isinstance(kept, dict):
            return {str(k): str(v) for k, v in kept.items()}
        return {k: str(self.options[k]) for k in GATES[self.gate].selects if self.options.get(k) is not None}

    def answered_text(self) -> str:
        """Who answered what, when (for the one who comes second)."""
        a = self.answer or {}
        reason = f" ({a['reason']})" if a.get("reason") else ""
        return f"{a.get('by', '?')} answered {a.get('answer', '?')!r}{reason} at {a.get('at', '?')}"


class RequestUnreadable(ScarsError):
    """A request file that cannot be used (hand-edited, cut, hostile): shown, never applied."""

    exit_code = 2


def _require(data: dict, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = data.get(key)
    if not isinstance(value, kind):
        raise RequestUnreadable(f"{where}: {key!r} is missing or not a {getattr(kind, '__name__', 'value')}")
    return value


def _from_json(data: Any, where: str, file: Path) -> Request:
    if not isinstance(data, dict):
        raise RequestUnreadable(f"{where}: not a JSON object")
    if data.get("format") != FORMAT:
        raise RequestUnreadable(f"{where}: format is not {FORMAT}")
    rid = _require(data, "id", str, where)
    if rid != file.stem or not _ID.match(rid):
        raise RequestUnreadable(f"{where}: id {rid!r} does not match its file name")
    gate = _require(data, "gate", str, where)
    if gate not in GATES:
        raise RequestUnreadable(f"{where}: unknown gate {gate!r}")
    status = _require(data, "status", str, where)
    if status not in STATUSES:
        raise RequestUnreadable(f"{where}: unknown status {status!r}")
    path = _require(data, "path", str, where)
    root = file.parent.parent.parent  # <root>/.scars/requests/<id>.json
    if Path(path).is_absolute() or not is_inside(root / path, root):
        raise RequestUnreadable(f"{where}: path {path!r} is not inside the repository {root}")
    fp = _require(data, "fingerprint", dict, where)
    answer = data.get("answer")
    if status in ("answered", "applied") and not (
        isinstance(answer, dict) and isinstance(answer.get("answer"), str) and isinstance(answer.get("by"), str)
    ):
        raise RequestUnreadable(f"{where}: status {status} without an answer")

    def opt_dict(key: str) -> dict[str, Any] | None:
        v = data.get(key)
        return v if isinstance(v, dict) else None

    sig = opt_dict("signature") or {}

    return Request(
        id=rid,
        gate=gate,
        loop=GATES[gate].loop,
        path=path,
        options=opt_dict("options") or {},
        evidence=opt_dict("evidence") or {},
        asked_by=str(data.get("asked_by") or "?"),
        asked_at=str(data.get("asked_at") or ""),
        asked_from=opt_dict("asked_from") or {},
        fingerprint={str(k): str(v) for k, v in fp.items()},
        status=status,
        answer=answer if isinstance(answer, dict) else None,
        result=opt_dict("result"),
        refusal=data.get("refusal") if isinstance(data.get("refusal"), str) else None,
        applying=opt_dict("applying"),
        withdrawn=opt_dict("withdrawn"),
        signature=sig["mac"] if sig.get("alg") == signing.ALG and isinstance(sig.get("mac"), str) else None,
        file=file,
    )


def _is_request_file(name: str) -> bool:
    """A file of the inbox that is a request's (its JSON, its lock, its waiter's lock): private."""
    stem, dot, suffix = name.rpartition(".")
    return bool(dot) and suffix in ("json", "lock", "wait") and _ID.match(stem) is not None


def _file(root: Path, rid: str, suffix: str = ".json") -> Path:
    if not _ID.match(rid or ""):
        raise UsageError(f"{rid!r} is not a request id (e.g. spec-3fa9c2; `scars requests` lists them)")
    return inbox_dir(root) / f"{rid}{suffix}"


def load_request(root: str | os.PathLike[str], rid: str) -> Request:
    """The request ``rid`` of the inbox under ``root`` (read by the one safe-read policy)."""
    root = Path(root)
    path = _file(root, rid)
    try:
        data = safe_read.load_json(path, root=root, limit=_MAX_BYTES, what=f"request {rid}")
    except FileNotFoundError:
        raise PathNotFound(f"no request {rid} in {inbox_dir(root)} (`scars requests` lists the ones there)") from None
    except safe_read.Unreadable as exc:
        raise RequestUnreadable(f"{path}: {exc}") from None
    return _from_json(data, str(path), path)


def list_requests(root: str | os.PathLike[str]) -> tuple[list[Request], list[str]]:
    """Every request of the inbox (open ones first, oldest first) and what could not be read."""
    root = Path(root)
    out: list[Request] = []
    problems: list[str] = []
    try:  # by the read rule: an inbox that is a link leading out of the repository is never listed
        names = sorted(
            n for n in safe_read.list_dir(inbox_dir(root), root=root, what="the inbox") if n.endswith(".json")
        )
    except (FileNotFoundError, NotADirectoryError):
        return [], []
    except safe_read.Unreadable as exc:
        return [], [f"{inbox_dir(root)}: {exc}"]
    for name in names:
        try:
            out.append(load_request(root, name[: -len(".json")]))
        except ScarsError as exc:
            problems.append(str(exc))
    out.sort(key=lambda r: (r.status not in OPEN, r.status != "pending", r.asked_at, r.id))
    return out, problems


def _write(req: Request, root: Path) -> None:
    """A request written by the write rule inside ``root``: private (0600, or the inbox's group bits)."""
    data = json.dumps(req.as_json(), ensure_ascii=True, indent=2, default=str) + "\n"
    path = _file(root, req.id)
    try:
        mode = confine.private_mode(os.stat(inbox_dir(root), follow_symlinks=False).st_mode)
    except OSError:
        mode = 0o600
    atomic_write(path, data.encode("utf-8"), root=root, mode=None if path.exists() else mode)


def _create(where: confine.Place, mode: int) -> int:
    """A new file made where the write rule placed it (``O_EXCL | O_NOFOLLOW``: never an existing file
    or a link); raises FileExistsError when there is one."""
    fd = os.open(where.name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode, dir_fd=where.dir_fd)
    with contextlib.suppress(OSError):
        os.fchmod(fd, mode)  # exactly: a group-shared inbox keeps its group bits whatever the umask
    return fd


@contextlib.contextmanager
def _locked(root: Path, rid: str, user: str = "") -> Iterator[None]:
    lock = FeatureLock(root, user=user, lock_file=_file(root, rid, ".lock"), root=root, private_files=_is_request_file)
    try:
        lock.acquire(timeout=LOCK_TIMEOUT)
    except LockHeld as exc:
        raise LockHeld(
            f"request {rid} is being answered or recorded by another process for over {LOCK_TIMEOUT:.0f} s; try again",
            exc.holder,
        ) from None
    try:
        yield
    finally:
        lock.release()


# -- post, answer, apply, withdraw ---------------------------------------------------------


def post_request(
    evidence: Evidence,
    path: str | os.PathLike[str],
    *,
    user: str,
    options: dict[str, Any] | None = None,
    root: str | os.PathLike[str] | None = None,
    via: dict[str, Any] | None = None,
) -> Request:
    """Post the gate of ``evidence`` (gathered at ``path`` with ``options``) as a pending request.
    ``via``: what posted it when not `scars gate --wait` itself (the MCP server: its client's name
    and version from the handshake, the agent session), kept in ``asked_from["via"]``."""
    root = Path(root) if root is not None else requests_root(path)
    # The inbox by the write rule (storage/confine): `.scars/` and `requests/` inside the root,
    # private (0700, or their parent's group bits), never through a link.
    ensure_private_dir(root / INBOX.parent, root=root)
    directory = ensure_private_dir(inbox_dir(root), root=root)
    # Made before the 0700 / 0600 rule: narrowed to it now that they are written.
    confine.narrow_private(root / INBOX.parent, root, PRIVATE_FILES.__contains__)
    confine.narrow_private(directory, root, _is_request_file)
    # The requests are a process's exchange; the record is the loop's files: git ignores the inbox.
    with confine.placed(directory / ".gitignore", root, create=False) as where, contextlib.suppress(FileExistsError):
        fd = _create(where, 0o644)
        os.write(fd, b"# scars gate requests: the answers are recorded in the loops' own files\n*\n")
        os.close(fd)
    for _ in range(100):
        rid = f"{evidence.gate.id}-{secrets.token_hex(3)}"
        try:  # the lock file reserves the id
            with confine.placed(_file(root, rid, ".lock"), root, create=False) as where:
                os.close(_create(where, confine.private_mode(where.dir_mode)))
            break
        except FileExistsError:
            continue
    else:  # pragma: no cover - 16M ids
        raise UsageError(f"no free request id in {directory}")
    if not is_inside(Path(path).absolute(), root):
        raise UsageError(f"{path} is not inside {root}, the repository whose inbox would hold its request")
    shown = _display(Path(path).absolute(), root)
    req = Request(
        id=rid,
        gate=evidence.gate.id,
        loop=evidence.gate.loop,
        path=shown,
        options={k: v for k, v in (options or {}).items() if v is not None},
        evidence=evidence.as_json(),
        asked_by=user,
        asked_at=now_iso(),
        asked_from={"pid": os.getpid(), **signing.origin(root), **({"via": dict(via)} if via else {})},
        fingerprint=loop_fingerprint(evidence, root),
    )
    key = signing.user_key(create=True)
    assert key is not None  # made when missing
    req.signature = signing.mac(key, "request", signing.request_fields(req.as_json()), root)
    _write(req, root)
    req.file = _file(root, rid)
    return req


def not_posted_here(req: Request, root: str | os.PathLike[str]) -> str | None:
    """Why ``req`` is not a request this user posted in this checkout — or its answer not one given
    here — (signing: host, user, checkout, this user's secret), or None when both are. Such a
    request (shipped in a clone, planted, copied, edited by hand, or unsigned: written by a scars
    before signatures) is listed as such and never answered or applied."""
    if req.signature is None:
        return "not posted here (no signature: written by an older scars or by hand)"
    try:
        key = signing.user_key(create=False)
    except signing.SigningKeyUnusable as exc:
        return f"cannot be checked: {exc}"
    if key is None:
        return "not posted here (this user has no request key: posted by another user or from another state directory)"
    if not signing.matches(signing.mac(key, "request", signing.request_fields(req.as_json()), root), req.signature):
        here = signing.origin(root)
        there = req.asked_from or {}
        if there.get("host") != here["host"]:
            why = f"posted on host {there.get('host', '?')}"
        elif there.get("uid") != here["uid"]:
            why = f"posted by another user (uid {there.get('uid', '?')})"
        elif there.get("checkout") != here["checkout"]:
            why = f"posted in another checkout ({(there.get('checkout') or {}).get('path', '?')})"
        else:
            why = "its signature does not match: edited, or signed with another user's key"
        return f"not posted here ({why})"
    if req.answer is not None:
        want = signing.mac(key, "answer", signing.answer_fields(req.signature, req.answer), root)
        if not signing.matches(want, req.answer.get("mac")):
            return "its answer was not given here (no signature of this user and checkout)"
    return None


def current_evidence(req: Request, root: Path, *, read_only: str | bool | None = None) -> Evidence:
    """The request's gate gathered again from the loop's files now (``read_only``: as they are)."""
    return gather(req.gate, req.loop_path(root), read_only=read_only, **req.gather_options())


def selection_moved(req: Request, evidence: Evidence) -> str | None:
    """Why ``evidence`` (the request's gate gathered now) is about something else than the request
    asked — another item, feature or sprint (``evidence.selector``) —, or None: an answer is only
    ever recorded on what it was asked for."""
    now = selector(evidence)
    moved = [f"{k} {now.get(k)}, not {v}" for k, v in req.selector().items() if now.get(k) != v]
    if not moved:
        return None
    return f"the gate now reads {'; '.join(moved)} (asked for {', '.join(req.selector().values())})"


def answer_request(
    root: str | os.PathLike[str],
    rid: str,
    answer: str | None,
    reason: str | None = None,
    *,
    user: str,
    source: Provenance | str,
    value: str | None = None,
    shown: dict[str, str] | None = None,
    round_fields: dict[str, Any] | None = None,
    read_only: str | bool | None = None,
) -> Request:
    """Answer a pending request (checked as the gate checks an answer given in place).

    ``read_only``: the caller's session is read-only (its reason): refused, nothing written (the
    waiting loop would record the answer).

    ``round_fields``: a round gate's Rule-3 fields given with the answer (``round_fields()``'s
    values); kept in the answer and recorded with it, as an answer given in place records them.

    ``shown``: the fingerprint of the evidence the person saw (the app shows the gate gathered
    again); without it the request's own. The loop's files must still be what was seen, else
    the answer is refused with the files that changed. A request already answered is refused
    naming who answered what. A request not posted here (:func:`not_posted_here`) is refused; an
    agent's answer to a human-mode gate is refused as the record path refuses it; the answer is
    kept with its provenance (``source``) and signed (``signing``)."""
    refuse_if_read_only(read_only, f"request {rid} is not answered")
    root = Path(root)
    prov = as_provenance(source)
    with _locked(root, rid, user):
        req = load_request(root, rid)
        foreign = not_posted_here(req, root)
        if foreign:
            raise DecisionRefused(
                f"request {rid} is {foreign}: it is never answered or applied here; nothing was recorded",
                [FieldError("request", foreign)],
            )
        if req.status != "pending":
            said = (
                f"was answered already: {req.answered_text()} (it is {req.status})"
                if req.answer
                else f"is {req.status}" + (f": {req.refusal}" if req.refusal else "")
            )
            raise DecisionRefused(
                f"request {rid} {said}; this answer was not taken", [FieldError("request", req.status)]
            )
        options = {k: v for k, v in req.options.items() if v is not None}
        if value is not None:
            options["value"] = value
        evidence = gather(req.gate, req.loop_path(root), **options)
        other = selection_moved(req, evidence)
        if other:
            raise DecisionRefused(
                f"request {rid}: {other}; the answer would land on something else than was asked, so nothing was "
                "recorded",
                [FieldError("selector", other)],
            )
        now = loop_fingerprint(evidence, root)
        seen = shown if shown is not None else req.fingerprint
        moved = changed_files(seen, now)
        if moved:  # expired (or changed while shown): answerable only against the gate shown now
            what = "the gate was shown" if shown is not None else "the request was posted"
            raise DecisionRefused(
                f"request {rid}: the loop's files changed since {what} ({', '.join(moved)}); the answer would "
                f"apply to another situation, so nothing was recorded — {EXPIRED_ANSWER.removeprefix('answer: ')}",
                [FieldError("fingerprint", "changed: " + ", ".join(moved))],
            )
        ans, reason = validate_answer(evidence, answer, reason)
        decided_by(user, prov, human_mode=human_mode(evidence))  # AgentAnswerRefused: not taken
        req.answer = {
            "answer": ans.value,
            "reason": reason,
            "value": value,
            "by": user,
            "at": now_iso(),
            "source": prov.via or prov.channel,
            "provenance": prov.to_record(),
            "fingerprint": now,
        }
        if round_fields:
            req.answer["round_fields"] = dict(round_fields)
        key = signing.user_key(create=False)
        assert key is not None  # not_posted_here found it
        req.answer["mac"] = signing.mac(key, "answer", signing.answer_fields(req.signature or "", req.answer), root)
        req.status = "answered"
        _write(req, root)
        return req


def stored_result(req: Request) -> GateResult:
    """The result an applied request recorded, as the record path returned it."""
    r = dict(req.result or {})
    keys = ("gate", "answer", "decision", "reason", "decided_by", "source", "recorded")
    return GateResult(
        gate=str(r.get("gate", req.gate)),
        answer=str(r.get("answer", "")),
        decision=str(r.get("decision", "")),
        reason=r.get("reason"),
        decided_by=str(r.get("decided_by", "")),
        recorded=[str(x) for x in r.get("recorded") or []],
        source=str(r.get("source", "")),
        extra={k: v for k, v in r.items() if k not in keys},
    )


def apply_request(
    root: str | os.PathLike[str],
    rid: str,
    *,
    user: str = "",
    session: FeatureSession | None = None,
    read_only: str | bool | None = None,
) -> GateResult:
    """Record an answered request in the loop's files through the one record path, once.

    ``session``: a samsara feature's open writer session (the app that holds the feature records
    a request of that feature through it; another process could not take its lock).

    Applied already: its stored result. Pending: HumanNeeded (exit 3). Refused or withdrawn:
    DecisionRefused / HumanNeeded. The loop's files must be what the answerer saw; a record
    interrupted earlier (the ``applying`` marker) is never written twice. ``read_only``: refused."""
    refuse_if_read_only(read_only, f"request {rid} is not recorded")
    root = Path(root)
    with _locked(root, rid, user):
        req = load_request(root, rid)
        foreign = not_posted_here(req, root)
        if foreign:  # nothing is written, not even into the request: it is not this checkout's
            raise DecisionRefused(
                f"request {rid} is {foreign}: it is never applied here; nothing was recorded",
                [FieldError("request", foreign)],
            )
        if req.status == "applied":
            return stored_result(req)
        if req.status == "refused":
            raise DecisionRefused(f"request {rid} was refused: {req.refusal}", [FieldError("request", "refused")])
        if req.status == "withdrawn":
            raise HumanNeeded(
                f"request {rid} was withdrawn by {(req.withdrawn or {}).get('by', '?')}; nothing to record"
            )
        if req.status == "pending" or req.answer is None:
            raise HumanNeeded(f"request {rid} is not answered yet")
        a = req.answer
        evidence = current_evidence(req, root)
        now = loop_fingerprint(evidence, root)
        marker = dict((req.applying or {}).get("fingerprint") or {})
        if req.applying is not None and recorded_since(evidence, root, marker, now):
            # A process was recording this answer when it stopped, after its record was written.
            req.status = "applied"
            req.result = {
                "gate": req.gate,
                "answer": a["answer"],
                "decision": "",
                "reason": a.get("reason"),
                "decided_by": a["by"],
                "source": f"request {rid} ({a.get('source', '')})",
                "recorded": changed_files(marker, now),
                "request": rid,
                "note": "recorded by a process that stopped before it could keep the result",
            }
            req.applying = None
            _write(req, root)
            return stored_result(req)
        other = selection_moved(req, evidence)
        if other:
            req.status = "refused"
            req.refusal = f"{other}: the answer was for something else and is not recorded; ask the gate again"
            req.applying = None
            _write(req, root)
            raise DecisionRefused(f"request {rid}: {req.refusal}", [FieldError("selector", other)])
        moved = changed_files(dict(a.get("fingerprint") or {}), now)
        if moved:
            req.status = "refused"
            req.refusal = (
                f"the loop's files changed since {a['by']} answered ({', '.join(moved)}): the answer was for "
                "another situation and is not recorded; ask the gate again"
            )
            req.applying = None
            _write(req, root)
            raise DecisionRefused(f"request {rid}: {req.refusal}", [FieldError("fingerprint", "changed")])
        req.applying = {"at": now_iso(), "pid": os.getpid(), "fingerprint": now}
        _write(req, root)
        prov = Provenance.from_record(a.get("provenance")) or as_provenance(a.get("source"))
        try:
            result = record_answer(
                evidence,
                a["answer"],
                a.get("reason"),
                user=a["by"],
                source=prov.with_via(f"request {rid} ({a.get('source', '')})"),
                session=session,
                round_fields=a.get("round_fields") or None,
            )
        except (DecisionRefused, ChangedOnDisk, UsageError) as exc:  # refused before anything was written
            req.status = "refused"
            req.refusal = str(exc)
            req.applying = None
            _write(req, root)
            raise
        # Anything else (the loop's lock held, a failed write, a kill) leaves the marker: the next
        # applier sees whether the loop's files moved since it and never records twice.
        req.status = "applied"
        req.result = {**result.as_json(), "request": rid}
        req.applying = None
        _write(req, root)
        result.extra["request"] = rid
        return result


def withdraw_request(
    root: str | os.PathLike[str], rid: str, *, user: str, read_only: str | bool | None = None
) -> Request:
    """Withdraw a pending request (an answered one stays: its answer is applied, not lost).
    ``read_only``: refused."""
    refuse_if_read_only(read_only, f"request {rid} is not withdrawn")
    root = Path(root)
    with _locked(root, rid, user):
        req = load_request(root, rid)
        if req.status == "pending":
            req.status = "withdrawn"
            req.withdrawn = {"by": user, "at": now_iso()}
            _write(req, root)
        return req


# -- waiting -------------------------------------------------------------------------------


def waiter_of(root: str | os.PathLike[str], rid: str) -> dict[str, Any] | None:
    """The process waiting on a request ({"pid", "host", "user", "started"}), or None when none waits."""
    return current_holder(root, lock_file=_file(Path(root), rid, ".wait"))


@contextlib.contextmanager
def waiting(root: str | os.PathLike[str], rid: str, user: str = "") -> Iterator[None]:
    """Hold the request's wait lock (one waiter per request) while the body waits."""
    lock = FeatureLock(
        root, user=user, lock_file=_file(Path(root), rid, ".wait"), root=root, private_files=_is_request_file
    )
    try:
        lock.acquire()
    except LockHeld as exc:
        raise UsageError(
            f"another process (pid {(exc.holder or {}).get('pid', '?')}) already waits for request {rid}"
        ) from None
    try:
        yield
    finally:
        lock.release()


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def wait_for_answer(
    root: str | os.PathLike[str],
    rid: str,
    *,
    timeout: float | None = None,
    poll: float = POLL_SECONDS,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Request:
    """Block until the request is no longer pending (one ``stat`` per ``poll``); HumanNeeded
    (exit 3) after ``timeout`` seconds, the request left pending."""
    root = Path(root)
    path = _file(root, rid)
    deadline = None if timeout is None else clock() + timeout
    seen: tuple[int, int, int] | None = None
    while True:
        stamp = _stamp(path)
        if stamp is None:
            raise PathNotFound(f"request {rid} was removed from {inbox_dir(root)} while waited for")
        if stamp != seen:
            seen = stamp
            req = load_request(root, rid)
            if req.status != "pending":
                return req
        if deadline is not None and clock() >= deadline:
            raise HumanNeeded(f"request {rid} is still pending after {timeout:g} s")
        sleep(poll)


# -- how a request stands now -----------------------------------------------------------------


def answerable(state: str, *, shows_gate_now: bool) -> bool:
    """Whether a request in ``state`` (a :class:`RequestView`'s) can still be answered by a front
    end — the one rule the app and `scars answer` follow (README, "A loop without a terminal
    waits for a person"): a pending request anywhere; an expired one (the loop's files changed
    since it was posted) only where its gate is shown as it reads now and the answer is checked
    against what was shown (``answer_request(shown=…)``: the app), never from a plain shell that
    showed nothing but the request; an answered, applied, refused or withdrawn one nowhere."""
    return state == "pending" or (state == "expired" and shows_gate_now)


@record(frozen=False)
class RequestView:
    """A request as it stands now: ``state`` is its status, or ``expired`` for a pending one
    whose loop files changed since it was posted (an answer to it would be refused; the app
    shows its gate gathered again); ``evidence`` the gate gathered now (None when the loop
    cannot be read: ``problem`` says why)."""

    request: Request
    state: str
    changed: list[str]
    waiter: dict[str, Any] | None
    evidence: Evidence | None = None
    fingerprint: dict[str, str] | None = None  # the loop files' now (what an answer to it is checked against)
    problem: str | None = None
    foreign: str | None = None  # state "planted": why it is not this checkout's (not_posted_here)

    def lines(self, *, steps: bool = True) -> list[str]:
        """What a person reads of it below its id, one line each: who asks and since when, whether
        a process waits, the gate's prompt, why it expired, the answer, what to do (``steps``;
        False where nothing can be recorded: a read-only app says why instead). Plain and
        untrusted (loop texts): every front end makes them inert."""
        r = self.request
        ago = how_long_ago(r.asked_at)
        waits = f"pid {self.waiter.get('pid', '?')} waits for the answer" if self.waiter is not None else "nobody waits"
        out = [f"asked by {r.asked_by} {ago + ' ago' if ago else 'at ' + r.asked_at}; {waits}"]
        prompt = (r.evidence or {}).get("workflow_prompt")
        if isinstance(prompt, str) and prompt.strip():
            out.append(prompt)
        if self.foreign:
            out.append(f"{self.foreign}: never answered or applied here")
        if self.state == "expired":
            why = self.problem or f"the loop's files changed since it was posted ({', '.join(self.changed)})"
            out.append(f"expired: {why}")
        if r.answer:
            out.append(r.answered_text())
        if r.refusal:
            out.append(f"refused: {r.refusal}")
        if not steps:
            return out
        if answerable(self.state, shows_gate_now=False):
            out.append(f"answer: scars answer {r.id} --answer … --reason …")
        elif answerable(self.state, shows_gate_now=True):
            out.append(EXPIRED_ANSWER)
        elif self.state == "answered" and self.waiter is None:
            out.append(f"nobody waits: scars requests apply {r.id} records it")
        return out

    def as_json(self) -> dict[str, Any]:
        return {
            **self.request.as_json(),
            "state": self.state,
            "changed_since_posted": list(self.changed),
            "waiting": self.waiter,
            "problem": self.problem,
            "not_posted_here": self.foreign,
        }


def inspect_request(root: str | os.PathLike[str], req: Request, *, read_only: str | bool | None = None) -> RequestView:
    """How ``req`` stands now (an open request's gate is gathered again; ``read_only``: from the
    loop's files as they are, an interrupted record left for a writer to complete); ``planted`` when
    it is not this checkout's (:func:`not_posted_here`): shown, never answered or applied."""
    root = Path(root)
    waiter = waiter_of(root, req.id)
    foreign = not_posted_here(req, root)
    if foreign:
        return RequestView(req, "planted", [], waiter, foreign=foreign)
    if req.status not in OPEN:
        return RequestView(req, req.status, [], waiter)
    try:
        evidence = current_evidence(req, root, read_only=read_only)
    except ScarsError as exc:
        return RequestView(req, "expired" if req.status == "pending" else req.status, [], waiter, problem=str(exc))
    now = loop_fingerprint(evidence, root)
    changed = changed_files(req.fingerprint, now)
    state = "expired" if changed and req.status == "pending" else req.status
    return RequestView(req, state, changed, waiter, evidence, now)


def open_requests(
    root: str | os.PathLike[str], *, read_only: str | bool | None = None
) -> tuple[list[RequestView], list[str]]:
    """THE inbox every front end lists (the app's Loops screen, `scars loops`, `scars requests`):
    the open requests as they stand now (:func:`inspect_request` — ``planted`` when this checkout
    did not post them, by :func:`not_posted_here`), and what could not be read."""
    found, problems = list_requests(root)
    return [inspect_request(root, r, read_only=read_only) for r in found if r.status in OPEN], problems


def _gate_key(evidence: Evidence) -> tuple:
    """Which gate ``evidence`` is: its id, its loop (target, state file) and what it is about in
    that loop (``evidence.selector``: the item, the feature, the sprint)."""
    state = Path(evidence.state_file).resolve() if evidence.state_file is not None else None
    return (evidence.gate.id, Path(evidence.target).resolve(), state, tuple(sorted(selector(evidence).items())))


def pending_for(
    root: str | os.PathLike[str], evidence: Evidence, views: list[RequestView] | None = None
) -> RequestView | None:
    """The pending request of the same gate of the same loop (same target, same state file, same
    item, feature or sprint: ``evidence.selector``) as ``evidence``, if a process asked it: an answer given there answers that request, so that
    the waiting process wakes (``views``: the inbox as already read)."""
    if views is None:
        found, _ = list_requests(root)
        views = [inspect_request(root, r) for r in found if r.status == "pending"]
    want = _gate_key(evidence)
    return next(
        (v for v in views if v.state == "pending" and v.evidence is not None and _gate_key(v.evidence) == want),
        None,
    )
