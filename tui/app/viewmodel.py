"""The triage view model: grouped rows, filter, progress — no Textual in here.

The app renders what this module computes. Everything that grows with the number of items
is done once when a feature is loaded (in the loader thread): the inert one-line text of
each item and its lowercase search key. Filtering is then one pass over precomputed keys;
the decision state of a row is looked up at draw time, so a decision never rebuilds rows
unless a ``state:`` filter depends on it.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Literal, NamedTuple

from scars.core.model import GROUP_LABEL, GROUPS, Feature, Problem, ScarItem
from scars.core.records import field, record
from scars.core.samsara.decisions import Decision
from scars.core.samsara.locate import Excerpt, read_excerpt
from scars.core.sanitize import one_line
from scars.core.text import natural_key

# Category abbreviations, the same as the item id prefixes.
CATEGORY_ABBR: dict[str, str] = {
    "known_shortcuts": "ks",
    "silent_failure_conditions": "sf",
    "unverified_assumptions": "ua",
}
_CATEGORY_ALIASES: dict[str, str] = {}
for _cat, _abbr in CATEGORY_ABBR.items():
    for _alias in (_cat, _abbr):
        _CATEGORY_ALIASES[_alias] = _cat
_CATEGORY_ALIASES.update(
    {
        "shortcut": "known_shortcuts",
        "shortcuts": "known_shortcuts",
        "silent": "silent_failure_conditions",
        "silent_failure": "silent_failure_conditions",
        "silent_failures": "silent_failure_conditions",
        "assumption": "unverified_assumptions",
        "assumptions": "unverified_assumptions",
        "assumptions_made": "unverified_assumptions",
    }
)
STATES: tuple[str, ...] = ("undecided", "decided", "fix", "accept", "defer", "pending", "carried", "marked")

# Extra groups after the three triage groups, in display order.
EXTRA_GROUPS: tuple[tuple[str, str], ...] = (
    ("possible_patterns", "Possible patterns"),
    ("not_counted", "Not counted"),
    ("other", "Other items"),
    ("parse_failures", "Parse failures"),
)
ALL_GROUP_LABEL: dict[str, str] = {**GROUP_LABEL, **dict(EXTRA_GROUPS)}

TEXT_CAP = 400  # characters of an item's text kept for its one-line rendering


def decision_state(decision: Decision | None) -> str:
    """'undecided' | 'fix' | 'accept' | 'pending' | 'defer' for a Decision (or None)."""
    if decision is None:
        return "undecided"
    if decision.action == "accept" and decision.pending_review:
        return "pending"
    return decision.action if decision.action in ("fix", "accept", "defer") else "undecided"


# The decision as a symbol and a word — meaning never by colour alone.
DECISION_MARK: dict[str, str] = {
    "undecided": "· todo",
    "fix": "F fix",
    "accept": "A accept",
    "pending": "A? 2nd",
    "defer": "D defer",
}


# A decision carried from an earlier round of iteration-log.yaml: its letter, word and round.
_CARRIED_WORD = {"fix": "F fix", "accept": "A acc", "defer": "D def"}


def decision_mark(decision: Any) -> str:
    """The decision as the list shows it: ``DECISION_MARK``, or for a decision of a closed round
    — carried from the log or made in scars before the round closed — its letter, a short word
    and the round (``A acc r1``, ``F fix r2``): one label whichever way the round was recorded."""
    state = decision_state(decision)
    closed = getattr(decision, "round_label", None)
    if closed is not None and state in _CARRIED_WORD:
        return f"{_CARRIED_WORD[state]} r{closed}"
    return DECISION_MARK[state]


class Row(NamedTuple):
    """One line of the item list. ``key`` is stable across reloads and filters.

    A NamedTuple: tens of thousands are built per filter, and tuples are cheap to make.
    """

    kind: Literal["header", "item", "pattern", "failure"]
    group: str
    key: str
    item_id: str | None = None
    label: str = ""  # header / pattern text (already inert)
    failure: Problem | None = None

    @property
    def selectable(self) -> bool:
        return self.kind == "item" or self.kind == "failure"


@record(frozen=False, slots=True)
class Filter:
    """A parsed filter: ``cat:sf task:task-3 state:undecided retry``."""

    categories: set[str] = field(default_factory=set)
    tasks: list[str] = field(default_factory=list)
    states: set[str] = field(default_factory=set)
    files: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    source: str = ""

    @property
    def active(self) -> bool:
        return bool(self.categories or self.tasks or self.states or self.files or self.words)


# The filter's syntax as the app shows it (the filter bar and `?`), from the rule itself.
FILTER_KEYS = "words  cat:ks|sf|ua  task:NAME  file:PART  state:STATE"
FILTER_STATES = "STATE: " + " ".join(STATES)


class FilterError(ValueError):
    """A filter the user typed cannot be understood; the message says how to fix it."""


def parse_filter(text: str) -> Filter:
    flt = Filter(source=text.strip())
    for token in text.split():
        key, sep, value = token.partition(":")
        key_l = key.lower()
        if sep and key_l in ("cat", "category", "task", "state", "is", "file"):
            value_l = value.lower()
            if not value_l:
                raise FilterError(f"'{key}:' needs a value")
            if key_l in ("cat", "category"):
                for part in value_l.split(","):
                    cat = _CATEGORY_ALIASES.get(part)
                    if cat is None:
                        raise FilterError(f"unknown category '{part}' (use ks, sf or ua)")
                    flt.categories.add(cat)
            elif key_l == "task":
                flt.tasks.extend(p for p in value_l.split(",") if p)
            elif key_l == "file":
                flt.files.append(value_l)
            else:
                for part in value_l.split(","):
                    if part == "todo":
                        part = "undecided"
                    if part not in STATES:
                        raise FilterError(f"unknown state '{part}' (use {', '.join(STATES)})")
                    flt.states.add(part)
        else:
            flt.words.append(token.lower())
    return flt


@record(frozen=False, slots=True)
class ItemView:
    """Precomputed, inert display facts of one item."""

    item: ScarItem
    line_text: str  # one_line(text), capped
    task: str
    search: str  # lowercase: text, task, file, category, id, systemic ref


def item_text(item: ScarItem) -> str:
    """The item's main text; a systemic ref without text shows its id and note."""
    if item.text:
        return item.text
    if item.systemic_ref:
        return f"systemic_ref {item.systemic_ref}" + (f": {item.note}" if item.note else "")
    return item.note or ""


