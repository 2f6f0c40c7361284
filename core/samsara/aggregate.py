"""Aggregation of a feature's scar items (formats.md §1.3–1.4).

* remaining set: every item that is not resolved (in place or through ``resolved_items``) and
  not an assumption verified true; ``signal_lost`` and per-category counts over the remaining
  items that are *counted* (items of parse-failed reports are shown, never counted);
* cross-task patterns (``scars.core.samsara.patterns``): upstream's literal rule and our
  near-duplicate "possible patterns";
* the three triage groups, each counted remaining item in exactly one;
* the iteration-entry verdict gate / skip / unknown with its one-line reversible record.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from scars.core.model import CATEGORIES, GROUPS, EntryVerdict, Feature, LogMatch, Problem, ScarItem
from scars.core.records import replace
from scars.core.samsara.matching import match_log
from scars.core.samsara.patterns import literal_patterns, possible_patterns
from scars.core.storage import parallel

ENTRY_THRESHOLD = 5  # signal_lost >= 5 asks the gate (upstream's uncalibrated estimate)

# From this many counted items the possible patterns are computed in a forked child while this
# process reads the rest of the feature and matches the iteration log (parallel.Beside): both take
# seconds at 50,000 items.
PATTERNS_BESIDE_FROM = 5000

# From this many counted items a reader that shows the feature before its possible patterns (the
# app's first paint, ``early``) gets it without them first: they grow with the square of the items
# (about 30 ms at 200 counted items, 90 ms at 375 on the 2-core build machine: possible_patterns
# timed on the first N counted items of bench's small feature), and below this they take less
# than the second paint costs.
PATTERNS_EARLY_FROM = 200


EVALUATOR_FAILS = "the Primary evaluator fails (index.yaml iteration_entry.evaluator: fail)"


def evaluator_failed(index: Any) -> bool:
    """The loop recorded that the Evaluation Contract's Primary evaluator fails (era D index.yaml
    ``iteration_entry.evaluator: fail``)."""
    entry = index.get("iteration_entry") if isinstance(index, dict) else None
    value = entry.get("evaluator") if isinstance(entry, dict) else None
    return isinstance(value, str) and value.strip().casefold() == "fail"


def parse_failures_said(failures: int | Sequence[Problem]) -> str:
    """The parse failures counted by file, as every record and figure says them: "1 parse
    failure(s)" when each failed file has one, else "2 file(s) failed to parse (4 parse
    failures)" (a report fails once per unusable item or ref: the files are what failed)."""
    if isinstance(failures, int):
        return f"{failures} parse failure(s)"
    n, files = len(failures), len({f.file for f in failures})
    return f"{n} parse failure(s)" if files == n else f"{files} file(s) failed to parse ({n} parse failures)"


NOT_IMPLEMENTED = (
    "implement has not run yet: every task in index.yaml is pending and there is no scar report "
    "(the entry is decided after implement: skills/implement/SKILL.md → Transition)"
)


def implement_pending(feature: Feature) -> bool:
    """The feature is not implemented yet: no scar report at all and index.yaml lists tasks,
    every one ``pending`` (seed 002: iteration is used "when implement is complete")."""
    if feature.reports:
        return False
    tasks = feature.index.get("tasks") if isinstance(feature.index, dict) else None
    if not isinstance(tasks, list) or not tasks:
        return False
    return all(isinstance(t, dict) and str(t.get("status", "")).strip().casefold() == "pending" for t in tasks)


def entry_verdict(
    signal_lost: int,
    patterns: int,
    failures: int | Sequence[Problem],
    evaluator_fails: bool = False,
    not_implemented: bool = False,
) -> EntryVerdict:
    """formats.md §1.3: three states. ``record`` is the one-line reversible record.

    ``evaluator_fails``: seed 002 Step 1 adds a failing Primary evaluator to the remaining set as a
    cross-task pattern, so it holds the entry criterion as a pattern does (never a default skip).
    ``failures``: the parse failures (or their number), said by file (:func:`parse_failures_said`).
    ``not_implemented`` (:func:`implement_pending`): the entry is not decided before implement has
    run — ``unknown`` saying so, never a default skip of a feature with nothing written yet."""
    if evaluator_fails:
        patterns += 1
    if failures:
        said = parse_failures_said(failures)
        return EntryVerdict(
            "unknown",
            f"signal_lost={signal_lost}, {said}, iteration entry unknown "
            "(never default-skipped; the gate decides iteration vs validate-and-ship)",
            (said,),
        )
    if not_implemented:
        return EntryVerdict(
            "unknown", f"signal_lost={signal_lost}, {NOT_IMPLEMENTED}: iteration entry unknown", (NOT_IMPLEMENTED,)
        )
    if patterns or signal_lost >= ENTRY_THRESHOLD:
        reasons = []
        if patterns:
            reasons.append(f"{patterns} cross-task pattern(s)")
        if evaluator_fails:
            reasons.append(f"{EVALUATOR_FAILS}: a cross-task pattern (seed 002 Step 1)")
        if signal_lost >= ENTRY_THRESHOLD:
            reasons.append(f"signal_lost {signal_lost} >= {ENTRY_THRESHOLD}")
        return EntryVerdict(
            "gate",
            f"signal_lost={signal_lost}, {patterns} cross-task pattern(s), enter iteration? (gate asks)",
            tuple(reasons),
        )
    return EntryVerdict(
        "skip",
        f"signal_lost={signal_lost}, no cross-task pattern, iteration skipped (reply to override)",
        (f"signal_lost {signal_lost} < {ENTRY_THRESHOLD}", "no cross-task pattern"),
    )


