"""The decision model: fix / accept / defer per scar item, and its validation.

formats.md §1.4: an ``accept`` is a known risk and must carry ``re_review_signal`` (the
observable condition that triggers a re-review), ``owner`` (who watches for it) and
``rationale``; a ``defer`` may carry a ``reason`` and a ``revisit_when``. Every decision
records who made it (``decided_by``) and when (``decided_at``, ISO 8601 with zone), and may
carry a second person's sign-off (``reviewed_by``). A fix the implementer reported blocked
gets an outcome: retry with more context, or reclassify as defer.

Validation lives here and returns :class:`~scars.core.errors.FieldError` values; the app,
the gates and the CLI show them and never decide a rule themselves.

The journal's records (``.scars/journal.jsonl``, framed by ``scars.core.storage.journal``) are
replayed here into :class:`JournalState` (:func:`replay`, :func:`feature_state`): the current
decisions, their history, the undo stack, the rounds, and the items a fired watch reopened
(:func:`reopened_now`). Read-only callers use :func:`current_decisions` (no lock).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from scars.core import settings
from scars.core.clock import now_iso
from scars.core.errors import DecisionRefused, FieldError
from scars.core.git import user_name
from scars.core.model import Feature
from scars.core.records import asdict, field, fields, record, replace
from scars.core.samsara.items import item_fingerprint
from scars.core.samsara.watches import reopened_items, validate_watch
from scars.core.storage.journal import JOURNAL_NAME, read_journal
from scars.core.storage.lock import STATE_DIR
from scars.core.text import is_meaningful, text_problem

Action = Literal["fix", "accept", "defer"]


ACTIONS: tuple[str, ...] = ("fix", "accept", "defer")


BlockedOutcome = Literal["retry_with_context", "reclassify_as_defer"]


BLOCKED_OUTCOMES: tuple[str, ...] = ("retry_with_context", "reclassify_as_defer")


# Fields required (and meaningful) for an accept, in the order the loop lists them.
ACCEPT_REQUIRED: tuple[str, ...] = ("re_review_signal", "owner", "rationale")


# Which optional fields belong to which action ("rationale" and "watch" are allowed where noted).
_ONLY_FOR: dict[str, tuple[str, ...]] = {
    "re_review_signal": ("accept",),
    "owner": ("accept",),
    "watch": ("accept",),
    "watch_base": ("accept",),
    "reason": ("defer",),
    "revisit_when": ("defer",),
}


TEXT_FIELDS: tuple[str, ...] = ("re_review_signal", "owner", "rationale", "reason", "revisit_when", "reviewed_by")


FIELD_LABEL: dict[str, str] = {
    "re_review_signal": "re-review signal",
    "owner": "owner",
    "rationale": "rationale",
    "reason": "reason",
    "revisit_when": "revisit when",
    "watch": "watch",
    "reviewed_by": "reviewed by",
    "action": "action",
    "item_id": "item id",
}


MAX_TEXT = 20_000


_CARRIED_FIELDS = ("carried_round", "expiry_date", "matched")


@record
class Decision:
    item_id: str
    action: Action
    re_review_signal: str | None = None
    owner: str | None = None
    rationale: str | None = None
    reason: str | None = None
    revisit_when: str | None = None
    watch: Any = None  # a machine-checkable watch (see scars.core.samsara.watches), a string or a mapping
    watch_base: str | None = None  # the git commit current when an accept with a watch was made
    decided_by: str = ""
    decided_at: str = ""
    reviewed_by: str | None = None
    pending_review: bool = False
    batch_id: str | None = None
    blocked_outcome: BlockedOutcome | None = None
    # Carried over from an earlier round of iteration-log.yaml (never in the journal): the round,
    # the legacy expiry_date of an era-A accept, and how the log's description was matched.
    carried_round: int | None = None
    expiry_date: str | None = None
    matched: str | None = None
    # A journal decision made in a round that is closed now: that round (never in the journal;
    # :func:`with_closed_rounds`), so it is labelled as a decision the log carries is.
    decided_round: int | None = field(default=None, compare=False)

    @property
    def round_label(self) -> int | None:
        """The closed round the decision belongs to: carried from it, or made in scars in it."""
        return self.carried_round if self.carried_round is not None else self.decided_round

    @property
    def carried(self) -> bool:
        """The decision comes from iteration-log.yaml, not from a person in scars."""
        return self.carried_round is not None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("decided_round", None)  # derived from the journal's round closes, never recorded
        for key in _CARRIED_FIELDS:  # only a carried decision has them (never a journal record)
            if out.get(key) is None:
                out.pop(key, None)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Decision:
        known = set(fields(cls))
        return cls(**{k: v for k, v in data.items() if k in known})

    def with_(self, **changes: Any) -> Decision:
        return replace(self, **changes)


def validate_decision(action: str, **fields_: Any) -> list[FieldError]:
    """Every problem with a decision, one :class:`FieldError` per field (empty list = valid).

    ``fields_`` are Decision fields (re_review_signal, owner, rationale, reason,
    revisit_when, watch, reviewed_by, decided_by …); unknown names are refused too.
    """
    errors: list[FieldError] = []
    known = set(fields(Decision)) - {"item_id", "action"}
    for name in fields_:
        if name not in known:
            errors.append(FieldError(name, "is not a decision field"))
    if action not in ACTIONS:
        errors.append(FieldError("action", f"must be one of fix, accept, defer (got {action!r})"))
        return errors
    if action == "accept":
        for name in ACCEPT_REQUIRED:
            problem = text_problem(fields_.get(name))
            if problem:
                errors.append(FieldError(name, f"an accept needs a meaningful {FIELD_LABEL[name]}: {problem}"))
    for name, actions in _ONLY_FOR.items():
        value = fields_.get(name)
        if value is not None and value != "" and action not in actions:
            errors.append(FieldError(name, f"applies only to {' / '.join(actions)}, not to {action}"))
    for name in TEXT_FIELDS:
        value = fields_.get(name)
        if value is None:
            continue
        if not isinstance(value, str):
            errors.append(FieldError(name, f"must be text, not {type(value).__name__}"))
        elif len(value) > MAX_TEXT:
            errors.append(FieldError(name, f"is too long ({len(value)} characters; at most {MAX_TEXT})"))
        elif (name not in ACCEPT_REQUIRED or action != "accept") and value != "" and (problem := text_problem(value)):
            # Optional texts: absent is fine, but a given one must say something.
            errors.append(FieldError(name, problem))
    watch = fields_.get("watch")
    if watch is not None and not isinstance(watch, (str, dict)):
        errors.append(FieldError("watch", "must be text or a mapping"))
    elif isinstance(watch, str) and watch and (problem := text_problem(watch)):
        errors.append(FieldError("watch", problem))
    elif watch:
        problem = validate_watch(watch)
        if problem:
            errors.append(FieldError("watch", problem))
    reviewed_by = fields_.get("reviewed_by")
    decided_by = fields_.get("decided_by")
    if (
        isinstance(reviewed_by, str)
        and is_meaningful(reviewed_by)
        and decided_by
        and reviewed_by.strip().casefold() == str(decided_by).strip().casefold()
    ):
        errors.append(FieldError("reviewed_by", "a sign-off must come from a second person, not the one who decided"))
    outcome = fields_.get("blocked_outcome")
    if outcome is not None and outcome not in BLOCKED_OUTCOMES:
        errors.append(FieldError("blocked_outcome", f"must be one of {', '.join(BLOCKED_OUTCOMES)}"))
    first: dict[str, FieldError] = {}
    for e in errors:  # one error per field: the first found is the most useful
        first.setdefault(e.field, e)
    return list(first.values())


def format_errors(errors: list[FieldError]) -> str:
    return "; ".join(str(e) for e in errors)


def resolve_user(explicit: str | None = None) -> str:
    """Who decides: ``explicit`` (``--as``), then ``SCARS_USER``, then ``user`` of config.toml,
    then git's ``user.name``, then the login name."""
    env = settings.current()
    for candidate in (explicit, env.user, env.config_user):
        if candidate and candidate.strip():
            return candidate.strip()
    return user_name() or env.login or "unknown"


