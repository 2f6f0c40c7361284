"""Cross-task patterns (formats.md §1.4): upstream's literal rule and our near-duplicate rule.

* literal (upstream's): the same whitespace-normalised text, or the same ``systemic_ref`` id,
  in at least two different reports;
* possible patterns (ours, never counted as the literal rule): near-duplicate texts in
  different reports, by token-set Jaccard similarity with exact prefix filtering (below).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from scars.core.model import ScarItem
from scars.core.text import tokens

# Possible patterns: Jaccard similarity of token sets at or above this, with at least
# MIN_SHARED tokens in common, between items of different reports.
SIMILARITY_THRESHOLD = 0.5


MIN_SHARED = 3


MIN_TOKENS = 3


PREFIX_CAP = 3  # rarest tokens used as blocking keys per item


REPRESENTATIVES = 4  # earlier items kept per blocking token


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
    out: list[dict[str, Any]] = []
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
