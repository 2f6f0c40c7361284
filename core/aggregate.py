"""Aggregation of a feature's scar items (formats.md §1.3–1.4).

* remaining set: every item that is not resolved (in place or through ``resolved_items``) and
  not an assumption verified true; ``signal_lost`` and per-category counts over the remaining
  items that are *counted* (items of parse-failed reports are shown, never counted);
* cross-task patterns, upstream's literal rule: the same whitespace-normalised text, or the
  same ``systemic_ref`` id, in at least two different reports;
* possible patterns (ours, never counted as the literal rule): near-duplicate texts in
  different reports, by token-set Jaccard similarity with exact prefix filtering (below);
* the three triage groups, each counted remaining item in exactly one;
* the iteration-entry verdict gate / skip / unknown with its one-line reversible record.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import replace
from typing import Any

from scars.core.model import CATEGORIES, GROUPS, EntryVerdict, Feature, ScarItem

ENTRY_THRESHOLD = 5  # signal_lost >= 5 asks the gate (upstream's uncalibrated estimate)

# Possible patterns: Jaccard similarity of token sets at or above this, with at least
# MIN_SHARED tokens in common, between items of different reports.
SIMILARITY_THRESHOLD = 0.5
MIN_SHARED = 3
MIN_TOKENS = 3
PREFIX_CAP = 3  # rarest tokens used as blocking keys per item
REPRESENTATIVES = 4  # earlier items kept per blocking token

_STOPWORDS = frozenset(
    "a an the and or but if then else of to in on at by for with from as is are was were be been "
    "it its this that these those not no nor so than too very can will just do does did has have "
    "had into over under out up down only own same such there their they them we you he she i "
    "our your his her which who whom what when where why how all any both each few more most other "
    "some".split()
)
_WORD = re.compile(r"\w+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def tokens(text: str) -> frozenset[str]:
    """Token set of a text: case-folded words without stop words; CJK runs as bigrams."""
    words = _WORD.findall(text.casefold())
    if text.isascii():
        return frozenset(w for w in words if len(w) > 1 and w not in _STOPWORDS)
    out: set[str] = set()
    for w in words:
        if _CJK.search(w):
            chars = [c for c in w if _CJK.match(c)]
            rest = _CJK.sub(" ", w).split()
            out.update(a + b for a, b in zip(chars, chars[1:]))
            if len(chars) == 1:
                out.add(chars[0])
            out.update(r for r in rest if len(r) > 1 and r not in _STOPWORDS)
        elif len(w) > 1 and w not in _STOPWORDS:
            out.add(w)
    return frozenset(out)


def pattern_key(item: ScarItem) -> str:
    """The literal rule's key: the systemic_ref id, else the normalised text."""
    if item.systemic_ref:
        return "ref:" + item.systemic_ref
    return "text:" + item.normalized


def literal_patterns(items: list[ScarItem]) -> list[tuple[str, ...]]:
    by_key: dict[str, list[ScarItem]] = defaultdict(list)
    for it in items:
        if it.normalized or it.systemic_ref:
            by_key[pattern_key(it)].append(it)
    out = []
    for group in by_key.values():
        if len({it.file for it in group}) >= 2:
            out.append(tuple(it.id for it in group))
    out.sort(key=lambda ids: (-len(ids), ids))
    return out


