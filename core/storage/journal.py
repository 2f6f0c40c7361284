"""The per-feature append-only journal: ``<feature>/.scars/journal.jsonl``.

Every decision, batch, undo, sign-off, blocked-fix outcome and round event is one line::

    <crc32 of the JSON, 8 lowercase hex> <JSON object, ASCII only>\n

written with :func:`scars.core.storage.durable.append_record` (one ``os.write`` on ``O_APPEND``,
fsync) under the feature lock, so a record is on disk before anything reports it saved.
JSON is written with ``ensure_ascii=True``: no record contains a raw newline or any other
line separator, so a line is a record.

Reading never raises on bad content: a torn last line (a crash mid-write) or a line whose
checksum or JSON is wrong is skipped and reported in :attr:`JournalRead.problems`; records
keep their order. Every record carries ``seq`` (1, 2, …) and ``type``.

This module is the framing and the append / read side only; what the records mean (their
types, and the state their replay gives) is ``scars.core.samsara.decisions``.
"""

from __future__ import annotations

import json
import os
import zlib
from pathlib import Path
from typing import Any

from scars.core.records import field, record
from scars.core.storage import confine
from scars.core.storage.durable import append_record, read_upto
from scars.core.storage.lock import STATE_DIR
from scars.core.storage.paths import Unreadable, open_file

JOURNAL_NAME = "journal.jsonl"


FORMAT_VERSION = 1


def frame(record: dict[str, Any]) -> bytes:
    """One journal line for ``record``: checksum, space, compact ASCII JSON, newline."""
    body = json.dumps(record, ensure_ascii=True, separators=(",", ":"), sort_keys=False)
    crc = zlib.crc32(body.encode("ascii")) & 0xFFFFFFFF
    return f"{crc:08x} {body}\n".encode("ascii")


def unframe(line: bytes) -> dict[str, Any] | str:
    """The record of one line (without its newline), or a string saying what is wrong."""
    if len(line) < 11 or line[8:9] != b" ":
        return "not a journal record (no checksum)"
    head, body = line[:8], line[9:]
    try:
        want = int(head.decode("ascii"), 16)
    except (UnicodeDecodeError, ValueError):
        return "not a journal record (bad checksum field)"
    if zlib.crc32(body) & 0xFFFFFFFF != want:
        return "checksum mismatch (torn or altered record)"
    try:
        record = json.loads(body.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        return "checksum matches but the JSON is invalid"
    if not isinstance(record, dict) or not isinstance(record.get("type"), str):
        return "record has no type"
    return record


@record(frozen=False)
class JournalRead:
    records: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # "line N: reason"
    torn_tail: bool = False  # the last line was incomplete (no newline) or corrupt
    size: int = 0  # bytes read
    unreadable: str | None = None  # why the file was not read (the read rule refused it)


def read_journal(path: str | os.PathLike, *, root: str | os.PathLike | None = None) -> JournalRead:
    """All intact records of a journal file, in order; never raises on content. Read by the read
    rule inside ``root`` (``storage/safe_read``; None: the journal's feature directory): a journal
    (or ``.scars/``) that is a link leading out of the repository is never opened — no record, one
    problem saying why."""
    out = JournalRead()
    where = Path(path).parent.parent if root is None else root
    try:
        fd = open_file(path, root=where, what=JOURNAL_NAME)
    except FileNotFoundError:
        return out
    except Unreadable as exc:
        out.problems.append(f"{exc}; no decision of it is shown")
        out.unreadable = str(exc)
        return out
    try:
        data = read_upto(fd, None, os.fstat(fd).st_size)
    finally:
        os.close(fd)
    out.size = len(data)
    lines = data.split(b"\n")
    last_complete = data.endswith(b"\n")
    if last_complete:
        lines.pop()  # the empty string after the final newline
    for i, line in enumerate(lines, start=1):
        is_last = i == len(lines)
        if is_last and not last_complete:
            out.torn_tail = True
            out.problems.append(f"line {i}: incomplete last record (the writer was interrupted); ignored")
            continue
        if not line.strip():
            continue
        rec = unframe(line)
        if isinstance(rec, str):
            if is_last:
                out.torn_tail = True
            out.problems.append(f"line {i}: {rec}; ignored")
            continue
        out.records.append(rec)
    return out


class Journal:
    """Append side of one feature's journal. The caller holds the feature lock."""

    def __init__(self, path: str | os.PathLike, *, root: str | os.PathLike | None = None):
        self.path = Path(path)
        # The repository the journal stays in (storage/confine; None: its feature directory is its own),
        # created private (0600, or its folder's group bits).
        self.root = Path(root) if root is not None else self.path.parent.parent
        # The journal is appended to: refused now, before a byte of it is read, when the write rule
        # would refuse its append (a link leading out of the repository).
        confine.check(self.path, self.root)
        read = read_journal(self.path, root=self.root)
        self.records: list[dict[str, Any]] = read.records
        self.problems: list[str] = read.problems
        self._repair_tail(read)
        self.next_seq = max((r.get("seq", 0) for r in self.records if isinstance(r.get("seq"), int)), default=0) + 1

    def _repair_tail(self, read: JournalRead) -> None:
        """A torn last line would glue itself to the next record: end it with a newline."""
        if read.torn_tail and read.size and not self._ends_with_newline():
            append_record(self.path, b"\n", root=self.root, private=True)

    def _ends_with_newline(self) -> bool:
        try:
            fd = open_file(self.path, root=self.root, what=JOURNAL_NAME)
        except (OSError, Unreadable):
            return True
        try:
            size = os.fstat(fd).st_size
            return size == 0 or os.pread(fd, 1, size - 1) == b"\n"
        except OSError:
            return True
        finally:
            os.close(fd)

    def append(self, type_: str, **payload: Any) -> dict[str, Any]:
        """Write one record durably and return it (with its ``seq``)."""
        record = {"v": FORMAT_VERSION, "seq": self.next_seq, "type": type_, **payload}
        try:
            append_record(self.path, frame(record), root=self.root, private=True)
        except BaseException:
            # Never reuse a seq that may have reached the disk (a failed fsync, a cut-back
            # that failed too): undo names records by seq.
            self.next_seq += 1
            raise
        self.records.append(record)
        self.next_seq += 1
        return record


def journal_path(feature_dir: str | Path) -> Path:
    return Path(feature_dir) / STATE_DIR / JOURNAL_NAME