def make_decision(
    item_id: str, action: str, *, decided_by: str, decided_at: str | None = None, **fields_: Any
) -> Decision:
    """A validated Decision; raises DecisionRefused naming every bad field."""

    clean: dict[str, Any] = {k: (v.strip() if isinstance(v, str) else v) for k, v in fields_.items()}
    clean = {k: v for k, v in clean.items() if not (v == "" and k in TEXT_FIELDS)}
    errors = validate_decision(action, decided_by=decided_by, **clean)
    if not item_id or not isinstance(item_id, str):
        errors.insert(0, FieldError("item_id", "is required"))
    if errors:
        raise DecisionRefused(f"decision refused for {item_id}: {format_errors(errors)}", errors)
    return Decision(
        item_id=item_id,
        action=action,  # type: ignore[arg-type]  # validate_decision refused any other action
        decided_by=decided_by,
        decided_at=decided_at or now_iso(),
        **clean,
    )


# Record types.
DECISION = "decision"  # {"decisions": [Decision fields …], "batch_id": str | None}


# {"target": seq of the reverted record, "items": [ids]}, and "withdraws_round": the seq of the
# round_start it takes back with it (a round a decision opened, left holding nothing by this undo).
UNDO = "undo"


SIGN_OFF = "sign_off"  # {"item_id", "reviewed_by"}


