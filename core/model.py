"""Domain objects of scars, named from the upstream vocabulary (formats.md §1).

These small frozen records (:mod:`scars.core.records`) are the contract between the readers
(``scars.core.samsara.feature``, ``scars.core.samsara.aggregate``), the durable layer
(``scars.core.samsara.decisions`` …) and the terminal layer. Texts held here are exactly as read
(untrusted); renderers pass them through ``scars.core.sanitize`` before display.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Literal

from scars.core.records import field, fields, record

# The three signal_lost categories, by their `scars status --json` count keys.
Category = Literal["known_shortcuts", "silent_failure_conditions", "unverified_assumptions"]
CATEGORIES: tuple[Category, ...] = (
    "known_shortcuts",
    "silent_failure_conditions",
    "unverified_assumptions",
)
# The report section each category is read from.
SECTION_OF: dict[str, str] = {
    "known_shortcuts": "known_shortcuts",
    "silent_failure_conditions": "silent_failure_conditions",
    "unverified_assumptions": "assumptions_made",
}
CATEGORY_LABEL: dict[str, str] = {
    "known_shortcuts": "shortcut",
    "silent_failure_conditions": "silent failure",
    "unverified_assumptions": "assumption",
}

# Item forms (formats.md §1.2).
Form = Literal["gen1", "gen2", "systemic_ref", "gen3", "lifecycle", "assumption"]

# Registry state of a systemic_ref item: found in the registry, registry missing or
# unreadable ("unknown": still counted), or id absent from a present registry ("dangling").
RegistryState = Literal["found", "unknown", "dangling"]

# The systemic registry, relative to the repository root (formats.md §1.7).
REGISTRY_FILE = ".samsara/systemic-scars.yaml"

# Triage groups (formats.md §1.4), in display order.
GROUPS: tuple[str, ...] = ("cross_task_patterns", "deferred_from_level_1", "unaddressed")
GROUP_LABEL: dict[str, str] = {
    "cross_task_patterns": "Cross-task patterns",
    "deferred_from_level_1": "Deferred from Level 1",
    "unaddressed": "Unaddressed",
}


Severity = Literal["failure", "unknown", "warning", "note"]


@record(slots=True)
class Problem:
    """Something wrong with an input file or a log, never dropped silently: the one problem shape.

    ``severity``: ``failure`` — the file (or record) cannot be used, or a log fails verification
    (a report's items are then shown, never counted); ``unknown`` — it cannot be decided;
    ``warning`` — odd but usable; ``note`` — worth knowing. ``file`` is the path relative to the
    feature directory (or the repository, or the scanned tree; "" when none applies), ``line``
    1-based where known, ``message`` names the key or item at fault.
    """

    file: str
    line: int | None
    message: str
    severity: Severity = "failure"

    @property
    def where(self) -> str:
        """``file:line`` (``file`` when the line is unknown)."""
        return f"{self.file}:{self.line}" if self.file and self.line else self.file

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message

    @property
    def of_registry(self) -> bool:
        """The unreadable registry itself: it holds no items; systemic refs stay counted."""
        return self.file == REGISTRY_FILE


@record(slots=True)
class ScarItem:
    """One remaining (or resolved) scar item of a report.

    ``id`` is stable: derived from the report file name, the category, the whitespace-
    normalised text and the occurrence index of that text in the same file and category, so
    the same input gives the same id on every run, and an item keeps its id when reports are
    reordered or other items are added.
    """

    id: str
    category: Category
    text: str  # description / what / assumption / systemic note, as written
    task_id: str | None
    file: str  # report path relative to the feature directory, e.g. "scar-reports/task-1-scar.yaml"
    line: int | None  # 1-based line of the item in the report, where known
    form: Form
    deferred: bool = False
    systemic_ref: str | None = None
    registry_state: RegistryState | None = None
    registry_description: str | None = None
    counted: bool = True  # False for items of a parse-failed report
    resolved: bool = False
    resolution: str | None = None
    status: str | None = None  # era D lifecycle status (open/resolved/accepted/deferred/blocked)
    scar_id: str | None = None  # era D SC-N
    where: str | None = None  # the item's own location (Gen 3 / era D `where`); never the report's
    debt_location: str | None = None  # the report's `debt_location` (a report-level location, not the item's)
    bites_when: str | None = None
    accepted_because: str | None = None
    note: str | None = None  # assumption / systemic note
    verified: bool | None = None  # assumptions only; None = key missing (counted, with a warning)
    # The whitespace-normalised, case-folded text (the literal pattern rule's key) is ``normalized``,
    # computed from ``text``: held here only when it is not ``text.casefold()`` (a text with runs of
    # whitespace, and "" for an item of an unrecognised shape, which has no literal key) — about 4 %
    # of texts; a second copy of every text was 13 MB of a 50,000-item feature. :func:`odd_normal`.
    odd_normal: str | None = None
    notes: tuple[str, ...] = ()  # what the reader noticed about this item (also in Feature.warnings)
    # The item's keys no era defines (``severity:`` …), JSON-ready, shown as ``extra`` in
    # `scars status --json` and the JSON export; None when it has none. The keys an era defines
    # are the fields above: the parsed mapping itself is not kept (it doubled every item).
    extra: dict[str, Any] | None = field(default=None, compare=False, repr=False)
    fingerprint: str = ""  # what the item is as written (samsara.items.item_fingerprint), computed on read

    @property
    def normalized(self) -> str:
        """The whitespace-normalised, case-folded text (``scars.core.text.normalize``) used for literal
        pattern matching ("" for an item of an unrecognised shape)."""
        return normal_of(self.text, self.odd_normal)

    @property
    def description(self) -> str:
        """``text`` as a record or a prompt says it: without the whitespace around it (a folded
        ``>`` or literal ``|`` block scalar ends in a newline that is no part of the text)."""
        return self.text.strip()


def normal_of(text: str, odd: str | None) -> str:
    """The normalised text of ``text`` whose odd normal form (:func:`odd_normal`) is ``odd``."""
    return text.casefold() if odd is None else odd


def odd_normal(text: str, normalized: str) -> str | None:
    """What ``ScarItem.odd_normal`` holds for an item of ``text`` whose normalised text is
    ``normalized``: None when that is ``text.casefold()`` (ScarItem.normalized computes it)."""
    return None if normalized == text.casefold() else normalized


@record(slots=True)
class ScarReport:
    file: str  # relative to the feature directory
    task_id: str | None
    completion_status: str | None
    items: tuple[ScarItem, ...]  # every item, resolved ones included (resolved=True)
    parse_failure: Problem | None = None  # set when the report's items are not counted
    debt_location: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)  # unknown keys
    # legacy `resolved_items` entries: (original_section, original_description, resolution)
    resolved_entries: tuple[tuple[str, str, str], ...] = ()
    # the item id each entry resolved in another report or by a near copy (samsara.resolutions);
    # () when none did, else one per entry (None: that entry resolved nothing there)
    entry_items: tuple[str | None, ...] = ()


@record(slots=True)
class EvaluationContract:
    """`## Evaluation Contract` of pre-thinking.md, label to next label (formats.md §1.10)."""

    file: str
    primary_evaluator: str | None = None
    agent_can_perform_it_by: str | None = None
    pass_signal: str | None = None
    fail_signal: str | None = None
    feedback_loop: str | None = None
    out_of_scope_validation: str | None = None
    execution_mode: str | None = None  # "human-in-the-loop" | "auto" when the file says so


@record(slots=True)
class Registry:
    """`.samsara/systemic-scars.yaml`: state is present / missing / unreadable.

    Unreadable (formats.md §1.7, scars' rule): the file is one parse failure of its own and
    every ``systemic_ref`` is ``unknown`` and still counted, as with a missing registry.
    """

    state: Literal["present", "missing", "unreadable"]
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    path: str | None = None
    reason: str | None = None
    line: int | None = None  # where the reader stopped, when unreadable and known

    def failure(self) -> Problem | None:
        """The parse failure an unreadable registry is listed as (None when readable or missing)."""
        if self.state != "unreadable":
            return None
        return Problem(
            self.path or REGISTRY_FILE,
            self.line,
            f"registry unreadable: {self.reason}; every systemic_ref is unknown and still counted",
        )


@record(slots=True)
class EntryVerdict:
    """Iteration-entry verdict (formats.md §1.3): gate / skip / unknown, with its record."""

    verdict: Literal["gate", "skip", "unknown"]
    record: str  # the one-line reversible record
    reasons: tuple[str, ...] = ()


@record(slots=True)
class Round:
    """One round of iteration-log.yaml, normalised over eras (missing fields are None)."""

    round: int
    signal_lost_before: int | None = None
    signal_lost_after: int | None = None
    decision: str | None = None  # continue | stop | forced_stop | interrupted
    decision_reason: str | None = None
    items_triaged: int | None = None
    fix: tuple[str, ...] = ()
    accept: tuple[
        dict[str, Any], ...
    ] = ()  # {description, re_review_signal, owner, rationale} or legacy {description, expiry_date, rationale}
    defer: tuple[str, ...] = ()
    fixes_applied: int | None = None
    fixes_scar_count: int | None = None
    budget_context: dict[str, Any] | None = None
    budget_spent: dict[str, Any] | None = None
    evidence_gained: tuple[str, ...] = ()
    residual_risk: tuple[str, ...] = ()
    era: Literal["A", "B"] = "B"  # A: expiry_date accepts and/or no budget_context
    raw: Any = field(default=None, compare=False, repr=False)


@record(slots=True)
class IterationLog:
    """iteration-log.yaml as read (any era). Defaults per formats.md §1.5 when absent."""

    file: str
    feature: str | None = None
    signal_lost_initial: int | None = None
    max_rounds: int = 3
    reviewer_retry_limit: int = 2
    budget_present: bool = False
    rounds: tuple[Round, ...] = ()
    warnings: tuple[Problem, ...] = ()  # odd but usable content (severity warning)


@record(slots=True)
class AutoDecisionEntry:
    """One `## Decision NNN - <stage>.<gate-id>` entry of auto-decisions.md (formats.md §1.6)."""

    number: int
    heading_stage: str
    gate_id: str
    line: int  # 1-based line of the heading
    fields: dict[str, Any] = field(default_factory=dict)  # field -> str | list[str] | {level, notes}
    problems: tuple[str, ...] = ()  # malformations found while parsing (missing fields, bad order …)


# How surely a log's description names an item (scars.core.samsara.matching).
Confidence = Literal["exact", "normalized", "similar", "weak", "ambiguous", "none"]
CONFIDENT: tuple[str, ...] = ("exact", "normalized", "similar")  # taken; weak / ambiguous / none never are


@record(slots=True)
class LogMatch:
    """One triaged description of iteration-log.yaml and the item it names (or why none)."""

    round: int
    action: str  # fix | accept | defer
    index: int  # position in the round's list
    description: str  # the text as written
    target: str | None  # an item id, or ``resolved_items:<report>#<n>``; None unless confident
    confidence: Confidence
    score: float  # 1.0 for exact / normalized; the similarity otherwise
    reason: str
    candidates: tuple[tuple[str, float], ...] = ()  # the best targets (weak, ambiguous, similar)
    entry: Any = field(default=None, compare=False, repr=False)  # the string or accept mapping as read

    @property
    def confident(self) -> bool:
        return self.target is not None and self.confidence in CONFIDENT

    @property
    def item_id(self) -> str | None:
        """The item named (None for a resolved_items entry or no confident match)."""
        if not self.confident or self.target is None or self.target.startswith("resolved_items:"):
            return None
        return self.target


@record(slots=True, weakref_slot=True)  # weakref: the cache's token of a read (storage.cache)
class Feature:
    """Everything read and computed for one samsara feature directory.

    ``items`` holds every item that is not resolved, counted or not (items of a parse-failed
    report have ``counted=False``); ``resolved`` holds the excluded ones.
    """

    name: str
    path: str  # absolute path of the feature directory
    repo_root: str | None  # directory holding `changes/` (and `.samsara/`), when found
    reports: tuple[ScarReport, ...] = ()
    items: tuple[ScarItem, ...] = ()
    resolved: tuple[ScarItem, ...] = ()
    parse_failures: tuple[Problem, ...] = ()
    dangling_refs: tuple[tuple[str, str], ...] = ()  # (file, id)
    warnings: tuple[Problem, ...] = ()  # odd but usable content (severity warning)
    registry: Registry | None = None
    contract: EvaluationContract | None = None
    index: dict[str, Any] | None = None
    iteration_log: IterationLog | None = None
    auto_decisions: tuple[AutoDecisionEntry, ...] = ()
    signal_lost: int = 0
    counts: dict[str, int] = field(default_factory=dict)  # per category, counted items only
    groups: dict[str, tuple[str, ...]] = field(default_factory=dict)  # GROUPS -> item ids
    cross_task_patterns: tuple[tuple[str, ...], ...] = ()  # literal rule: ids per pattern
    possible_patterns: tuple[dict[str, Any], ...] = ()  # near-duplicates: {ids, similarity, reason}
    entry: EntryVerdict | None = None
    execution_mode: str | None = None
    log_matches: tuple[LogMatch, ...] = ()  # every triaged description of the log, matched to an item

    @property
    def auto_mode(self) -> bool:
        """pre-thinking.md says ``Execution mode: auto``: the gatekeeper, not a person, answers
        the gates, and each decision point appends its auto-decisions.md entry."""
        return (self.execution_mode or "").strip().lower() == "auto"

    def item(self, item_id: str) -> ScarItem:
        for it in self.items:
            if it.id == item_id:
                return it
        for it in self.resolved:
            if it.id == item_id:
                return it
        raise KeyError(item_id)

    def sizes(self) -> tuple[int, int]:
        """``(len(self.items), len(self.resolved))``, without loading the items of a :class:`LazyFeature`."""
        return len(self.items), len(self.resolved)


@record(slots=True)
class FeatureSummary:
    """What a repository's one line per feature shows of a feature (``scars status REPO``): read
    without the possible patterns and the log's matches, cached apart from the whole Feature."""

    name: str
    path: str
    signal_lost: int
    entry: EntryVerdict | None
    parse_failures: tuple[Problem, ...]
    rounds: int  # rounds in iteration-log.yaml

    @classmethod
    def of(cls, feature: Feature) -> FeatureSummary:
        log = feature.iteration_log
        return cls(
            feature.name,
            feature.path,
            feature.signal_lost,
            feature.entry,
            feature.parse_failures,
            len(log.rounds) if log else 0,
        )


# The parts of a Feature a LazyFeature loads when first asked: every item object is in them.
DEFERRED_PARTS = ("items", "resolved", "reports")
_FEATURE_FIELDS: tuple[str, ...] = fields(Feature)


def _deferred_part(name: str) -> property:
    slot = Feature.__dict__[name]  # the member descriptor of Feature's slot

    def get(self: LazyFeature) -> Any:
        try:
            return slot.__get__(self, Feature)
        except AttributeError:  # not loaded yet
            self._materialise()
            return slot.__get__(self, Feature)

    # Set only through the slot itself: Feature's __init__ (records.replace …) sets each slot through
    # its descriptor, and LazyFeature.deferred and _materialise do.
    return property(get, doc=f"Feature.{name}, loaded with the other deferred parts when first asked")


class LazyFeature(Feature):
    """A Feature whose items, resolved items and reports (:data:`DEFERRED_PARTS`) are loaded when
    first asked, all three together (the read cache: a warm ``scars status --json`` prints the
    items' JSON kept beside the feature and never builds the 50,000 item objects; the app, the text
    status and the gates ask for them). Everything else is the Feature's own. It equals the Feature
    with the same fields, pickles as a Feature, and :meth:`sizes` needs no load."""

    __slots__ = ("_load", "_sizes", "_lock")
    _load: Callable[[], tuple[Any, Any, Any]] | None
    _sizes: tuple[int, int]
    _lock: threading.Lock

    items = _deferred_part("items")
    resolved = _deferred_part("resolved")
    reports = _deferred_part("reports")

    @classmethod
    def deferred(cls, rest: Feature, sizes: tuple[int, int], load: Callable[[], tuple[Any, Any, Any]]) -> LazyFeature:
        """``rest`` (a Feature; its deferred parts are not read) whose items, resolved items and
        reports ``load()`` gives when first asked; ``sizes``: the lengths of the first two."""
        out = object.__new__(cls)
        for name in _FEATURE_FIELDS:
            if name not in DEFERRED_PARTS:
                Feature.__dict__[name].__set__(out, getattr(rest, name))
        object.__setattr__(out, "_load", load)
        object.__setattr__(out, "_sizes", sizes)
        object.__setattr__(out, "_lock", threading.Lock())
        return out

    @property
    def loaded(self) -> bool:
        """Whether the deferred parts are loaded."""
        try:
            Feature.__dict__["items"].__get__(self, Feature)
        except AttributeError:
            return False
        return True

    def _materialise(self) -> None:
        with self._lock:
            if self.loaded:
                return
            load = self._load
            assert load is not None  # set until the parts are loaded
            for name, value in zip(DEFERRED_PARTS, load(), strict=True):
                Feature.__dict__[name].__set__(self, value)
            object.__setattr__(self, "_load", None)  # what it held (the cache file's bytes) is freed

    def sizes(self) -> tuple[int, int]:
        return self._sizes if not self.loaded else (len(self.items), len(self.resolved))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Feature):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in _FEATURE_FIELDS)

    __hash__ = Feature.__hash__

    def __reduce__(self) -> tuple[Any, ...]:
        return (Feature, tuple(getattr(self, n) for n in _FEATURE_FIELDS))