def _inert_line(text: str) -> str:
    # isprintable() is False for every control, format and separator character one_line
    # rewrites, so clean text (nearly all of it) skips the regex.
    return text if text.isprintable() else one_line(text)


# A task id as the list shows it: whole up to this many characters (the list's column then cuts
# it in the middle by the room it has); longer ones are not ids a person reads.
TASK_CAP = 64


def build_view(item: ScarItem, task: str) -> ItemView:
    """``item``'s view; ``task``: its task as the list shows it (:meth:`ItemViews.task`)."""
    text = item_text(item)
    line = _inert_line(text[:TEXT_CAP])
    raw_task = item.task_id or ""
    search = (
        f"{text} {raw_task} {item.file} {CATEGORY_ABBR.get(item.category, '')} {item.id} "
        f"{item.systemic_ref or ''} {item.where or ''}"
    ).lower()
    return ItemView(item=item, line_text=line, task=task, search=search)


class ItemViews(Mapping[str, ItemView]):
    """The items' views by id, each built on first use (issue 17): the first paint builds the
    rows on screen only; the filter's haystack (built after the first paint) builds the rest.

    Two threads may build one view at once (the screen and the filter's worker): the same view,
    stored twice, so no lock."""

    def __init__(self, items: Iterable[ScarItem]):
        self.by_id: dict[str, ScarItem] = {item.id: item for item in items}
        self._built: dict[str, ItemView] = {}
        self._tasks: dict[str, str] = {}  # task id -> as shown (each distinct task once)

    def __getitem__(self, item_id: str) -> ItemView:
        view = self._built.get(item_id)
        if view is None:
            item = self.by_id[item_id]
            view = self._built[item_id] = build_view(item, self.task(item.task_id or ""))
        return view

    def task(self, raw: str) -> str:
        """A task id as the list shows it (each distinct task made once)."""
        shown = self._tasks.get(raw)
        if shown is None:
            shown = self._tasks[raw] = one_line(raw, TASK_CAP)
        return shown

    def __contains__(self, item_id: object) -> bool:
        return item_id in self.by_id

    def __iter__(self) -> Iterator[str]:
        return iter(self.by_id)

    def __len__(self) -> int:
        return len(self.by_id)

    def tasks(self) -> set[str]:
        """Every task as the list shows it (without building a view)."""
        return {self.task(t) for t in {item.task_id or "" for item in self.by_id.values()}}