BLOCKED_FIX = "blocked_fix"  # {"item_id", "outcome", "reason"}


# {"round", "signal_lost_before", "budget_context", "item_ids"}; "opened_by": "decision" when a
# decision opened it (docs/decisions.md, "When a round opens"), absent when it was started explicitly.
ROUND_START = "round_start"
OPENED_BY_DECISION = "decision"


ROUND_CLOSE = "round_close"  # {"round", "entry": the iteration-log round mapping}


# {"entries": [one DecisionEntry record], "round", "source"}: an auto-decisions.md entry of its
# own. Any record may carry "entries": the entries of the decision it records (a round close,
# a blocked-fix outcome), kept here until they are on disk in auto-decisions.md.
AUTO_DECISION = "auto_decision"


REOPEN = "reopen"  # {"item_id", "cause", "watch"}: a fired watch sends the item back to triage


# {"gate", "answer", "reason", "round"}: a gate answer that writes no other record (a human-mode
# entry or triage gate), kept for who answered and whence. Changes no state.
GATE_ANSWER = "gate_answer"


UNDOABLE = frozenset({DECISION, SIGN_OFF, BLOCKED_FIX})


@record(frozen=False)
class JournalState:
    """The state a journal's records give, replayed in order (see :func:`replay`)."""

    decisions: dict[str, Any] = field(default_factory=dict)  # item_id -> Decision
    history: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # item_id -> superseded records
    undo_stack: list[int] = field(default_factory=list)  # seqs of undoable records, newest last
    undone: set[int] = field(default_factory=set)
    open_round: dict[str, Any] | None = None  # the round_start record of the open round
    closed_rounds: list[dict[str, Any]] = field(default_factory=list)  # round_close records
    last_close_seq: int = 0
    # every entry the journal holds: {"seq", "round", "gate_id", "entry"} (a DecisionEntry record)
    auto_decisions: list[dict[str, Any]] = field(default_factory=list)
    last_triage_seq: int = 0  # seq of the latest triage change: a decision (or batch) recorded or undone
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

    kind = rec.get("type")
    seq: Any = rec.get("seq")  # a journal record is untrusted JSON
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

    if kind in (DECISION, UNDO) and isinstance(seq, int):
        state.last_triage_seq = seq
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
        item: Any = rec.get("item_id")
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
        withdrawn = rec.get("withdraws_round")
        if type(withdrawn) is int and state.open_round is not None and state.open_round.get("seq") == withdrawn:
            state.open_round = None  # the round start went with the decision that opened it
    elif kind == ROUND_START:
        state.open_round = rec
    elif kind == ROUND_CLOSE:
        state.closed_rounds.append(rec)
        state.open_round = None
        state.last_close_seq = seq if isinstance(seq, int) else state.last_close_seq
        state.undo_stack.clear()  # decisions of a closed round are in iteration-log.yaml now
    for entry in rec.get("entries") or ():
        if isinstance(entry, dict):
            state.auto_decisions.append(
                {"seq": seq, "round": rec.get("round"), "gate_id": entry.get("gate_id"), "entry": entry}
            )


