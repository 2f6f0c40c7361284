"""The per-feature append-only journal: ``<feature>/.scars/journal.jsonl``.

Every decision, batch, undo, sign-off, blocked-fix outcome and round event is one line::

    <crc32 of the JSON, 8 lowercase hex> <JSON object, ASCII only>\\n

written with :func:`scars.core.durable.append_record` (one ``os.write`` on ``O_APPEND``,
fsync) under the feature lock, so a record is on disk before anything reports it saved.
JSON is written with ``ensure_ascii=True``: no record contains a raw newline or any other
line separator, so a line is a record.

Reading never raises on bad content: a torn last line (a crash mid-write) or a line whose
checksum or JSON is wrong is skipped and reported in :attr:`JournalRead.problems`; records
keep their order. Every record carries ``seq`` (1, 2, …) and ``type``.
"""

from __future__ import annotations

import json
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from scars.core.durable import append_record

JOURNAL_NAME = "journal.jsonl"
FORMAT_VERSION = 1

# Record types.
DECISION = "decision"  # {"decisions": [Decision fields …], "batch_id": str | None}
UNDO = "undo"  # {"target": seq of the reverted record, "items": [ids]}
SIGN_OFF = "sign_off"  # {"item_id", "reviewed_by"}
BLOCKED_FIX = "blocked_fix"  # {"item_id", "outcome", "reason"}
ROUND_START = "round_start"  # {"round", "signal_lost_before", "budget_context", "item_ids"}
ROUND_CLOSE = "round_close"  # {"round", "entry": the iteration-log round mapping}
AUTO_DECISION = "auto_decision"  # {"number", "stage", "gate_id", "supersedes"}
REOPEN = "reopen"  # {"item_id", "cause", "watch"}: a fired watch sends the item back to triage
UNDOABLE = frozenset({DECISION, SIGN_OFF, BLOCKED_FIX})


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


@dataclass
class JournalRead:
    records: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # "line N: reason"
    torn_tail: bool = False  # the last line was incomplete (no newline) or corrupt
    size: int = 0  # bytes read


def read_journal(path: str | os.PathLike) -> JournalRead:
    """All intact records of a journal file, in order; never raises on content."""
    out = JournalRead()
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return out
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

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        read = read_journal(self.path)
        self.records: list[dict[str, Any]] = read.records
        self.problems: list[str] = read.problems
        self._repair_tail(read)
        self.next_seq = max((r.get("seq", 0) for r in self.records if isinstance(r.get("seq"), int)), default=0) + 1

    def _repair_tail(self, read: JournalRead) -> None:
        """A torn last line would glue itself to the next record: end it with a newline."""
        if read.torn_tail and read.size and not self._ends_with_newline():
            append_record(self.path, b"\n")

    def _ends_with_newline(self) -> bool:
        try:
            with open(self.path, "rb") as f:
                f.seek(-1, os.SEEK_END)
                return f.read(1) == b"\n"
        except OSError:
            return True

    def append(self, type_: str, **payload: Any) -> dict[str, Any]:
        """Write one record durably and return it (with its ``seq``)."""
        record = {"v": FORMAT_VERSION, "seq": self.next_seq, "type": type_, **payload}
        try:
            append_record(self.path, frame(record))
        except BaseException:
            # Never reuse a seq that may have reached the disk (a failed fsync, a cut-back
            # that failed too): undo names records by seq.
            self.next_seq += 1
            raise
        self.records.append(record)
        self.next_seq += 1
        return record