def possible_patterns(items: list[ScarItem], literal: list[tuple[str, ...]]) -> list[dict[str, Any]]:
    """Near-duplicate clusters across reports (never the literal rule).

    Similarity is token-set Jaccard J(a, b) = |a ∩ b| / |a ∪ b| over case-folded words
    (stop words dropped, CJK as character bigrams); a pair is similar when J ≥ 0.5 and it
    shares at least 3 tokens. Candidates come from prefix blocking (after the AllPairs
    method): tokens are ordered by rising document frequency, and two sets with J ≥ t must
    share one of their first |x| − ⌈t·|x|⌉ + 1 tokens, so an item is only compared with items
    sharing one of its rarest tokens. To stay near-linear at tens of thousands of items, at
    most ``PREFIX_CAP`` prefix tokens are used per item and each token keeps at most
    ``REPRESENTATIVES`` earlier items to compare with (an approximation: a cluster is found
    through its first members). Pairs in the same report or the same literal pattern are
    skipped. Similar pairs are joined into clusters (union-find); a cluster is reported when
    it spans two or more reports and is not wholly one literal pattern.
    """
    in_literal: dict[str, int] = {}
    for n, ids in enumerate(literal):
        for i in ids:
            in_literal[i] = n
    cache: dict[str, frozenset[str]] = {}
    toks = []
    for it in items:
        ts = cache.get(it.normalized)
        if ts is None:
            ts = cache[it.normalized] = tokens(it.text)
        toks.append(ts)
    df: dict[str, int] = defaultdict(int)
    for ts in toks:
        for t in ts:
            df[t] += 1
    parent = list(range(len(items)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    best_sim: dict[int, float] = {}
    reps: dict[str, list[int]] = defaultdict(list)
    files = [it.file for it in items]
    lits = [in_literal.get(it.id) for it in items]
    for n, ts in enumerate(toks):
        size = len(ts)
        if size < MIN_TOKENS:
            continue
        prefix = min(size - math.ceil(SIMILARITY_THRESHOLD * size) + 1, PREFIX_CAP)
        order = sorted(ts, key=lambda t: (df[t], t))[:prefix] if size > prefix else ts
        seen: set[int] = set()
        for t in order:
            bucket = reps[t]
            for m in bucket:
                if m in seen:
                    continue
                seen.add(m)
                if files[m] == files[n] or (lits[n] is not None and lits[n] == lits[m]):
                    continue
                tm = toks[m]
                inter = len(ts & tm)
                if inter < MIN_SHARED:
                    continue
                j = inter / (size + len(tm) - inter)
                if j >= SIMILARITY_THRESHOLD:
                    best_sim[n] = max(best_sim.get(n, 0.0), j)
                    best_sim[m] = max(best_sim.get(m, 0.0), j)
                    ra, rb = find(n), find(m)
                    if ra != rb:
                        parent[max(ra, rb)] = min(ra, rb)
            if len(bucket) < REPRESENTATIVES:
                bucket.append(n)
    clusters: dict[int, list[int]] = defaultdict(list)
    for n in best_sim:
        clusters[find(n)].append(n)
    out = []
    for members in clusters.values():
        members.sort()
        if len({files[m] for m in members}) < 2:
            continue
        if len({lits[m] if lits[m] is not None else -1 - m for m in members}) < 2:
            continue
        shared = frozenset.intersection(*(toks[m] for m in members))
        out.append(
            {
                "ids": [items[m].id for m in members],
                "similarity": round(max(best_sim[m] for m in members), 2),
                "reason": "near-duplicate wording across reports"
                + (f" (shared words: {', '.join(sorted(shared)[:6])})" if shared else ""),
            }
        )
    out.sort(key=lambda p: (-len(p["ids"]), p["ids"]))
    return out


def entry_verdict(signal_lost: int, patterns: int, failures: int) -> EntryVerdict:
    """formats.md §1.3: three states. ``record`` is the one-line reversible record."""
    if failures:
        return EntryVerdict(
            "unknown",
            f"signal_lost={signal_lost}, {failures} parse failure(s), iteration entry unknown "
            "(never default-skipped; the gate decides iteration vs validate-and-ship)",
            (f"{failures} parse failure(s)",),
        )
    if patterns or signal_lost >= ENTRY_THRESHOLD:
        reasons = []
        if patterns:
            reasons.append(f"{patterns} cross-task pattern(s)")
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


def aggregate(feature: Feature) -> Feature:
    """Fill counts, signal_lost, patterns, groups and the entry verdict of ``feature``."""
    counted = [it for it in feature.items if it.counted]
    counts = {c: 0 for c in CATEGORIES}
    for it in counted:
        counts[it.category] += 1
    signal_lost = sum(counts.values())
    literal = literal_patterns(counted)
    in_pattern = {i for ids in literal for i in ids}
    groups: dict[str, list[str]] = {g: [] for g in GROUPS}
    for it in counted:
        if it.id in in_pattern:
            groups["cross_task_patterns"].append(it.id)
        elif it.deferred:
            groups["deferred_from_level_1"].append(it.id)
        else:
            groups["unaddressed"].append(it.id)
    possible = possible_patterns(counted, literal)
    return replace(
        feature,
        signal_lost=signal_lost,
        counts=counts,
        groups={g: tuple(v) for g, v in groups.items()},
        cross_task_patterns=tuple(literal),
        possible_patterns=tuple(possible),
        entry=entry_verdict(signal_lost, len(literal), len(feature.parse_failures)),
    )


# --------------------------------------------------------------------------- JSON


def item_to_json(it: ScarItem) -> dict[str, Any]:
    return {
        "id": it.id,
        "category": it.category,
        "text": it.text,
        "task_id": it.task_id,
        "file": it.file,
        "line": it.line,
        "form": it.form,
        "deferred": it.deferred,
        "systemic_ref": it.systemic_ref,
        "registry_state": it.registry_state,
        "registry_description": it.registry_description,
        "counted": it.counted,
        "resolved": it.resolved,
        "status": it.status,
        "scar_id": it.scar_id,
        "where": it.where,
        "bites_when": it.bites_when,
        "verified": it.verified,
        "note": it.note,
    }


def round_to_json(r) -> dict[str, Any]:
    return {
        "round": r.round,
        "signal_lost_before": r.signal_lost_before,
        "signal_lost_after": r.signal_lost_after,
        "decision": r.decision,
        "decision_reason": r.decision_reason,
        "fixes_applied": r.fixes_applied,
        "fixes_scar_count": r.fixes_scar_count,
        "fix": len(r.fix),
        "accept": len(r.accept),
        "defer": len(r.defer),
        "era": r.era,
    }


def feature_to_json(feature: Feature) -> dict[str, Any]:
    """The object `scars status --json` prints for one feature (README, section commands)."""
    from scars.core.journal import feature_state, status_rounds

    log = feature.iteration_log
    # Decisions and rounds recorded by scars (.scars/journal.jsonl); a decision made on another
    # item than the one holding its id now is taken back and listed (README, Item ids).
    state = feature_state(feature.path, items=list(feature.items) + list(feature.resolved))
    moved = [{"item_id": k, "action": m["decision"].action, "decided_by": m["decision"].decided_by,
              "decided_at": m["decision"].decided_at, "text": m["text"], "decided_item_now": m["decided_item_now"]}
             for k, m in sorted(state.moved.items())]
    return {
        "feature": feature.name,
        "path": feature.path,
        "signal_lost": feature.signal_lost,
        "counts": dict(feature.counts),
        "groups": {g: list(feature.groups.get(g, ())) for g in GROUPS},
        "cross_task_patterns": [list(ids) for ids in feature.cross_task_patterns],
        "possible_patterns": [dict(p) for p in feature.possible_patterns],
        "parse_failures": [{"file": f.file, "line": f.line, "reason": f.reason} for f in feature.parse_failures],
        "dangling_refs": [{"file": f, "id": i} for f, i in feature.dangling_refs],
        "warnings": list(feature.warnings),
        "entry": {
            "verdict": feature.entry.verdict if feature.entry else "unknown",
            "record": feature.entry.record if feature.entry else "",
        },
        "registry": feature.registry.state if feature.registry else "missing",
        "execution_mode": feature.execution_mode,
        "items": [dict(item_to_json(it), decision=_decision_json(state, it.id)) for it in feature.items],
        "resolved": [dict(item_to_json(it), decision=_decision_json(state, it.id)) for it in feature.resolved],
        "rounds": status_rounds([round_to_json(r) for r in log.rounds] if log else [], state),
        "max_rounds": log.max_rounds if log else 3,
        "reopened": reopened_json(feature),
        "moved_decisions": moved,
    }


def _decision_json(state, item_id: str) -> dict[str, Any] | None:
    """The item's current decision with its fields, or None when undecided."""
    d = state.decisions.get(item_id)
    return None if d is None else d.to_dict()


def reopened_json(feature: Feature) -> list[dict[str, Any]]:
    """Items a fired watch reopened and nobody has decided again (scars.core.watch)."""
    from scars.core.watch import reopened_now

    recs = reopened_now(feature.path)
    return [{"item_id": k, "watch": r.get("watch"), "cause": r.get("cause"), "at": r.get("at"),
             "auto_decision": r.get("auto_decision")} for k, r in sorted(recs.items())]