_PAST = {"fix": "fixed", "accept": "accepted", "defer": "deferred"}


def carried_from_log(feature: Any) -> dict[str, Decision]:
    """item_id -> the decision an earlier round of iteration-log.yaml recorded for the item.

    Each triaged description is matched to the item it describes by the one matcher
    (``scars.core.samsara.matching``; ``feature.log_matches``): only confident matches carry a
    decision (weak and ambiguous ones are shown, never taken); a later round's decision replaces
    an earlier one. Resolved items carry none (they left the remaining set). An accept keeps its
    signal, owner and rationale as written and, for an era-A accept, its ``expiry_date``."""
    remaining: set[str] | None = None  # the remaining items' ids, taken when a match names an item
    out: dict[str, Decision] = {}
    for m in sorted(getattr(feature, "log_matches", ()) or (), key=lambda m: m.round):
        item_id = m.item_id
        if item_id is None or m.action not in ACTIONS:
            continue
        if remaining is None:
            remaining = {it.id for it in getattr(feature, "items", ())}
        if item_id not in remaining:
            continue
        fields_: dict[str, Any] = {}
        if m.action == "accept" and isinstance(m.entry, dict):
            for key in ("re_review_signal", "owner", "rationale", "expiry_date"):
                value = m.entry.get(key)
                if value is not None and str(value).strip():
                    fields_[key] = " ".join(str(value).split())
            for key in ("decided_by", "reviewed_by"):  # written by scars as extra keys
                if isinstance(m.entry.get(key), str) and m.entry[key].strip():
                    fields_[key] = m.entry[key].strip()
        out[item_id] = Decision(
            item_id=item_id,
            action=m.action,  # checked against ACTIONS above
            carried_round=m.round,
            matched=f"{m.confidence}: {m.reason}",
            **fields_,
        )
    return out


def describe_carried(d: Decision) -> str:
    """A carried decision as what it is: "accepted in round 1 — legacy expiry 2026-09-29, no owner"."""
    text = f"{_PAST.get(d.action, d.action)} in round {d.carried_round} (iteration-log.yaml)"
    if d.action == "accept":
        details = []
        if d.expiry_date:
            details.append(f"legacy expiry {d.expiry_date}")
        if not d.re_review_signal:
            details.append("no re-review signal")
        if not d.owner:
            details.append("no owner")
        else:
            details.append(f"owner {d.owner}")
        text += " — " + ", ".join(details)
    return text


def with_closed_rounds(state: JournalState) -> dict[str, Decision]:
    """The journal's decisions, each made before a round close labelled with that round
    (``decided_round``: the first round closed after the decision's last change): a round-2 fix
    reads ``F fix r2`` after round 2 closed, as a round-1 accept the log carries reads ``A acc r1``."""
    closes = sorted(
        (rec["seq"], rec["round"])
        for rec in state.closed_rounds
        if type(rec.get("seq")) is int and type(rec.get("round")) is int
    )
    out: dict[str, Decision] = {}
    for item, d in state.decisions.items():
        seq = state.changed_at.get(item)
        closed = next((rnd for close_seq, rnd in closes if isinstance(seq, int) and close_seq > seq), None)
        out[item] = d if closed is None else d.with_(decided_round=closed)
    return out