@dataclass
class JournalState:
    """The state a journal's records give, replayed in order (see :func:`replay`)."""

    decisions: dict[str, Any] = field(default_factory=dict)  # item_id -> Decision
    history: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # item_id -> superseded records
    undo_stack: list[int] = field(default_factory=list)  # seqs of undoable records, newest last
    undone: set[int] = field(default_factory=set)
    open_round: dict[str, Any] | None = None  # the round_start record of the open round
    closed_rounds: list[dict[str, Any]] = field(default_factory=list)  # round_close records
    last_close_seq: int = 0
    auto_decisions: list[dict[str, Any]] = field(default_factory=list)
    changed_at: dict[str, int] = field(default_factory=dict)  # item_id -> seq of its last change
    descriptions: dict[str, str] = field(default_factory=dict)  # item_id -> text when decided
    reopened: dict[str, dict[str, Any]] = field(default_factory=dict)  # item_id -> its latest reopen record
    fingerprints: dict[str, str] = field(default_factory=dict)  # item_id -> item fingerprint when decided
    # item_id -> {"decision", "recorded", "text"}: decisions :func:`check_items` found made on
    # a different item than the one holding the id now (not applied; the item is undecided).
    moved: dict[str, dict[str, Any]] = field(default_factory=dict)


def replay(records: list[dict[str, Any]]) -> JournalState:
    """Replay journal records into state. Deterministic: the same records give the same state.

    An undo record names the record it reverts (``target``); reverted records are skipped,
    so the state is the replay of every record that was not undone.
    """
    state = JournalState()
    state.undone = {r["target"] for r in records if r.get("type") == UNDO and isinstance(r.get("target"), int)}
    for rec in records:
        apply(state, rec)
    return state


def apply(state: JournalState, rec: dict[str, Any]) -> None:
    """Apply one record to ``state`` (records named in ``state.undone`` are skipped)."""
    from scars.core.decisions import Decision

    kind = rec.get("type")
    seq = rec.get("seq")
    if kind in UNDOABLE:
        if seq in state.undone:
            return
        if seq not in state.undo_stack:
            state.undo_stack.append(seq)

    def supersede(item: str) -> Any:
        prev = state.decisions.get(item)
        if prev is not None:
            state.history.setdefault(item, []).append({"seq": state.changed_at.get(item), **prev.to_dict()})
        return prev

    if kind == DECISION:
        for d in rec.get("decisions") or ():
            if not isinstance(d, dict) or not d.get("item_id"):
                continue
            try:
                dec = Decision.from_dict(d)
            except TypeError:
                continue
            supersede(dec.item_id)
            state.decisions[dec.item_id] = dec
            state.changed_at[dec.item_id] = seq
            state.moved.pop(dec.item_id, None)
            if isinstance(d.get("description"), str):
                state.descriptions[dec.item_id] = d["description"]
            if isinstance(d.get("fingerprint"), str):
                state.fingerprints[dec.item_id] = d["fingerprint"]
            else:  # recorded before fingerprints were: nothing to compare
                state.fingerprints.pop(dec.item_id, None)
    elif kind == SIGN_OFF:
        item = rec.get("item_id")
        prev = supersede(item)
        if prev is not None:
            state.decisions[item] = prev.with_(reviewed_by=rec.get("reviewed_by"), pending_review=False)
            state.changed_at[item] = seq
    elif kind == BLOCKED_FIX:
        item = rec.get("item_id")
        prev = supersede(item)
        if prev is not None:
            outcome = rec.get("outcome")
            if outcome == "reclassify_as_defer":
                state.decisions[item] = prev.with_(
                    action="defer",
                    reason=rec.get("reason") or prev.reason,
                    blocked_outcome=outcome,
                    decided_by=rec.get("decided_by") or prev.decided_by,
                    decided_at=rec.get("at") or prev.decided_at,
                )
            else:
                state.decisions[item] = prev.with_(blocked_outcome=outcome)
            state.changed_at[item] = seq
    elif kind == REOPEN:
        item = rec.get("item_id")
        if supersede(item) is not None:
            del state.decisions[item]
            state.changed_at[item] = seq
            state.reopened[item] = rec
    elif kind == UNDO:
        target = rec.get("target")
        if target in state.undo_stack:
            state.undo_stack.remove(target)
    elif kind == ROUND_START:
        state.open_round = rec
    elif kind == ROUND_CLOSE:
        state.closed_rounds.append(rec)
        state.open_round = None
        state.last_close_seq = seq if isinstance(seq, int) else state.last_close_seq
        state.undo_stack.clear()  # decisions of a closed round are in iteration-log.yaml now
    elif kind == AUTO_DECISION:
        state.auto_decisions.append(rec)