class TriageState:
    """Grouped, filterable rows of one feature. Built once per load (off the event loop)."""

    def __init__(self, feature: Feature):
        self.feature = feature
        self.views = ItemViews(feature.items)
        self._items = self.views.by_id
        self.order: list[str] = [it.id for it in feature.items]  # decidable items
        # Tasks sharing an item's literal text (a cross-task pattern names several): built after
        # the first paint (prepare_filter); tasks_of looks through the items until then.
        self._tasks_by_text: dict[str, set[str]] | None = None
        self._task_keys: dict[str, tuple] = {}  # natural_key per task id (few tasks, many items)
        self.groups: list[tuple[str, str, list[Any]]] = self._group()
        # Built on the first filter (issue 17): every group's rows once, and one joined haystack
        # of the items' search texts, so a filter scans in C and builds no row twice.
        self._built: list[tuple[str, str, list[Any]]] | None = None
        self._hay: tuple[str, list[int], list[str]] | None = None
        self._hay_lock = threading.Lock()

    def _task_key(self, item_id: str) -> tuple:
        task = self._items[item_id].task_id or ""
        key = self._task_keys.get(task)
        if key is None:
            key = self._task_keys[task] = natural_key(task)
        return key

    def tasks_of(self, item: ScarItem) -> list[str]:
        """Every task whose report holds the same (normalised) text as ``item``."""
        text = item.normalized
        found: set[str] = set()
        if text:
            by_text = self._tasks_by_text
            if by_text is not None:
                found.update(by_text.get(text, ()))
            else:  # the index is built after the first paint (prepare_filter): one pass until then
                found.update(it.task_id for it in self.feature.items if it.task_id and it.normalized == text)
        if item.task_id:
            found.add(item.task_id)
        return sorted(found, key=natural_key)

    def _index_texts(self) -> None:
        """The tasks per normalised text, for :meth:`tasks_of` (the same tasks as its one pass)."""
        by_text: dict[str, set[str]] = {}
        for it in self.feature.items:
            if it.task_id and (text := it.normalized):  # computed from the text on each ask: once here
                by_text.setdefault(text, set()).add(it.task_id)
        self._tasks_by_text = by_text

    # -- grouping ---------------------------------------------------------------------
    def _group(self) -> list[tuple[str, str, list[Any]]]:
        """[(group key, label, members)]; members are item ids, or (label, ids) for patterns."""
        f = self.feature
        seen: set[str] = set()
        out: list[tuple[str, str, list[Any]]] = []
        for g in GROUPS:
            # Items of a group in their tasks' natural order (task-2 before task-10), the reports'
            # own order kept within a task.
            ids = sorted((i for i in f.groups.get(g, ()) if i in self.views), key=self._task_key)
            seen.update(ids)
            out.append((g, GROUP_LABEL[g], ids))
        patterns = []
        for pat in f.possible_patterns:
            ids = [i for i in pat.get("ids", ()) if i in self.views]
            if not ids:
                continue
            sim = pat.get("similarity")
            reason = one_line(str(pat.get("reason", "") or ""), 120)
            label = f"≈ {sim:.2f} {reason}" if isinstance(sim, (int, float)) else f"≈ {reason}"
            patterns.append((label.strip(), ids))
        out.append(("possible_patterns", "Possible patterns", patterns))
        rest = sorted((i for i in self.order if i not in seen), key=self._task_key)
        items = self._items
        out.append(("not_counted", "Not counted", [i for i in rest if not items[i].counted]))
        out.append(("other", "Other items", [i for i in rest if items[i].counted]))
        out.append(("parse_failures", "Parse failures", list(f.parse_failures)))
        return out

    # -- rows -------------------------------------------------------------------------
    def rows(
        self,
        flt: Filter | None = None,
        decisions: Mapping[str, Any] | None = None,
        marked: Iterable[str] = (),
        cancelled: Callable[[], bool] | None = None,
    ) -> list[Row]:
        """The rows the filter keeps, grouped. ``cancelled`` (a superseded filter worker's) is
        asked between the steps: once it says so the rows built so far are returned, incomplete,
        for the caller to drop."""
        decisions = decisions or {}
        keep = self._kept(flt, decisions, set(marked), cancelled)  # None: every item
        rows: list[Row] = []
        for gkey, label, entries in self._group_rows():
            if cancelled is not None and cancelled():
                return rows
            body: list[Row] = []
            count = 0
            if gkey == "possible_patterns":
                for header, members in entries:
                    hits = [r for i, r in members if keep is None or i in keep]
                    if not hits:
                        continue
                    body.append(header)
                    body.extend(hits)
                    count += 1
            elif gkey == "parse_failures":
                for pf, row in entries:
                    if self._failure_matches(pf, flt):
                        body.append(row)
                        count += 1
            else:
                body = [r for i, r in entries if keep is None or i in keep]
                count = len(body)
            if body:
                rows.append(Row("header", gkey, f"header:{gkey}", label=f"{label} ({count})"))
                rows.extend(body)
        return rows

    def _group_rows(self) -> list[tuple[str, str, list[Any]]]:
        """Every group's rows, built once: (item id, row) pairs; for patterns (header row,
        pairs) per pattern; for parse failures (failure, row)."""
        if self._built is None:
            built: list[tuple[str, str, list[Any]]] = []
            for gkey, label, members in self.groups:
                entries: list[Any]
                if gkey == "possible_patterns":
                    entries = [
                        (
                            Row("pattern", gkey, f"{gkey}:{n}", label=plabel),
                            [(i, Row("item", gkey, f"{gkey}:{n}:{i}", item_id=i)) for i in ids],
                        )
                        for n, (plabel, ids) in enumerate(members)
                    ]
                elif gkey == "parse_failures":
                    entries = [
                        (pf, Row("failure", gkey, f"{gkey}:{n}:{pf.file}", failure=pf)) for n, pf in enumerate(members)
                    ]
                else:
                    entries = [(i, Row("item", gkey, f"{gkey}:{i}", item_id=i)) for i in members]
                built.append((gkey, label, entries))
            self._built = built
        return self._built

    def _kept(
        self,
        flt: Filter | None,
        decisions: Mapping[str, Any],
        marked: set[str],
        cancelled: Callable[[], bool] | None = None,
    ) -> set[str] | None:
        """The ids of the items the filter keeps (None: no filter, every item). The words are
        looked up in the joined haystack first; the filter's rule (:meth:`_matcher`) then
        decides over those candidates only, and not at all when the words are the whole filter
        (the haystack found exactly the items whose search text holds every word)."""
        if flt is None or not flt.active:
            return None
        candidates = self._word_hits(flt.words, cancelled) if flt.words else None
        if candidates is not None and not (flt.categories or flt.tasks or flt.states or flt.files):
            return candidates
        match = self._matcher(flt, decisions, marked)
        return {i for i in (self.views if candidates is None else candidates) if match(i)}

    def prepare_filter(self) -> None:
        """Build what a filter needs (the rows, every item's view and the joined haystack) and the
        index of :meth:`tasks_of` ahead of their first use: the app calls it in a worker after
        the first paint."""
        self._group_rows()
        self._haystack()
        if self._tasks_by_text is None:
            self._index_texts()

    def _haystack(self) -> tuple[str, list[int], list[str]]:
        """Every item's search text joined by NUL (a word holds no NUL: a hit never spans two
        items), with the offset where each item's text starts and the ids in the same order."""
        with self._hay_lock:  # the app's prepare worker and a filter worker may both ask
            if self._hay is None:
                ids = list(self.views)
                starts: list[int] = []
                pos = 0
                for i in ids:
                    starts.append(pos)
                    pos += len(self.views[i].search) + 1
                self._hay = ("\x00".join(self.views[i].search for i in ids), starts, ids)
            return self._hay

    def _word_hits(self, words: list[str], cancelled: Callable[[], bool] | None = None) -> set[str] | None:
        """The items whose search text holds every word (None: look at every item)."""
        if any(not w or "\x00" in w for w in words):  # could span two items' texts: no shortcut
            return None
        hay, starts, ids = self._haystack()
        found: set[str] | None = None
        for w in sorted(words, key=len, reverse=True):  # the longest word first: the fewest hits
            hits: set[str] = set()
            at = hay.find(w)
            while at != -1:
                k = bisect_right(starts, at) - 1
                hits.add(ids[k])
                at = hay.find(w, starts[k + 1]) if k + 1 < len(starts) else -1
            found = hits if found is None else found & hits
            if not found or (cancelled is not None and cancelled()):
                break
        return found

    def _matcher(self, flt: Filter | None, decisions: Mapping[str, Any], marked: set[str]):
        if flt is None or not flt.active:
            return lambda _id: True
        views = self.views
        cats, tasks, states, files, words = flt.categories, flt.tasks, flt.states, flt.files, flt.words

        def match(item_id: str) -> bool:
            v = views[item_id]
            it = v.item
            if cats and it.category not in cats:
                return False
            if tasks:
                task = (it.task_id or "").lower()
                if not any(t in task for t in tasks):
                    return False
            if files and not any(p in it.file.lower() for p in files):
                return False
            if states:
                dec = decisions.get(item_id)
                st = decision_state(dec)
                ok = st in states or ("decided" in states and st != "undecided")
                ok = ok or ("carried" in states and getattr(dec, "carried_round", None) is not None)
                ok = ok or ("accept" in states and st == "pending")
                ok = ok or ("marked" in states and item_id in marked)
                if not ok:
                    return False
            s = v.search
            return all(w in s for w in words)

        return match

    @staticmethod
    def _failure_matches(pf: Problem, flt: Filter | None) -> bool:
        if flt is None or not flt.active:
            return True
        if flt.categories or flt.states or flt.tasks:
            return False
        hay = f"{pf.file} {pf.message}".lower()
        return all(p in pf.file.lower() for p in flt.files) and all(w in hay for w in flt.words)

    # -- progress ---------------------------------------------------------------------
    def progress(self, decisions: Mapping[str, Any]) -> tuple[int, int]:
        """(decided, total) over the decidable items of the feature."""
        views = self.views
        decided = sum(1 for i in decisions if i in views)
        return decided, len(self.order)

    def first_undecided(self, rows: list[Row], decisions: Mapping[str, Any], start: int = 0) -> int | None:
        """Index of the first undecided item row at or after ``start`` (wrapping), or None."""
        n = len(rows)
        for k in range(n):
            idx = (start + k) % n
            row = rows[idx]
            if row.kind == "item" and row.item_id not in decisions:
                return idx
        return None


