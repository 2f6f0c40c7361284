"""A writer's (or reader's) session on one samsara feature directory.

``FeatureSession.open(dir)`` takes the feature's lock (unless ``read_only``), reads the
feature, replays the journal (``.scars/journal.jsonl``) and writes any round the journal
has closed but iteration-log.yaml does not hold yet (an earlier run stopped in between).

Every change is one journal record, fsynced under the lock, before the method returns:
decisions (:meth:`decide`, :meth:`decide_many` — one record per batch, so one undo reverts
it), :meth:`undo`, :meth:`sign_off`, :meth:`record_blocked_fix`, :meth:`start_round`,
:meth:`close_round`. iteration-log.yaml is written at round close only (a decision never
waits for a YAML rewrite), by appending the round's text after the last round.
auto-decisions.md entries are built by the gates (``scars.core.gates``) and handed in, each with
the journal record of its decision (:meth:`append_auto_decision`, :meth:`record_blocked_fix`,
:meth:`close_round`): the journal record holds the entry first, then it is appended; an entry a
crash left unwritten is appended when the feature is next opened for writing.

Reopening replays the journal and gives the same state: a crash or a kill loses nothing
that a method had returned.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scars.core.clock import now_iso
from scars.core.errors import (
    AgentAnswerRefused,
    DecisionRefused,
    FieldError,
    IterationStopped,
    PartlyWritten,
    PathNotFound,
    ScarsError,
    UsageError,
)
from scars.core.formats.auto_decisions import FILE_NAME as AUTO_DECISIONS
from scars.core.formats.auto_decisions import DecisionEntry, append_entry, parse_auto_decisions, read_entries_text
from scars.core.formats.iteration_log import DECISIONS as ROUND_DECISIONS
from scars.core.formats.iteration_log import LOG_NAME, IterationLogFile
from scars.core.git import current_commit
from scars.core.model import Feature
from scars.core.provenance import Provenance
from scars.core.provenance import decided_by as decider
from scars.core.records import record, replace
from scars.core.samsara.decisions import (
    AUTO_DECISION,
    BLOCKED_FIX,
    BLOCKED_OUTCOMES,
    DECISION,
    GATE_ANSWER,
    OPENED_BY_DECISION,
    REOPEN,
    ROUND_CLOSE,
    ROUND_START,
    SIGN_OFF,
    UNDO,
    UNDOABLE,
    Decision,
    JournalState,
    apply,
    carried_from_log,
    check_items,
    format_errors,
    make_decision,
    reopened_from,
    replay,
    resolve_user,
    with_carried,
    with_closed_rounds,
)
from scars.core.samsara.items import item_fingerprint
from scars.core.samsara.layout import cached_read, repo_root_of
from scars.core.samsara.layout import feature_dir as feature_dir_of
from scars.core.samsara.rounds import (
    COUNTED_BY_KEY,
    COUNTED_BY_SCARS,
    RULE_3,
    RoundFigures,
    budget_spent_not_given,
    round_figures,
    round_start_snapshot,
)
from scars.core.samsara.watches import reopened_items
from scars.core.sanitize import shell_word
from scars.core.storage import cache as feature_cache
from scars.core.storage.cache import fingerprint as feature_fingerprint
from scars.core.storage.confine import check_inside
from scars.core.storage.durable import WriteFailed, clean_stale_temps
from scars.core.storage.journal import Journal, journal_path, read_journal
from scars.core.storage.lock import FeatureLock, current_holder
from scars.core.storage.parallel import Feed
from scars.core.text import text_problem

# The round decisions that end the iteration (the loop goes on to Validation).
STOPPING = ("stop", "forced_stop")

# Words that name a safety-valve trigger in a forced stop's reason (formats.md §1.4, Rule 6).
VALVE_TRIGGERS = {
    "max_rounds": re.compile(r"max(imum)?[\s_-]*rounds?", re.I),
    "stagnation": re.compile(r"stagnat", re.I),
    "net_rot": re.compile(r"net[\s_-]*rot", re.I),
    "reviewer_retry_limit": re.compile(r"(reviewer|re-?dispatch)[\s_-]*(retr|limit)", re.I),
}


@record(slots=True)
class HeldFigures:
    """The open round's figures with what they were computed from (``basis``: the cache token of
    the Feature read — the files it was read from, by the cache's own rule — the round's start, its
    triage and the decisions in force; None: not known to be current, so never reused). A gate
    hands them from its evidence to its record and the round's close, which use them while the
    basis holds and compute them again when any of it changed (:meth:`FeatureSession.held_figures`;
    the session keeps the ones it computed last, which its round's close uses the same way)."""

    figures: RoundFigures
    basis: tuple[Any, ...] | None


# The reader (YAML, the log matcher, the possible patterns) is imported by _read_feature on a cache
# miss, through importlib: scars.core imports no own module inside a function (tests/core/test_purity.py).
# Named here for the type checker and the import contracts.
READER = "scars.core.samsara.feature"
AGGREGATE = "scars.core.samsara.aggregate"
if TYPE_CHECKING:
    from scars.core.samsara import aggregate, feature  # noqa: F401


def _read_feature(
    path: Path,
    meanwhile: Callable[[Feature, dict[str, Any] | None], None] | None = None,
    ahead: ReadAhead | None = None,
) -> tuple[Feature, dict[str, Any] | None]:
    """:func:`scars.core.samsara.feature.read_feature`, the reader imported only when the cache has
    not the feature (a session over a cached feature paints its first screen without YAML, the
    log matcher or the possible patterns: tests/tui/app/test_first_paint_imports.py), and the
    inputs' fingerprint taken before it was read (None: not taken, the cache is off; also told to
    ``meanwhile``, called with the feature but for its possible patterns while they are computed).
    ``ahead``: a read of the same directory started earlier (:func:`read_ahead`): its feature is
    taken when it was read from the inputs as they are now."""
    p, root, fp, hit = cached_read(path)
    if hit is not None:
        return hit, fp
    if ahead is not None:
        got = ahead.take(p, fp)
        if got is not None:
            feature, taken, pending = got
            if not pending:
                return feature, taken
            if meanwhile is not None:
                meanwhile(feature, taken)
            whole = ahead.rest()
            if whole is None:  # the child gave no patterns: computed here, for the same items
                whole = importlib.import_module(AGGREGATE).with_possible_patterns(feature)
            return whole, taken
    reader = importlib.import_module(READER)  # the reader only on a cache miss

    def early(aggregated: Feature) -> None:  # read_missed's meanwhile, told the fingerprint too
        assert meanwhile is not None
        meanwhile(aggregated, fp)

    return reader.read_missed(p, root, fp, early if meanwhile is not None else None, early=meanwhile is not None), fp


def _read_in_child(send: Callable[[Any], None], path: str) -> None:
    """What a read-ahead child sends (``storage.parallel.Feed``): ``("whole", fingerprint,
    feature)``, or ``("early", fingerprint, feature)`` with the feature but for its possible
    patterns as soon as it is read and then ``("patterns", possible patterns)``; the fingerprint
    is the inputs' taken before reading, the feature read as :func:`_read_feature` reads it
    (from the cache, else read and stored there)."""
    # The child writes nothing to the terminal: the parent is about to draw the app on it.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    p, root = feature_dir_of(path)
    before = feature_fingerprint(p, root)
    early = False

    def sent_early(aggregated: Feature, _fp: dict[str, Any] | None) -> None:
        nonlocal early
        send(("early", before, aggregated))
        early = True

    feature, _fp = _read_feature(p, sent_early)
    send(("patterns", feature.possible_patterns) if early else ("whole", before, feature))


class ReadAhead:
    """A feature directory read in a forked child while this process goes on (imports and starts
    the app): :func:`read_ahead`. :meth:`take` gives its feature when the inputs are still what
    the child saw before it read them (the stat fingerprint of every input, as the cache keys its
    entries and a reload compares them) — else None, and the caller reads them itself; a feature
    given before its possible patterns gets them from :meth:`rest`."""

    def __init__(self, path: Path, child: Feed) -> None:
        self.path = path
        self._child = child
        self._early: Feature | None = None

    def take(self, path: Path, now: dict[str, Any] | None = None) -> tuple[Feature, dict[str, Any], bool] | None:
        """(the child's feature of ``path``, the inputs' fingerprint it was read from, whether its
        possible patterns are still computed — :meth:`rest` gives the feature with them), waiting
        for the child's read; None: another directory, no result (the child failed or was killed),
        or an input changed since the child looked. ``now``: the inputs' fingerprint the caller
        just took (the cache's look), else taken here."""
        if path != self.path:
            return None
        given, value = self._child.next()
        if not given:
            return None
        kind, before, feature = value
        if now is None:
            p, root = feature_dir_of(path)
            now = feature_fingerprint(p, root)
        if now != before:
            self.close()
            return None
        if kind == "early":
            self._early = feature
            return feature, before, True
        return feature, before, False

    def rest(self) -> Feature | None:
        """The feature :meth:`take` gave before its possible patterns, with them (waiting for the
        child); None when the child gave none."""
        given, value = self._child.next()
        if not given or self._early is None:
            return None
        _kind, patterns = value
        return replace(self._early, possible_patterns=patterns)

    def close(self) -> None:
        """Nothing more wanted: the child is let finish what it took (its cache file), or killed
        when nothing it read was taken."""
        if self._early is None:
            self._child.cancel()
        else:
            self._child.close()


def _report_bytes(feature: Path, limit: int) -> int:
    """The bytes of the feature's scar reports, counted until past ``limit`` (by lstat: nothing
    is followed; a linked scar-reports/ counts as past it)."""
    reports = feature / "scar-reports"
    if os.path.islink(reports):
        return limit + 1
    total = 0
    try:
        with os.scandir(reports) as it:
            for e in it:
                total += e.stat(follow_symlinks=False).st_size
                if total > limit:
                    break
    except OSError:  # no scar-reports/: the other files are small
        pass
    return total


def read_ahead(feature_dir: str | os.PathLike[str], *, max_report_bytes: int) -> ReadAhead | None:
    """Start reading ``feature_dir`` in a forked child (``storage.parallel.Feed``: Linux, this
    process running one thread, more than one core), for a :class:`FeatureSession` opened with
    ``ahead=`` later. Only a feature whose scar reports hold at most ``max_report_bytes`` (the
    reads worth waiting for whole: a larger feature is shown before its possible patterns, read
    in the session's own thread). None when no child was started or the directory is not a
    feature directory (the session's own open says why)."""
    given = Path(feature_dir).expanduser().absolute()
    try:
        check_inside(given, repo_root_of(given) or given, "the feature directory")  # as FeatureSession.open
        p, _root = feature_dir_of(given.resolve())
    except (ScarsError, OSError):
        return None
    if _report_bytes(p, max_report_bytes) > max_report_bytes:
        return None
    child = Feed(_read_in_child, (str(p),))
    if not child.forked:
        return None
    return ReadAhead(p, child)


class FeatureSession:
    """See the module docstring. Use as a context manager (``with FeatureSession.open(d) as s``)."""

    def __init__(
        self, path: Path, *, read_only: bool, user: str | None, lock: FeatureLock | None, root: Path | None = None
    ):
        self.path = path
        # The repository every write of the session stays in (storage/confine): its root, or the
        # feature directory itself when there is none around it.
        self.root = root if root is not None else path
        self.read_only = read_only
        self._user = user  # None: resolved when first asked (:attr:`user`)
        self._lock = lock
        self.lock_holder: dict | None = None
        self.problems: list[str] = []  # journal lines skipped, logs not written …
        self.moved_warnings: list[str] = []  # decisions taken back: made on another item (see moved)
        self.feature: Feature = None  # type: ignore[assignment]  # set by _load(), which open() runs first
        self._journal: Journal | None = None
        self._records: list[dict[str, Any]] = []
        self._state = JournalState()
        self._log = IterationLogFile(path, root=self.root)
        self._index: tuple[Any, dict[str, Any]] | None = None  # (feature, item_id -> item)
        self._carried: tuple[Any, dict[str, Decision]] | None = None  # (feature, carried decisions)
        self._watch_reopened: set[str] = set()  # items .scars/watches.jsonl says a watch reopened
        self._watch_fired: dict[str, dict[str, Any]] = {}  # those items' latest fired records
        self._reopened_memo: tuple[Any, Any, dict[str, dict[str, Any]]] | None = None
        self._state_version = 0  # moves on every record applied and every replay (the memo's key)
        self._figures: HeldFigures | None = None  # the open round's figures computed last
        # Where this session's changes come from (scars.core.provenance; set by the front end at
        # open, or for one answer by :meth:`answering`): kept in every journal record it writes.
        self.provenance: Provenance | None = None
        # What opening this session wrote that the journal held and the files lacked: the rounds
        # iteration-log.yaml got and the number of auto-decisions.md entries (:meth:`flush`).
        self.written_at_open: tuple[list[int], int] = ([], 0)

    # ------------------------------------------------------------------ opening

    @property
    def user(self) -> str:
        """Who decides in this session (:func:`~scars.core.samsara.decisions.resolve_user` of the
        name it was opened with, resolved once); set to record as another (a pair's driver)."""
        if self._user is None:
            self._user = resolve_user(None)
        return self._user

    @user.setter
    def user(self, name: str) -> None:
        self._user = name

    @classmethod
    def open(
        cls,
        feature_dir: str | os.PathLike[str],
        *,
        read_only: bool = False,
        user: str | None = None,
        meanwhile: Callable[[FeatureSession], None] | None = None,
        provenance: Provenance | None = None,
        ahead: ReadAhead | None = None,
    ) -> FeatureSession:
        """``meanwhile``: called, when the feature is read (not found in the cache), with this
        session open (its journal read and replayed) over the feature but for its possible
        patterns, while they are computed; the session's feature gets them before this returns.
        The session is usable from then on (the app shows and decides meanwhile). ``ahead``: the
        read of this directory :func:`read_ahead` started, taken instead of reading when it read
        the inputs as they are (closed once the feature is read; kept when the lock refuses the
        open, for the read-only open that follows)."""
        path = Path(feature_dir).expanduser()
        if not path.is_dir():
            raise PathNotFound(f"{feature_dir}: no such feature directory")
        given = path.absolute()
        root = repo_root_of(given) or given
        check_inside(given, root, "the feature directory")  # a symlinked feature leading out of its repository
        path = path.resolve()
        # Who decides: a session that records resolves it now (the lock says who holds it); a
        # read-only one when first asked (bare `scars` opens every feature of a repository to
        # list it, and git was asked for the same user.name once per feature).
        who = None if read_only and not (user and user.strip()) else resolve_user(user)
        lock = None
        if not read_only:
            assert who is not None
            lock = FeatureLock(path, user=who, root=root).acquire()
        try:
            session = cls(path, read_only=read_only, user=who, lock=lock, root=root)
            session.provenance = provenance
            session._load(meanwhile, ahead)
        except BaseException:
            if lock is not None:
                lock.release()
            raise
        finally:
            if ahead is not None:
                ahead.close()
        return session

    def _load(self, meanwhile: Callable[[FeatureSession], None] | None = None, ahead: ReadAhead | None = None) -> None:
        opened = False

        def early(aggregated: Feature, fp: dict[str, Any] | None) -> None:
            nonlocal opened
            self._open_over(aggregated, fp)
            opened = True
            assert meanwhile is not None
            meanwhile(self)

        feature, fp = _read_feature(self.path, early if meanwhile is not None else None, ahead)
        if opened:
            self.feature = feature  # the same items, and their possible patterns
        else:
            self._open_over(feature, fp)

    def _open_over(self, feature: Feature, fp: dict[str, Any] | None = None) -> None:
        """The journal read and replayed over ``feature`` (read under the inputs' fingerprint
        ``fp``, when known: the log file then parsed again only if it changed since)."""
        self.feature = feature
        self._read_watch_reopened()
        if self.read_only:
            read = read_journal(journal_path(self.path), root=self.root)
            self._records = read.records
            self.problems = list(read.problems)
            self.lock_holder = current_holder(self.path, root=self.root)
        else:
            self._journal = Journal(journal_path(self.path), root=self.root)
            self._records = self._journal.records
            self.problems = list(self._journal.problems)
            clean_stale_temps(self._log.path, older_than=0, root=self.root)
        self._replay()
        self._log.reload()
        self._log.assume_read(feature.iteration_log, fp["files"].get(LOG_NAME) if fp is not None else None)
        if not self.read_only and self._may_record():  # an agent's refused session writes nothing
            missing = self._rounds_missing()
            rounds, failed = self._flush_rounds(missing)
            if failed is not None:
                self._not_all_written(_rounds_text(missing), {LOG_NAME: failed})
            entries, failed = self._write_pending_entries()
            if failed is not None:
                self._not_all_written("an auto-decisions.md entry", {AUTO_DECISIONS: failed})
            self.written_at_open = (rounds, entries)

    def _replay(self) -> None:
        """The state the journal gives, with decisions made on another item than the one
        holding their id now taken back (scars.core.samsara.decisions.check_items; docs/commands.md, Item ids)."""
        self._state = replay(self._records)
        self._state_version += 1
        items = list(self.feature.items) + list(self.feature.resolved) if self.feature is not None else []
        self.moved_warnings = check_items(self._state, items)

    @property
    def moved(self) -> dict[str, dict[str, Any]]:
        """item_id -> the decision taken back because it was made on another item
        (``decision``, ``text``, ``decided_item_now``): the item is undecided until decided again."""
        return {k: dict(v) for k, v in self._state.moved.items()}

    def reload(self) -> None:
        """Re-read the feature, the journal and iteration-log.yaml from disk."""
        if self._journal is not None:
            self._journal = Journal(journal_path(self.path), root=self.root)
        self._load()

    def close(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def __enter__(self) -> FeatureSession:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ state

    @property
    def decisions(self) -> dict[str, Decision]:
        """The decisions in force: a person's (the journal) over those earlier rounds of
        iteration-log.yaml carried (``Decision.carried``; re-deciding an item replaces it)."""
        return with_carried(with_closed_rounds(self._state), self.carried, self._reopened_ids())

    @property
    def journal_decisions(self) -> dict[str, Decision]:
        """The decisions people made in scars (the journal) only: the ones a sign-off, a
        blocked-fix outcome, an undo or a reopen act on."""
        return dict(self._state.decisions)

    @property
    def carried(self) -> dict[str, Decision]:
        """item_id -> the decision an earlier round of iteration-log.yaml recorded for it
        (:func:`scars.core.samsara.decisions.carried_from_log`)."""
        cached = self._carried
        if cached is None or cached[0] is not self.feature:
            cached = self._carried = (self.feature, carried_from_log(self.feature) if self.feature is not None else {})
        return dict(cached[1])

    def _reopened_ids(self) -> set[str]:
        """Items a fired watch reopened: they keep no carried decision until decided again."""
        return set(self._state.reopened) | self._watch_reopened

    @property
    def reopened(self) -> dict[str, dict[str, Any]]:
        """Items a fired re-review watch sent back to triage and nobody has decided since:
        item_id -> the journal's reopen record (``cause``, ``watch``, ``at``, ``by``)."""
        return {k: dict(v) for k, v in self._state.reopened.items()}

    def history(self, item_id: str) -> list[dict]:
        """Earlier states of the item's decision, oldest first (each with the ``seq`` that made it)."""
        return [dict(h) for h in self._state.history.get(item_id, [])]

    @property
    def records(self) -> list[dict[str, Any]]:
        return list(self._records)

    def can_undo(self) -> bool:
        return bool(self._state.undo_stack)

    def current_round(self) -> int | None:
        rec = self._state.open_round
        return rec.get("round") if rec else None

    def open_round(self) -> dict[str, Any] | None:
        return dict(self._state.open_round) if self._state.open_round else None

    def closed_rounds(self) -> list[dict[str, Any]]:
        return [dict(r.get("entry") or {}) for r in self._state.closed_rounds]

    # ------------------------------------------------------------------ writes

    @contextlib.contextmanager
    def answering(self, provenance: Provenance | None) -> Iterator[None]:
        """The changes made inside come from ``provenance`` (a gate answer, a request, through a
        session a front end holds open); None keeps the session's own."""
        before = self.provenance
        if provenance is not None:
            self.provenance = provenance
        try:
            yield
        finally:
            self.provenance = before

    def decided_by(self) -> str:
        """Who a change made now is recorded as (:func:`scars.core.provenance.decided_by`: the
        session's user, or the agent's name in human-in-the-loop mode when agent answers are
        allowed); raises AgentAnswerRefused when an agent's answer may not be recorded here."""
        human = not (self.feature is not None and self.feature.auto_mode)
        return decider(self.user, self.provenance, human_mode=human)

    def _may_record(self) -> bool:
        """Whether a change made now may be recorded at all (:meth:`decided_by` does not refuse it)."""
        try:
            self.decided_by()
        except AgentAnswerRefused:
            return False
        return True

    def _stamp(self, *, scars_own: bool = False) -> dict[str, Any]:
        """Who and whence of a journal record (checked before anything is written). ``scars_own``:
        a change scars makes by its own rule (a fired watch's reopen), no one's decision: recorded
        as the user who ran it, with its provenance, and never refused as an agent's answer."""
        out: dict[str, Any] = {"by": self.user if scars_own else self.decided_by()}
        if self.provenance is not None:
            out["provenance"] = self.provenance.to_record()
        return out

    def _writable(self) -> Journal:
        if self.read_only or self._journal is None:
            raise UsageError("this session is read-only (another writer holds the lock or it was opened read-only)")
        return self._journal

    def _append(
        self, type_: str, *, entries: Iterable[DecisionEntry] = (), scars_own: bool = False, **payload: Any
    ) -> dict[str, Any]:
        """Append one journal record (fsynced). ``entries`` ride on it: checked before anything is
        written, kept in the record, and appended to auto-decisions.md by the caller
        (:meth:`_write_entries`) once the record is durable. ``scars_own``: see :meth:`_stamp`."""
        entries = list(entries)
        for e in entries:
            e.check()
        if entries:
            payload["entries"] = [e.to_record() for e in entries]
        journal = self._writable()
        rec = journal.append(type_, at=now_iso(), **self._stamp(scars_own=scars_own), **payload)
        apply(self._state, rec)
        self._state_version += 1
        return rec

    def _write_entries(self, entries: Iterable[DecisionEntry], what: str) -> list[int]:
        """Append the entries of a journal record just written; a failure says the decision
        itself is recorded (:meth:`_not_all_written`)."""
        numbers, failed = self._try_entries(entries)
        if failed is not None:
            raise self._not_all_written(what, {AUTO_DECISIONS: failed}) from failed
        return numbers

    def _try_entries(self, entries: Iterable[DecisionEntry]) -> tuple[list[int], ScarsError | None]:
        """Append ``entries`` to auto-decisions.md until one fails: their numbers, and the failure."""
        numbers = []
        for e in entries:
            try:
                numbers.append(append_entry(self.path, e, root=self.root))
            except ScarsError as exc:
                return numbers, exc
        return numbers, None

    def _not_all_written(self, what: str, files: dict[str, BaseException | None]) -> BaseException:
        """THE wording of a record the journal holds whose other files were not all written (each
        of ``files`` None when written, else its failure): what was written, what not and why, and
        how to finish. Kept in ``problems``; returned (to raise) as :class:`PartlyWritten` (exit 8)
        when every failure is a failed durable write, else as the failure itself, its message this
        one (a refused merge: exit 5; an error of ours as it is)."""
        said = [
            f"{name} written" if exc is None else f"{name} NOT written ({_cause(exc)})" for name, exc in files.items()
        ]
        msg = (
            f"{what}: recorded in the journal (.scars/journal.jsonl written); " + "; ".join(said) + ". "
            f"Nothing is lost: once that is fixed, `scars round flush --feature {shell_word(str(self.path))}` "
            "writes what the journal holds (so does the next command that records in this feature)"
        )
        self.problems.append(msg)
        failed = [exc for exc in files.values() if exc is not None]
        other = next((exc for exc in failed if not isinstance(exc, WriteFailed)), None)
        if other is None:
            return PartlyWritten(msg)
        if isinstance(other, ScarsError):
            other.args = (msg,)
        return other

    def _write_pending_entries(self) -> tuple[int, ScarsError | None]:
        """Append every entry the journal holds that auto-decisions.md lacks (a crash came in
        between, or a full disk), in journal order: how many were written, and the failure that
        stopped them."""
        pending = self._state.auto_decisions
        if not pending:
            return 0, None
        on_disk = parse_auto_decisions(read_entries_text(self.path, root=self.root))
        written = 0
        for ref in pending:
            try:
                entry = DecisionEntry.from_record(ref["entry"])
            except (TypeError, ValueError) as exc:
                self.problems.append(
                    f"journal record {ref.get('seq')}: an auto-decisions.md entry is unreadable: {exc}"
                )
                continue
            if any(entry.is_written_as(p) for p in on_disk):
                continue
            try:
                append_entry(self.path, entry, root=self.root)
            except ScarsError as exc:
                return written, exc
            written += 1
        return written, None

    def _item(self, item_id: str):
        index = self._index
        if index is None or index[0] is not self.feature:
            items = {i.id: i for i in self.feature.resolved}
            items.update({i.id: i for i in self.feature.items})
            index = self._index = (self.feature, items)
        try:
            return index[1][item_id]
        except KeyError:
            raise DecisionRefused(
                f"no item {item_id!r} in {self.feature.name}; `scars status --json` lists the item ids",
                [FieldError("item_id", "unknown item")],
            ) from None

    def _decision_record(
        self, item_id: str, action: str, batch_id: str | None, fields: dict[str, Any]
    ) -> dict[str, Any]:
        item = self._item(item_id)
        if item.resolved:
            raise DecisionRefused(
                f"item {item_id} is already resolved in its report", [FieldError("item_id", "already resolved")]
            )
        if action == "accept" and fields.get("watch") and not fields.get("watch_base"):
            base = current_commit(self.path)
            if base:
                fields = {**fields, "watch_base": base}
        d = make_decision(item_id, action, decided_by=self.decided_by(), batch_id=batch_id, **fields)
        rec = d.to_dict()
        rec["description"] = item.text

        rec["fingerprint"] = item_fingerprint(item)  # what the decision was made on (docs/commands.md, Item ids)
        return rec

    def decide(self, item_id: str, action: str, *, override_max_rounds: str | None = None, **fields: Any) -> Decision:
        """Record one decision; durable (fsynced) before it returns. Made while no round is open,
        it opens one first (:meth:`open_round_for_decision`, the one rule: refused after a stop;
        ``override_max_rounds`` is the max-rounds valve's override)."""
        self._writable()
        self.check_decision_round(override_max_rounds=override_max_rounds)
        rec = self._decision_record(item_id, action, None, fields)
        self.open_round_for_decision(override_max_rounds=override_max_rounds)
        self._append(DECISION, decisions=[rec], batch_id=None, round=self._round_of_change())
        return self._state.decisions[item_id]

    def decide_many(
        self, item_ids: Iterable[str], action: str, *, override_max_rounds: str | None = None, **fields: Any
    ) -> list[Decision]:
        """One decision for several items as one batch (one record; one undo reverts it all); it
        opens a round as :meth:`decide` does."""
        self._writable()
        ids = list(dict.fromkeys(item_ids))
        if not ids:
            raise UsageError("no items given")
        self.check_decision_round(override_max_rounds=override_max_rounds)
        batch_id = uuid.uuid4().hex[:12]
        recs = [self._decision_record(i, action, batch_id, fields) for i in ids]
        self.open_round_for_decision(override_max_rounds=override_max_rounds)
        self._append(DECISION, decisions=recs, batch_id=batch_id, round=self._round_of_change())
        return [self._state.decisions[i] for i in ids]

    def undo(self) -> list[str]:
        """Revert the latest decision, batch, sign-off or blocked-fix outcome of this round.

        Returns the item ids reverted ([] when there is nothing to undo). Decisions of a
        closed round are in iteration-log.yaml and cannot be undone here.
        """
        self._writable()
        if not self._state.undo_stack:
            return []
        return self._undo_record(self._state.undo_stack[-1])

    def undo_item(self, item_id: str) -> list[str]:
        """Revert the latest record of this round that touched ``item_id`` — any earlier one, not
        only the round's last (a batch is reverted as a whole) — as an undo record like :meth:`undo`.
        Returns the item ids reverted ([] when this round holds nothing of the item to undo); an
        id no item of the feature has, and no record of the round names, is refused (a typo)."""
        self._writable()
        for target in reversed(self._state.undo_stack):
            if item_id in self._record_items(self._record(target)):
                return self._undo_record(target)
        self._item(item_id)  # DecisionRefused for an id the feature does not hold
        return []

    def _record(self, seq: int) -> dict:
        return next(r for r in self._records if r.get("seq") == seq)

    @staticmethod
    def _record_items(rec: dict) -> list[str]:
        if rec.get("type") == DECISION:
            return [str(d["item_id"]) for d in rec.get("decisions") or () if isinstance(d, dict) and d.get("item_id")]
        return [str(rec["item_id"])] if rec.get("item_id") else []

    def _undo_record(self, target: int) -> list[str]:
        items = self._record_items(self._record(target))
        journal = self._writable()
        withdrawn = self._round_left_empty_by_undo(target)
        extra = {"withdraws_round": withdrawn} if withdrawn is not None else {}
        journal.append(UNDO, at=now_iso(), **self._stamp(), target=target, items=items, **extra)
        self._replay()
        return items

    def _round_left_empty_by_undo(self, target: int) -> int | None:
        """The seq of the open round's start when undoing ``target`` leaves that round holding
        nothing and a decision opened it (docs/decisions.md, "When a round opens"): the undo takes the round
        start back with it, so deciding and undoing leaves no round open. None otherwise: a round
        started explicitly (`scars round start`, the app's confirmed start) stays open, and so does
        one where anything else is in force (another decision, a sign-off, a gate answer)."""
        start = self._state.open_round
        if not start or start.get("opened_by") != OPENED_BY_DECISION or type(start.get("seq")) is not int:
            return None
        for rec in self._records:
            seq = rec.get("seq")
            if not isinstance(seq, int) or seq <= start["seq"] or seq == target:
                continue
            kind = rec.get("type")
            if kind == UNDO or (kind in UNDOABLE and seq in self._state.undone):
                continue
            return None  # a change of the round still in force
        return start["seq"]

    def sign_off(self, item_id: str, reviewed_by: str) -> Decision:
        """A second person's sign-off on the item's current decision."""
        self._writable()
        current = self._state.decisions.get(item_id)
        if current is None:
            raise DecisionRefused(f"item {item_id} has no decision to sign off", [FieldError("item_id", "no decision")])
        errors = []
        if problem := text_problem(reviewed_by):
            errors.append(FieldError("reviewed_by", f"a sign-off needs the reviewer's name: {problem}"))
        elif reviewed_by.strip().casefold() == (current.decided_by or "").strip().casefold():
            errors.append(
                FieldError("reviewed_by", "a sign-off must come from a second person, not the one who decided")
            )
        if errors:
            raise DecisionRefused(f"sign-off refused for {item_id}: {format_errors(errors)}", errors)
        self._append(SIGN_OFF, item_id=item_id, reviewed_by=reviewed_by.strip(), round=self._round_of_change())
        return self._state.decisions[item_id]

    def record_blocked_fix(
        self, item_id: str, outcome: str, reason: str | None = None, *, entries: Iterable[DecisionEntry] = ()
    ) -> Decision:
        """The outcome of a fix the implementer reported BLOCKED / NEEDS_CONTEXT (``entries``: its
        auto-decisions.md entries, written after the journal record)."""
        self._writable()
        current = self._state.decisions.get(item_id)
        errors = []
        if current is None or current.action != "fix":
            errors.append(FieldError("item_id", "a blocked-fix outcome applies to an item decided fix"))
        if outcome not in BLOCKED_OUTCOMES:
            errors.append(FieldError("outcome", f"must be one of {', '.join(BLOCKED_OUTCOMES)}"))
        if reason is not None and reason.strip() and (problem := text_problem(reason)):
            errors.append(FieldError("reason", problem))
        if errors:
            raise DecisionRefused(f"blocked-fix outcome refused for {item_id}: {format_errors(errors)}", errors)
        entries = list(entries)
        self._append(
            BLOCKED_FIX,
            entries=entries,
            item_id=item_id,
            outcome=outcome,
            reason=(reason or "").strip() or None,
            decided_by=self.decided_by(),
            round=self._round_of_change(),
        )
        self._write_entries(entries, f"the blocked-fix outcome of {item_id}")
        return self._state.decisions[item_id]

    def reopen(self, item_id: str, *, cause: str, watch: Any = None) -> Decision:
        """Send a decided item back to triage (a fired re-review watch); returns the decision
        it had. The record is not undoable by :meth:`undo` — it is not a person's decision."""
        self._writable()
        current = self._state.decisions.get(item_id)
        if current is None:
            raise DecisionRefused(f"item {item_id} has no decision to reopen", [FieldError("item_id", "no decision")])
        if problem := text_problem(cause):
            raise DecisionRefused(f"a reopen needs its cause: {problem}", [FieldError("cause", problem)])
        self._append(
            REOPEN, item_id=item_id, cause=cause.strip(), watch=watch, round=self._round_of_change(), scars_own=True
        )
        return current

    # ------------------------------------------------------------------ rounds

    def stopped(self) -> tuple[int, str] | None:
        """(round, decision) when no round is open and the latest round — closed in the journal,
        or on disk in iteration-log.yaml — ended the iteration (stop, forced_stop): the loop went
        on to Validation. None otherwise."""
        if self._state.open_round:
            return None
        ended: dict[int, Any] = {}
        log = self.feature.iteration_log if self.feature is not None else None
        for r in log.rounds if log is not None else ():
            if type(r.round) is int:
                ended[r.round] = r.decision
        for rec in self._state.closed_rounds:
            entry = rec.get("entry")
            if type(rec.get("round")) is int:
                ended[rec["round"]] = entry.get("decision") if isinstance(entry, dict) else None
        if not ended:
            return None
        last = max(ended)
        decision = ended[last]
        return (last, str(decision)) if decision in STOPPING else None

    def check_decision_round(self, *, override_max_rounds: str | None = None) -> None:
        """Raise what :meth:`open_round_for_decision` would refuse, writing nothing (a read-only
        session too: an answers file is checked before anything is replayed): the iteration
        stopped (:class:`IterationStopped`), or the round to open passes max_rounds without the
        override's reason (the max-rounds valve)."""
        if self._state.open_round:
            return
        stop = self.stopped()
        if stop is not None:
            n, how = stop
            raise IterationStopped(
                f"{_feature_name(self.feature, self.path)}: the iteration stopped after round {n} ({how}) and went "
                f"on to Validation; a decision now would iterate again, so round {n + 1} is started explicitly "
                "first: `scars round start` (in the app a decision asks to start it), then decide",
                round=n,
                decision=how,
            )
        self._max_rounds_override(self._next_round_number(), override_max_rounds)

    def open_round_for_decision(self, *, override_max_rounds: str | None = None) -> dict[str, Any] | None:
        """THE rule of when a round opens (docs/decisions.md, "When a round opens"), the same for every
        front end that records a decision (the app, `scars decide`, an answers file's items):
        a decision made while no round is open opens the next one first — marked as opened by a
        decision, so that undoing what it holds takes it back — unless the iteration stopped,
        where going on is explicit (`scars round start`, the app's confirmed start) and the
        decision is refused (:class:`IterationStopped`). Past max_rounds the max-rounds valve
        refuses unless ``override_max_rounds`` says why. Returns the round started, or None when
        one was open."""
        if self._state.open_round:
            return None
        self.check_decision_round(override_max_rounds=override_max_rounds)
        return self.start_round(override_max_rounds=override_max_rounds, opened_by_decision=True)

    def _round_of_change(self) -> int:
        """The round a change belongs to: the open one, else the next one."""
        return self.current_round() or self._next_round_number()

    def next_round_number(self) -> int:
        """The number the next round will get (rounds on disk and closed in the journal + 1)."""
        return self._next_round_number()

    def _next_round_number(self) -> int:
        on_disk = self._log.rounds_on_disk()
        journal: list[int] = [r["round"] for r in self._state.closed_rounds if isinstance(r.get("round"), int)]
        return max(on_disk + journal + [0]) + 1

    def start_round(
        self, *, override_max_rounds: str | None = None, opened_by_decision: bool = False
    ) -> dict[str, Any]:
        """Open the next round: snapshot ``signal_lost_before``, the budget context, the items and
        the reports there are at its start (read again from disk for an explicit start).
        ``opened_by_decision``: opened by the rule of :meth:`open_round_for_decision`, not
        explicitly (undoing what it holds takes it back); its start is the feature the decision
        is made on, as the session holds it (no second read of every report before the decision).

        A round past ``max_rounds`` is the max-rounds safety valve's forced stop (seed 002 Step
        4): it is refused unless ``override_max_rounds`` says why it goes on anyway (a reason
        that says something); the override is recorded and written with the round."""
        self._writable()
        if self._state.open_round:
            raise UsageError(f"round {self.current_round()} is already open; close it first (scars round close)")
        if not opened_by_decision:
            self._refresh_feature()
        number = self._next_round_number()
        max_rounds = self._max_rounds()
        override = self._max_rounds_override(number, override_max_rounds)
        snapshot = _budget_snapshot(self.feature)
        payload: dict[str, Any] = {
            "round": number,
            "signal_lost_before": self.feature.signal_lost,
            "budget_context": snapshot,
            "item_ids": [i.id for i in self.feature.items if i.counted],
            "reports": [r.file for r in self.feature.reports],
            "max_rounds": max_rounds,
        }
        if override:
            payload["valve_override"] = override
        if opened_by_decision:
            payload["opened_by"] = OPENED_BY_DECISION
        rec = self._append(ROUND_START, **payload)
        return {
            "round": number,
            "signal_lost_before": rec["signal_lost_before"],
            "budget_context": dict(snapshot),
            "max_rounds": rec["max_rounds"],
            "started_at": rec["at"],
            "started_by": rec["by"],
            **({"valve_override": override} if override else {}),
        }

    def _max_rounds_override(self, number: int, override_max_rounds: str | None) -> dict[str, Any] | None:
        """The max-rounds valve (seed 002 Step 4) for round ``number``: None within max_rounds,
        the override to record past it, or DecisionRefused when its reason says nothing."""
        max_rounds = self._max_rounds()
        if number <= max_rounds:
            return None
        problem = text_problem(override_max_rounds, specific=True)
        if problem:
            raise DecisionRefused(
                f"round {number} would pass max_rounds {max_rounds}: the max-rounds safety valve forces a stop "
                f"(seed 002 Step 4). To start it anyway, give the override with its reason "
                f'(scars round start --override-max-rounds "WHY"): {problem}',
                [FieldError("override_max_rounds", problem)],
            )
        return {"valve": "max_rounds", "reason": str(override_max_rounds).strip(), "by": self.user}

    def _max_rounds(self) -> int:
        log = self.feature.iteration_log if self.feature is not None else None
        return log.max_rounds if log is not None else 3

    def _read_watch_reopened(self) -> None:
        try:
            self._watch_fired = reopened_items(self.path)
        except (OSError, ValueError):  # advisory: an unreadable watch log reopens nothing
            self._watch_fired = {}
        self._watch_reopened = set(self._watch_fired)

    def reopened_now(self) -> dict[str, dict[str, Any]]:
        """:func:`scars.core.samsara.decisions.reopened_now` of this session's journal as replayed
        and its watch log as read (nothing is read here): computed once per replay."""
        memo = self._reopened_memo
        if memo is None or memo[0] != self._state_version or memo[1] is not self._watch_fired:
            found = reopened_from(self._state, self._watch_fired)
            memo = self._reopened_memo = (self._state_version, self._watch_fired, found)
        return memo[2]

    def _refresh_feature(self) -> None:
        self.feature = _read_feature(self.path)[0]
        self._read_watch_reopened()
        self._replay()  # the reports may have changed: which item holds which id, too

    def round_triage(self) -> dict[str, Decision]:
        """The decisions made since the previous round closed (the open round's triage)."""
        since = self._state.last_close_seq
        return {i: d for i, d in self._state.decisions.items() if self._state.changed_at.get(i, 0) > since}

    def close_round(
        self, decision: str, reason: str, *, entries: Iterable[DecisionEntry] = (), **fields: Any
    ) -> dict[str, Any]:
        """Close the open round and write it to iteration-log.yaml.

        ``fields`` may hold ``budget_spent`` (mapping of ints), ``evidence_gained`` and
        ``residual_risk`` (lists of texts) and ``trigger`` (the safety valve of a forced stop);
        ``entries`` are the auto-decisions.md entries of the round's decision points (built by
        the gates). The round's figures are those its gate computed (:meth:`held_figures`) while
        they hold after the feature is read again, else computed again. Returns the round as written. The round and its entries are durable in the
        journal before auto-decisions.md and iteration-log.yaml are touched; if either cannot be
        written the error says so and the round is kept.
        """
        self._writable()
        start = self._state.open_round
        if not start:
            raise UsageError("no round is open; start one first (scars round start)")
        trigger = fields.pop("trigger", None)
        overrides = list(fields.pop("valve_overrides", None) or ())
        errors = _round_close_errors(decision, reason, trigger, fields)
        if errors:
            raise DecisionRefused(f"round close refused: {format_errors(errors)}", errors)
        reason = reason.strip()
        if (
            decision == "forced_stop"
            and trigger
            and not VALVE_TRIGGERS.get(trigger, re.compile(re.escape(trigger))).search(reason)
        ):
            reason = f"{reason} (safety valve: {trigger})"
        self._refresh_feature()
        triage = self.round_triage()
        pending = [i for i, d in triage.items() if d.action == "accept" and d.pending_review]
        if pending:
            raise DecisionRefused(
                f"round close refused: {len(pending)} accept(s) wait for a second person's sign-off "
                f"({', '.join(pending[:5])}{' …' if len(pending) > 5 else ''}); sign them off "
                "(scars decide ID --sign-off NAME, or s in the app) or decide them again — an accept "
                "pending review is never written as a plain accept",
                [FieldError("pending_review", f"{len(pending)} accept(s) not signed off")],
            )
        fig = self._held_figures(start, triage, None).figures
        rule3, missing = self._rule3(fields, fig)
        entry: dict[str, Any] = {
            "round": fig.round,
            "signal_lost_before": fig.signal_lost_before,
            "budget_context": start.get("budget_context"),
            "items_triaged": fig.triaged,
            "triage_result": self._triage_result(triage),
            "fixes_applied": fig.fixed,
            "fixes_scar_count": len(fig.new_items),
        }
        for key in RULE_3:
            # Rule 3: every round records the three fields. One nobody gave (no flag, answer or
            # form field, no fix-round report) is written as none and named in rule3_not_given,
            # so the log never claims more than was said.
            value = rule3.get(key, {} if key == "budget_spent" else [])
            entry[key] = dict(value) if isinstance(value, dict) else list(value)
        entry["signal_lost_after"] = fig.signal_lost_after
        entry["decision"] = decision
        entry["decision_reason"] = reason
        if missing:
            entry["rule3_not_given"] = missing
        # Extra keys (upstream readers ignore them). counted_by: these figures are scars' recount
        # by the seed's rules, never compared with figures the loop recorded by its own count.
        entry[COUNTED_BY_KEY] = COUNTED_BY_SCARS
        # What happens to the items nobody decided, said as the gate said it.
        entry["items_undecided"] = len(fig.undecided)
        if fig.undecided:
            entry["undecided_outcome"] = undecided_outcome(decision, fig.round)
        if fig.fix_open:
            entry["fixes_not_applied"] = len(fig.fix_open)
        blocked = self._blocked_fixes()
        if blocked:
            # Seed 002: "Log the outcome in iteration-log" (an extra key; a reclassified item is
            # also under defer, a retried one under fix).
            entry["blocked_fixes"] = blocked
        if self.provenance is not None:
            # Where the round's decision came from (an extra key; scars.core.provenance).
            entry["provenance"] = self.provenance.to_record()
        if isinstance(start.get("provenance"), dict):
            entry["start_provenance"] = dict(start["provenance"])  # where the round's start came from
        people = self._triaged_by(triage)
        if people:
            entry["triaged_by"] = people
        if start.get("valve_override"):
            overrides.insert(0, dict(start["valve_override"]))
        if overrides:
            entry["valve_overrides"] = overrides
        entries = list(entries)
        self._append(ROUND_CLOSE, entries=entries, round=fig.round, entry=entry, new_item_ids=list(fig.new_items))
        # From here the round is closed (in the journal): a later failure must say so, and which
        # files have it, not look like the close failed (a full disk: tests/hostile, and
        # tests/tui/cli/test_round_cli.py at each write).
        files: dict[str, BaseException | None] = {}
        if entries:
            files[AUTO_DECISIONS] = self._try_entries(entries)[1]
        files[LOG_NAME] = self._flush_rounds(self._rounds_missing())[1]
        if any(files.values()):
            raise self._not_all_written(f"round {fig.round} ({decision})", files)
        return entry

    def round_figures(self) -> RoundFigures:
        """The open round's figures now (:func:`scars.core.samsara.rounds.round_figures`);
        raises UsageError when no round is open."""
        return self.held_figures().figures

    def held_figures(self, known: HeldFigures | None = None) -> HeldFigures:
        """:meth:`round_figures` with their basis. ``known``: figures computed earlier (by this
        session or another, e.g. the read-only one a gate's evidence was gathered in), used as
        they are while their basis is this session's; computed again when any of it changed."""
        start = self._state.open_round
        if not start:
            raise UsageError(
                f"{self.feature.name}: no round is open — there is nothing to continue or stop "
                "(start one with `scars round start`)"
            )
        return self._held_figures(start, self.round_triage(), known)

    def _held_figures(
        self, start: dict[str, Any], triage: dict[str, Decision], known: HeldFigures | None
    ) -> HeldFigures:
        """The round figures over the feature as the session holds it (THE staleness check: the
        cache token says the files are those the known figures were computed from, the round's
        start, triage and decisions are compared by value). Without a token (the cache is off,
        or a file changed less than the cache's racy window ago) nothing is reused."""
        decisions = self.decisions
        token = feature_cache.token_of(self.feature)
        basis = (token, start, triage, decisions) if token is not None else None
        for held in (known, self._figures):
            if basis is not None and held is not None and held.basis == basis:
                self._figures = held
                return held
        self._figures = HeldFigures(round_figures(self.feature, start, triage, decisions), basis)
        return self._figures

    def last_entry_seq(self, gate_id: str) -> int:
        """The journal position of the open round's latest auto-decisions entry with
        ``gate_id`` (0: none since the previous round closed)."""
        since = self._state.last_close_seq
        seqs = [
            r["seq"]
            for r in self._state.auto_decisions
            if r.get("gate_id") == gate_id and isinstance(r.get("seq"), int) and r["seq"] > since
        ]
        return max(seqs, default=0)

    def round_triage_changed_after(self, seq: int) -> bool:
        """A triage decision was recorded (or undone) after journal position ``seq`` (a blocked-fix
        outcome or a sign-off is a decision point of its own, not a triage change)."""
        return self._state.last_triage_seq > seq

    def _triage_result(self, triage: dict[str, Decision]) -> dict[str, Any]:
        fix, accept, defer = [], [], []
        for item_id, d in triage.items():
            desc = self._describe(item_id)
            if d.action == "fix":
                fix.append(desc)
            elif d.action == "accept":
                a = {
                    "description": desc,
                    "re_review_signal": d.re_review_signal,
                    "owner": d.owner,
                    "rationale": d.rationale,
                }
                if d.watch:
                    a["watch"] = d.watch
                    if d.watch_base:
                        a["watch_base"] = d.watch_base
                # Extra keys upstream readers ignore: who decided, who signed off.
                if d.decided_by:
                    a["decided_by"] = d.decided_by
                if d.reviewed_by:
                    a["reviewed_by"] = d.reviewed_by
                accept.append(a)
            else:
                defer.append(desc)
        return {"fix": fix, "accept": accept, "defer": defer}

    def _triaged_by(self, triage: dict[str, Decision]) -> list[dict[str, Any]]:
        """Who decided each item of the round (and who signed it off): an extra key of the round."""
        out = []
        for item_id, d in triage.items():
            rec: dict[str, Any] = {"action": d.action, "description": self._describe(item_id)}
            if d.decided_by:
                rec["decided_by"] = d.decided_by
            if d.reviewed_by:
                rec["reviewed_by"] = d.reviewed_by
            out.append(rec)
        return out

    def _rule3(self, fields: dict[str, Any], fig: RoundFigures) -> tuple[dict[str, Any], list[str]]:
        """The round's Rule-3 fields: those given, else those its fix-round reports carry
        (seed 002's fix result budget report); and the names still missing."""
        out: dict[str, Any] = {}
        partial: list[str] = []
        for key in RULE_3:
            if key in fields and fields[key] is not None:
                out[key] = fields[key]
            elif key in fig.rule3:
                out[key] = fig.rule3[key]
                if key == "budget_spent":  # the counts no fix report gave: not made up, said
                    partial = budget_spent_not_given(out[key])
        return out, [k for k in RULE_3 if k not in out] + partial

    def _blocked_fixes(self) -> list[dict[str, Any]]:
        """The open round's blocked-fix outcomes (journal records not undone), oldest first, as the
        round writes them: ``{description, outcome, reason, decided_by}``."""
        since = self._state.last_close_seq
        out = []
        for rec in self._records:
            seq = rec.get("seq")
            if rec.get("type") != BLOCKED_FIX or not isinstance(seq, int) or seq <= since:
                continue
            if seq in self._state.undone or not isinstance(rec.get("item_id"), str):
                continue
            b: dict[str, Any] = {"description": self._describe(rec["item_id"]), "outcome": rec.get("outcome")}
            if rec.get("reason"):
                b["reason"] = rec["reason"]
            if rec.get("decided_by"):
                b["decided_by"] = rec["decided_by"]
            out.append(b)
        return out

    def _describe(self, item_id: str) -> str:
        try:
            return self._item(item_id).description
        except DecisionRefused:
            return self._state.descriptions.get(item_id, item_id).strip()

    def _rounds_missing(self) -> list[dict[str, Any]]:
        """The rounds the journal closed that iteration-log.yaml does not hold."""
        entries = [r["entry"] for r in self._state.closed_rounds if isinstance(r.get("entry"), dict)]
        on_disk = set(self._log.rounds_on_disk()) if entries and self._log.exists else set()
        return [e for e in entries if e.get("round") not in on_disk]

    def _flush_rounds(self, missing: list[dict[str, Any]]) -> tuple[list[int], BaseException | None]:
        """Write ``missing`` (:meth:`_rounds_missing`) to iteration-log.yaml: the rounds written, or
        the failure."""
        if not missing:
            return [], None
        entries: list[dict[str, Any]] = [
            r["entry"] for r in self._state.closed_rounds if isinstance(r.get("entry"), dict)
        ]
        first = entries[0]
        log = self.feature.iteration_log if self.feature is not None else None
        try:
            written = self._log.append_rounds(
                missing,
                feature=_feature_name(self.feature, self.path),
                signal_lost_initial=(
                    log.signal_lost_initial
                    if log and log.signal_lost_initial is not None
                    else first.get("signal_lost_before") or 0
                ),
                max_rounds=self._max_rounds(),
                reviewer_retry_limit=log.reviewer_retry_limit if log is not None else 2,
            )
        except Exception as exc:  # noqa: BLE001 - returned to the caller, who reports it; the journal keeps the round
            return [], exc
        return written, None

    def flush(self) -> tuple[list[int], int]:
        """Write now what the journal holds that the files lack — the rounds iteration-log.yaml
        lacks, the auto-decisions.md entries — and raise when that cannot be done
        (:meth:`_not_all_written`). Returns the rounds written and the number of entries, those
        the opening of this session wrote included. Refused as a decision is (:meth:`decided_by`:
        an agent's session at a human-in-the-loop feature), and then opening wrote nothing either."""
        self._writable()
        self.decided_by()
        missing = self._rounds_missing()
        rounds, failed = self._flush_rounds(missing)
        if failed is not None:
            raise self._not_all_written(_rounds_text(missing), {LOG_NAME: failed})
        entries, failed_entry = self._write_pending_entries()
        if failed_entry is not None:
            raise self._not_all_written("an auto-decisions.md entry", {AUTO_DECISIONS: failed_entry})
        (opened_rounds, opened_entries), self.written_at_open = self.written_at_open, ([], 0)
        return opened_rounds + rounds, opened_entries + entries

    # ------------------------------------------------------------------ auto-decisions.md

    def record_gate_answer(self, gate_id: str, answer: str, reason: str | None) -> None:
        """The journal record of a gate answer that writes no other record of its own (a human-mode
        entry or triage gate: no auto-decisions.md entry), so that who answered, and whence, is kept."""
        self._writable()
        self._append(GATE_ANSWER, gate=gate_id, answer=answer, reason=reason, round=self._round_of_change())

    def append_auto_decision(self, entry: DecisionEntry, *, source: str | None = None, scars_own: bool = False) -> int:
        """Append one auto-decisions.md entry (formats.md §1.6) of a decision that has no journal
        record of its own (an entry gate, a triage, a watch reopen); returns its number.
        ``source`` (how the answer came: flag, answers file, app …) stays in the journal;
        ``scars_own``: see :meth:`_stamp` (a watch reopen)."""
        self._writable()
        payload: dict[str, Any] = {"round": self._round_of_change()}
        if source:
            payload["source"] = source
        self._append(AUTO_DECISION, entries=[entry], scars_own=scars_own, **payload)
        [number] = self._write_entries([entry], f"the {entry.gate_id} decision")
        return number


def _rounds_text(missing: list[dict[str, Any]]) -> str:
    return "round " + ", ".join(str(e.get("round")) for e in missing)


def _cause(exc: BaseException) -> str:
    """Why a file was not written, in the words of its failure (a failed write: its cause alone,
    never its own "nothing was recorded", which the journal belies)."""
    return exc.cause if isinstance(exc, WriteFailed) else str(exc)


def _feature_name(feature: Feature | None, path: Path) -> str:
    name = (feature.name if feature is not None else "") or path.name
    m = re.match(r"^\d{4}-\d{2}-\d{2}_(.+)$", name)
    return m.group(1) if m else name


def undecided_outcome(decision: str, round_no: int) -> str:
    """What happens to the round's undecided items, as the gate says it and the round records it."""
    if decision == "continue":
        return f"carried to round {round_no + 1}: triaged there"
    if decision == "interrupted":
        return "left undecided: the round was interrupted; a person resumes the iteration"
    return (
        "left undecided: the iteration stops here (see decision_reason); they stay in the reports for validate-and-ship"
    )


def _round_close_errors(decision: str, reason: Any, trigger: Any, fields: dict[str, Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    unknown = set(fields) - set(RULE_3)
    for name in sorted(unknown):
        errors.append(FieldError(name, "is not a round field"))
    if decision not in ROUND_DECISIONS:
        errors.append(FieldError("decision", f"must be one of {', '.join(ROUND_DECISIONS)}"))
    if problem := text_problem(reason, specific=True):
        errors.append(FieldError("decision_reason", problem))
    if decision == "forced_stop":
        if trigger is not None and trigger not in VALVE_TRIGGERS:
            errors.append(FieldError("trigger", f"must be one of {', '.join(VALVE_TRIGGERS)}"))
        elif trigger is None and not (
            isinstance(reason, str) and any(p.search(reason) for p in VALVE_TRIGGERS.values())
        ):
            errors.append(
                FieldError(
                    "decision_reason",
                    "a forced stop must name its safety-valve trigger (max rounds, stagnation, net rot)",
                )
            )
    spent = fields.get("budget_spent")
    if spent is not None and not (
        isinstance(spent, dict)
        and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in spent.values())
    ):
        errors.append(FieldError("budget_spent", "must map names to non-negative integers"))
    for key in ("evidence_gained", "residual_risk"):
        v = fields.get(key)
        if v is not None and not (isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v)):
            errors.append(FieldError(key, "must be a list of texts"))
    return errors


def _budget_snapshot(feature) -> dict[str, Any]:

    return round_start_snapshot(feature.iteration_log, feature.signal_lost)