def with_carried(journal: dict[str, Any], carried: dict[str, Decision], reopened: Iterable[str] = ()) -> dict[str, Any]:
    """The decisions in force: a person's decision in scars (the journal) over the one an earlier
    round of the log carried; an item a fired watch reopened keeps none until decided again."""
    out: dict[str, Any] = {k: v for k, v in carried.items() if k not in set(reopened)}
    out.update(journal)
    return out


def check_items(state: JournalState, items: Iterable[Any]) -> list[str]:
    """Take back every decision made on a different item than the one holding its id now.

    An item's id counts the occurrence of its text in its report and category, so an item
    with the same text inserted *before* it takes over its id (docs/commands.md, "Item ids"). Each
    decision records the fingerprint of the item it was made on
    (:func:`scars.core.samsara.items.item_fingerprint`); when the item holding the id now has
    another fingerprint, the decision leaves ``state.decisions`` for ``state.moved`` — the
    item is shown undecided and decided again, never silently given someone else's decision.
    Returns one line per decision taken back. Decisions recorded without a fingerprint, and
    decisions whose id no item holds, are left as they are.
    """

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
        state.moved[item_id] = {
            "decision": dec,
            "recorded": recorded,
            "now": now,
            "text": text,
            "decided_item_now": now_at[0] if len(now_at) == 1 else None,
        }
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

    path = Path(feature_dir) / STATE_DIR / JOURNAL_NAME
    if not path.exists():
        return JournalState()
    state = replay(read_journal(path).records)
    if items is not None:
        check_items(state, items)
    return state


def current_decisions(feature_dir: str | os.PathLike[str], feature: Feature | None = None) -> dict[str, Decision]:
    """item_id -> Decision in force: the journal's, over those earlier rounds of
    iteration-log.yaml carried (:func:`carried_from_log`, with the read ``feature``).

    With the read ``feature``, a decision made on another item than the one holding its id
    now is left out (scars.core.samsara.decisions.check_items; docs/commands.md, "Item ids").
    """
    items = None if feature is None else list(feature.items) + list(feature.resolved)
    state = feature_state(feature_dir, items=items)
    if feature is None:
        return dict(state.decisions)
    return with_carried(state.decisions, carried_from_log(feature), state.reopened)


def current_reopened(feature_dir: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """item_id -> reopen record of items a fired watch sent back to triage, not decided since."""
    state = feature_state(feature_dir)
    return {k: dict(v) for k, v in state.reopened.items() if k not in state.decisions}


def reopened_now(feature_dir: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """Items a fired watch reopened and nobody has decided since, each with its cause, watch,
    time and the number of its auto-decisions.md entry: journal reopen records, and fired
    records of accepts that only iteration-log.yaml held (no journal decision to supersede).
    Read from disk; a session has them from its own replay (``FeatureSession.reopened_now``)."""
    return reopened_from(feature_state(feature_dir), reopened_items(feature_dir))


def reopened_from(state: JournalState, fired: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """:func:`reopened_now` of a replayed journal and the watch log's ``fired`` records."""
    out: dict[str, dict[str, Any]] = {}
    for item_id, rec in state.reopened.items():
        if item_id in state.decisions:
            continue
        f = fired.get(item_id, {})
        out[item_id] = {
            "cause": rec.get("cause"),
            "watch": rec.get("watch"),
            "at": rec.get("at"),
            "by": rec.get("by"),
            "auto_decision": f.get("auto_decision"),
        }
    for item_id, f in fired.items():
        if item_id in out or item_id in state.decisions:
            continue
        out[item_id] = {
            "cause": f.get("cause"),
            "watch": f.get("watch"),
            "at": f.get("at"),
            "by": f.get("by"),
            "auto_decision": f.get("auto_decision"),
        }
    return out