def check_items(state: JournalState, items: Iterable[Any]) -> list[str]:
    """Take back every decision made on a different item than the one holding its id now.

    An item's id counts the occurrence of its text in its report and category, so an item
    with the same text inserted *before* it takes over its id (README, "Item ids"). Each
    decision records the fingerprint of the item it was made on
    (:func:`scars.core.reader.item_fingerprint`); when the item holding the id now has
    another fingerprint, the decision leaves ``state.decisions`` for ``state.moved`` — the
    item is shown undecided and decided again, never silently given someone else's decision.
    Returns one line per decision taken back. Decisions recorded without a fingerprint, and
    decisions whose id no item holds, are left as they are.
    """
    from scars.core.reader import item_fingerprint

    by_id = {it.id: it for it in items}
    lines = []
    prints: dict[str, list[str]] | None = None
    for item_id in list(state.decisions):
        recorded = state.fingerprints.get(item_id)
        item = by_id.get(item_id)
        if recorded is None or item is None:
            continue
        now = item_fingerprint(item)
        if now == recorded:
            continue
        if prints is None:
            prints = {}
            for it in by_id.values():
                prints.setdefault(item_fingerprint(it), []).append(it.id)
        dec = state.decisions.pop(item_id)
        text = state.descriptions.get(item_id, item.text)
        now_at = [i for i in prints.get(recorded, []) if i != item_id]
        state.moved[item_id] = {"decision": dec, "recorded": recorded, "now": now, "text": text,
                                "decided_item_now": now_at[0] if len(now_at) == 1 else None}
        if len(now_at) == 1:
            where, redo = f"the item it was made on is now {now_at[0]}", "decide both again"
        else:
            where, redo = "an item was inserted before it, or the item was edited", "decide this item again"
        lines.append(
            f"{item_id}: its {dec.action} decision ({dec.decided_by or 'unknown'}, {dec.decided_at or 'no date'}) "
            f"was made on a different item of {item.file} with the same text ({where}); it is not applied — {redo}"
        )
    return lines


def feature_state(feature_dir: str | os.PathLike, items: Iterable[Any] | None = None) -> JournalState:
    """The replayed journal of a feature, read without the lock ({} state without a journal).

    With ``items`` (the feature's items, resolved ones included), decisions made on another
    item than the one holding their id now are taken back (:func:`check_items`).
    """
    from scars.core.lock import STATE_DIR

    path = Path(feature_dir) / STATE_DIR / JOURNAL_NAME
    if not path.exists():
        return JournalState()
    state = replay(read_journal(path).records)
    if items is not None:
        check_items(state, items)
    return state


def status_rounds(disk_rounds: list[dict[str, Any]], state: JournalState) -> list[dict[str, Any]]:
    """``scars status --json`` rounds: those on disk, then rounds the journal closed that the
    log lacks (``"pending_write": true``), then the open round (``"open": true``)."""
    out = [dict(r, source="iteration-log.yaml") for r in disk_rounds]
    on_disk = {r.get("round") for r in disk_rounds}
    for rec in state.closed_rounds:
        entry = rec.get("entry") or {}
        if rec.get("round") in on_disk:
            continue
        tr = entry.get("triage_result") or {}
        out.append({
            "round": rec.get("round"),
            "signal_lost_before": entry.get("signal_lost_before"),
            "signal_lost_after": entry.get("signal_lost_after"),
            "decision": entry.get("decision"),
            "decision_reason": entry.get("decision_reason"),
            "fixes_applied": entry.get("fixes_applied"),
            "fixes_scar_count": entry.get("fixes_scar_count"),
            "fix": len(tr.get("fix") or ()),
            "accept": len(tr.get("accept") or ()),
            "defer": len(tr.get("defer") or ()),
            "era": "B",
            "source": "journal",
            "pending_write": True,
        })
    if state.open_round:
        o = state.open_round
        out.append({
            "round": o.get("round"),
            "signal_lost_before": o.get("signal_lost_before"),
            "budget_context": o.get("budget_context"),
            "started_at": o.get("at"),
            "started_by": o.get("by"),
            "open": True,
            "source": "journal",
        })
    return out