def start_possible_patterns(items: Sequence[ScarItem], literal: list[tuple[str, ...]] | None = None) -> parallel.Beside:
    """The possible patterns of a feature's remaining ``items`` (of those counted), started: in a
    forked child from PATTERNS_BESIDE_FROM counted items, else computed when its result is asked.
    ``literal``: the literal patterns of those items when known (else computed here); the handle
    keeps them for :func:`aggregate` (its args ``(counted, literal)``), which never computes them
    again."""
    counted = [it for it in items if it.counted]
    literal = literal_patterns(counted) if literal is None else literal
    return parallel.Beside(possible_patterns, (counted, literal), fork=len(counted) >= PATTERNS_BESIDE_FROM)


def with_possible_patterns(aggregated: Feature) -> Feature:
    """``aggregated`` (:func:`aggregate`'s feature but for its possible patterns, as ``meanwhile`` is
    given it) with them, computed here: what aggregate returns for the same feature."""
    counted = [it for it in aggregated.items if it.counted]
    return replace(
        aggregated, possible_patterns=tuple(possible_patterns(counted, list(aggregated.cross_task_patterns)))
    )


def aggregate(
    feature: Feature,
    possible: parallel.Beside | None = None,
    meanwhile: Callable[[Feature], None] | None = None,
    summary: bool = False,
    *,
    early: bool = False,
) -> Feature:
    """Fill counts, signal_lost, patterns, groups and the entry verdict of ``feature``.

    ``summary``: without the possible patterns and the log's matches (both left empty), which
    nothing of a repository's one-line summary per feature depends on (``possible`` and
    ``meanwhile`` are then not used).

    ``possible``: :func:`start_possible_patterns` of ``feature.items``, when the reader started it
    before (it is consumed here); else it is started here. ``meanwhile``: called, when the possible
    patterns are computed in a forked child, with the feature aggregated but for them (its
    ``possible_patterns`` empty; every other field, the items themselves included, is the
    result's) while the child computes them — work that does not depend on them (the cache's
    items, the items' JSON) done in time this process would spend waiting. Not called when they
    are computed here (there is no wait to fill), unless ``early`` and they are many (from
    PATTERNS_EARLY_FROM counted items): then before they are (the app shows the rest of the
    feature while they are computed, and cannot fork: it runs threads)."""
    counted = [it for it in feature.items if it.counted]
    counts: dict[str, int] = {c: 0 for c in CATEGORIES}
    for it in counted:
        counts[it.category] += 1
    signal_lost = sum(counts.values())
    # The literal rule over the counted items, once: the started handle has it (its args).
    literal = possible.args[1] if possible is not None else literal_patterns(counted)
    in_pattern = {i for ids in literal for i in ids}
    groups: dict[str, list[str]] = {g: [] for g in GROUPS}
    for it in counted:
        if it.id in in_pattern:
            groups["cross_task_patterns"].append(it.id)
        elif it.deferred:
            groups["deferred_from_level_1"].append(it.id)
        else:
            groups["unaddressed"].append(it.id)
    if summary:
        return _aggregated(feature, signal_lost, counts, groups, literal, ())
    pending = start_possible_patterns(feature.items, literal) if possible is None else possible
    try:
        aggregated = _aggregated(feature, signal_lost, counts, groups, literal, match_log(feature))
        if meanwhile is not None and (pending.forked or (early and len(counted) >= PATTERNS_EARLY_FROM)):
            meanwhile(aggregated)
    except BaseException:
        pending.cancel()
        raise
    return replace(aggregated, possible_patterns=tuple(pending.result()))


def _aggregated(
    feature: Feature,
    signal_lost: int,
    counts: dict[str, int],
    groups: dict[str, list[str]],
    literal: list[tuple[str, ...]],
    log_matches: tuple[LogMatch, ...],
) -> Feature:
    """``feature`` with what :func:`aggregate` computed, its possible patterns still empty."""
    return replace(
        feature,
        signal_lost=signal_lost,
        counts=counts,
        groups={g: tuple(v) for g, v in groups.items()},
        cross_task_patterns=tuple(literal),
        possible_patterns=(),
        entry=entry_verdict(
            signal_lost,
            len(literal),
            feature.parse_failures,
            evaluator_failed(feature.index),
            implement_pending(feature),
        ),
        log_matches=log_matches,
    )