def owners_in_logs(feature: Feature, decisions: Mapping[str, Any] | None = None) -> list[str]:
    """Owners already named in iteration-log accepts and in recorded decisions, first seen first."""
    seen: dict[str, None] = {}
    log = feature.iteration_log
    if log is not None:
        for rnd in log.rounds:
            for acc in rnd.accept:
                owner = acc.get("owner") if isinstance(acc, dict) else None
                if isinstance(owner, str) and owner.strip():
                    seen.setdefault(one_line(owner.strip(), 80), None)
    for d in (decisions or {}).values():
        owner = d.owner
        if isinstance(owner, str) and owner.strip():
            seen.setdefault(one_line(owner.strip(), 80), None)
    return list(seen)


@record(slots=True)
class Snapshot:
    """What a reload compares: the items, their decisions, the parse failures and signal_lost."""

    ids: frozenset[str]
    decisions: Mapping[str, str]
    failures: int
    signal_lost: int


def snapshot(feature: Feature, decisions: Mapping[str, Any]) -> Snapshot:
    return Snapshot(
        frozenset(it.id for it in feature.items),
        {i: decision_state(d) for i, d in decisions.items()},
        len(feature.parse_failures),
        feature.signal_lost,
    )


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def describe_changes(old: Snapshot, new: Snapshot) -> str | None:
    """What changed on disk between two reads, in words; None when nothing did."""
    parts = []
    added, gone = len(new.ids - old.ids), len(old.ids - new.ids)
    if added:
        parts.append(_count(added, "new item"))
    if gone:
        parts.append(_count(gone, "item") + " gone")
    changed = sum(
        1 for i in old.decisions.keys() | new.decisions.keys() if old.decisions.get(i) != new.decisions.get(i)
    )
    if changed:
        parts.append(_count(changed, "decision") + " changed")
    if new.failures != old.failures:
        parts.append(f"parse failures {old.failures} → {new.failures}")
    if new.signal_lost != old.signal_lost:
        parts.append(f"signal_lost {old.signal_lost} → {new.signal_lost}")
    return ", ".join(parts) if parts else None


# The excerpts kept (each at most locate.EXCERPT_MAX_LINES lines), and the rows read either side of
# the cursor: a step, a page or a jump of a few rows finds its item's excerpt read.
EXCERPTS_KEPT = 2048
EXCERPTS_AROUND = 32

Excerpted = tuple[Excerpt | None, str | None]  # read_excerpt's: the excerpt, or why there is none


class Excerpts:
    """The source excerpt of the items the detail pane shows, read off the event loop (issue 31:
    the pane read each item's source file the first time it showed it, in the middle of a cursor
    step). :meth:`read` runs in a worker or the loader thread; the pane takes what :meth:`get`
    has, and a cursor step reads nothing. An item without a location has no excerpt and needs no
    read. One store per load of a feature (its files may have changed since the last)."""

    def __init__(self, repo_root: str | None, carried: Excerpts | None = None) -> None:
        """``carried``: the store of the load this one follows (a reload of the same feature), whose
        excerpts are kept (a source file is no input of the feature: a reload never knew whether
        one changed; the store of each new feature starts empty)."""
        self.repo_root = repo_root
        self._got: dict[str, Excerpted] = {}
        if carried is not None and carried.repo_root == repo_root:
            self._got.update(carried._got)

    def get(self, item: ScarItem) -> Excerpted | None:
        """The item's excerpt (or why none), None while it is not read."""
        if not item.where or not item.where.strip():
            return None, None  # no location: nothing to read
        return self._got.get(item.id)

    def missing(self, items: Iterable[ScarItem]) -> list[ScarItem]:
        """Those of ``items`` whose excerpt is still to be read (each once)."""
        out: dict[str, ScarItem] = {}
        for it in items:
            if it.id not in out and self.get(it) is None:
                out[it.id] = it
        return list(out.values())

    def read(self, items: Iterable[ScarItem], stop: Callable[[], bool] = lambda: False) -> dict[str, Excerpted]:
        """Each item's excerpt read now (``locate.read_excerpt``: what cannot be read is said as
        its reason; anything else is raised). ``stop()``: give up with what is read so far."""
        got: dict[str, Excerpted] = {}
        for it in items:
            if stop():
                break
            got[it.id] = read_excerpt(self.repo_root, it.where)
        return got

    def add(self, got: Mapping[str, Excerpted]) -> None:
        """Keep ``got``; the oldest go when more than :data:`EXCERPTS_KEPT` are kept."""
        self._got.update(got)
        while len(self._got) > EXCERPTS_KEPT:
            del self._got[next(iter(self._got))]


def rows_around(
    rows: list[Row], index: int, views: Mapping[str, ItemView], around: int = EXCERPTS_AROUND
) -> list[ScarItem]:
    """The items of the rows within ``around`` of ``index``, the nearest first."""
    out: list[ScarItem] = []
    for k in range(around + 1):
        for i in {index + k, index - k}:
            if 0 <= i < len(rows) and rows[i].kind == "item" and rows[i].item_id in views:
                out.append(views[rows[i].item_id].item)  # type: ignore[index]
    return out
