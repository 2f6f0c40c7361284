"""The possible-pattern rule as it was before it was made cheaper (issue 17): terms analysed per
token with strings for terms, the IDF index, candidates and scores over string sets. A test oracle
only: ``test_patterns_fast`` checks :func:`scars.core.samsara.patterns.possible_patterns` gives
exactly its results. The rule's constants are read from the live module at call time (tests
change them)."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import Any

from scars.core.model import ScarItem
from scars.core.samsara import patterns as P
from scars.core.samsara.patterns import _IDENT, _WORD, Terms
from scars.core.text import STOPWORDS, cjk_re


def stem(word: str) -> str:
    """A light suffix stemmer: retries/retried/retry → retri, blocks → block, parsing → pars."""
    w = word
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 4 and (w.endswith("ed") or (w.endswith("es") and not w.endswith("ses"))):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    if len(w) > 5 and w.endswith("ity"):
        w = w[:-3]
    if len(w) > 3 and w.endswith("y"):
        w = w[:-1] + "i"
    if len(w) > 4 and w.endswith("e"):
        w = w[:-1]
    return w


def _word(token: str) -> str:
    """The word a case-folded token (without CJK) counts as: its stem, or "" for a stop word, a
    number or a single letter (which also break a run of adjacent words)."""
    return stem(token) if len(token) > 1 and token not in STOPWORDS and not token.isdigit() else ""


def terms(text: str) -> Terms:
    """The words and terms of a text (stop words break a run of adjacent words)."""
    words: set[str] = set()
    out: set[str] = set()
    prev: str | None = None
    cjk = cjk_re()
    folded = text.casefold()
    maybe_cjk = not folded.isascii()  # an ASCII text has no CJK word: no search per word
    for w in _WORD.findall(folded):
        if maybe_cjk and cjk.search(w):
            chars = [c for c in w if cjk.match(c)]
            out.update(a + b for a, b in zip(chars, chars[1:]))
            if len(chars) == 1:
                out.add(chars[0])
            prev = None
            for rest in cjk.sub(" ", w).split():
                if r := _word(rest):
                    words.add(r)
            continue
        s = _word(w)
        if not s:
            prev = None
            continue
        words.add(s)
        if prev is not None and prev != s:
            out.add(prev + " " + s)
        prev = s
    out |= words
    return Terms(frozenset(words), frozenset(out))


def identifiers(text: str) -> list[str]:
    """Code identifiers in a text, in order of appearance, without repeats."""
    seen: dict[str, None] = {}
    for m in _IDENT.findall(text):
        ident = m.rstrip(".").casefold()
        if all(len(part) > 1 for part in re.split(r"[./]|::", ident)):  # not "e.g", "i.e"
            seen.setdefault(ident, None)
    return list(seen)


def latin(t: Terms) -> frozenset[str] | None:
    """The terms of a text written outside CJK; None when it has no CJK term."""
    out = frozenset(k for k in t.terms if not cjk_re().search(k))
    return None if out == t.terms else out


def across_scripts(ta: Terms, tb: Terms) -> bool:
    """One text has CJK terms, the other none."""
    return (latin(ta) is None) != (latin(tb) is None)


class _Index:
    """Document frequencies and IDF weights of the terms of a list of texts."""

    def __init__(self, analysed: Sequence[Terms]):
        df: dict[str, int] = defaultdict(int)
        for t in analysed:
            for k in t.terms:
                df[k] += 1
        n = sum(1 for t in analysed if t.terms)
        self.df = df
        self.idf = {k: max(0.0, math.log((n + 1) / (d + 0.5))) for k, d in df.items()}
        # a text's weight, and a CJK text's weight of its terms outside CJK (for a pair across scripts)
        self.mass = [math.fsum([self.idf[k] for k in t.terms]) for t in analysed]
        self.latin = [math.fsum([self.idf[k] for k in lt]) if (lt := latin(t)) is not None else None for t in analysed]

    def score(self, a: int, b: int, ta: Terms, tb: Terms) -> float:
        """IDF-weighted containment: the weight of the shared terms over the lighter text's; across
        scripts, the CJK text weighs its terms outside CJK only."""
        ma, mb = self.mass[a], self.mass[b]
        if across_scripts(ta, tb):
            ma = self.latin[a] if self.latin[a] is not None else ma
            mb = self.latin[b] if self.latin[b] is not None else mb
        low = min(ma, mb)
        if low <= 0:
            return 0.0
        idf = self.idf
        return math.fsum([idf[k] for k in ta.terms & tb.terms]) / low


def candidates(analysed: Sequence[Terms], df: dict[str, int]) -> Iterator[tuple[int, int]]:
    """The pairs (n, m), n < m, worth scoring, each once: m has at least P.PROBE_HITS of n's
    probes (or n of m's), an item's probes being its P.PROBES rarest terms among those found
    in 2 to P.BLOCK_DF items (``df``: in how many items each term is)."""
    postings: dict[str, list[int]] = defaultdict(list)
    keys: list[list[str]] = []
    for n, t in enumerate(analysed):
        usable = [k for k in t.terms if 2 <= df[k] <= P.BLOCK_DF] if len(t.words) >= P.MIN_TOKENS else []
        for k in usable:
            postings[k].append(n)
        usable.sort(key=lambda k: (df[k], k))
        keys.append(usable[: P.PROBES])

    def hit(a: int, b: int) -> bool:
        """b holds enough of a's probes."""
        ks = keys[a]
        return bool(ks) and sum(1 for k in ks if k in analysed[b].terms) >= min(P.PROBE_HITS, len(ks))

    for n, ks in enumerate(keys):
        if not ks:
            continue
        hits: dict[int, int] = defaultdict(int)
        for k in ks:
            for m in postings[k]:
                hits[m] += 1
        need = min(P.PROBE_HITS, len(ks))
        for m in hits:
            if m == n or hits[m] < need:
                continue
            if m < n and hit(m, n):
                continue  # yielded already, from m's side
            yield (n, m) if n < m else (m, n)


def possible_patterns(
    items: list[ScarItem], literal: list[tuple[str, ...]], cache: dict[str, Terms] | None = None
) -> list[dict[str, Any]]:
    """Near-duplicate clusters across reports (never the literal rule).

    Each item's text is reduced to terms: stemmed words (stop words, numbers and one-letter
    words dropped; CJK as character bigrams) and pairs of adjacent words. A term found in
    ``df`` of the ``n`` items weighs ``idf = ln((n + 1) / (df + 0.5))``, so rare words,
    identifiers and phrases count most. Two items of different reports are similar when the
    weight of their shared terms is at least ``P.SIMILARITY_THRESHOLD`` of the lighter item's
    total (containment: a short item restated inside a long one still matches) and they share
    at least ``P.MIN_SHARED`` words. Only :func:`candidates` are scored. Pairs in the same report
    or the same literal pattern are skipped. Similar pairs join into clusters, most similar
    first, by average linkage (``P.LINK_THRESHOLD``); a cluster is reported when it spans two or
    more reports and is not wholly one literal pattern, with its best pair's similarity and
    what that pair shares.

    ``cache``: :class:`Terms` by normalised text, filled here (a text repeated is analysed once).
    """
    in_literal: dict[str, int] = {}
    for n, ids in enumerate(literal):
        for i in ids:
            in_literal[i] = n
    cache = {} if cache is None else cache
    analysed: list[Terms] = []
    for it in items:
        t = cache.get(it.normalized)
        if t is None:
            t = cache[it.normalized] = terms(it.text)
        analysed.append(t)
    index = _Index(analysed)
    files = [it.file for it in items]
    lits = [in_literal.get(it.id) for it in items]

    def comparable(a: int, b: int) -> bool:
        return files[a] != files[b] and (lits[a] is None or lits[a] != lits[b])

    def enough_words(a: int, b: int, need: int) -> bool:
        ta, tb = analysed[a], analysed[b]
        if len(ta.words) < P.MIN_TOKENS or len(tb.words) < P.MIN_TOKENS:
            return False
        extra = P.CROSS_MIN_SHARED - P.MIN_SHARED if across_scripts(ta, tb) else 0
        return len(ta.words & tb.words) >= need + extra

    # citations: for each task an item names, that task's item most like it (in another report)
    cited: dict[tuple[int, int], int] = {}
    boosted: dict[tuple[int, int], float] = {}
    tasks = [P.task_of(it) for it in items]
    for n, it in enumerate(items):
        for task in sorted(P.cited_tasks(it.normalized)):
            pool = [m for m in range(len(items)) if tasks[m] == task]
            if len(pool) > P.CITE_LIMIT:
                continue
            scored = [
                (index.score(n, m, analysed[n], analysed[m]), m)
                for m in pool
                if m != n and comparable(n, m) and enough_words(n, m, P.CITED_MIN_SHARED)
            ]
            scored = [(s, m) for s, m in scored if s >= P.CITED_THRESHOLD]
            if scored:
                s, m = max(scored, key=lambda e: (e[0], -e[1]))
                key = (min(n, m), max(n, m))
                boosted[key] = max(boosted.get(key, 0.0), s, P.SIMILARITY_THRESHOLD)
                cited.setdefault(key, task)

    memo: dict[tuple[int, int], float] = {}

    def sim(a: int, b: int) -> float:
        key = (a, b) if a < b else (b, a)
        got = memo.get(key)
        if got is None:
            plain = index.score(a, b, analysed[a], analysed[b]) if enough_words(a, b, P.MIN_SHARED) else 0.0
            got = max(plain, boosted[key]) if key in boosted else plain
            memo[key] = got
        return got

    edges: list[tuple[float, int, int]] = [(sim(a, b), a, b) for a, b in cited]
    for n, m in candidates(analysed, index.df):
        if comparable(n, m) and (n, m) not in cited:
            s = sim(n, m)
            if s >= P.SIMILARITY_THRESHOLD:
                edges.append((s, n, m))
    # Average linkage, most similar pair first.
    edges.sort(key=lambda e: (-e[0], e[1], e[2]))
    cluster_of: dict[int, list[int]] = {}
    best: dict[int, tuple[float, int]] = {}  # item -> (its best similarity in its cluster, the other item)
    for s, a, b in edges:
        ca, cb = cluster_of.get(a, [a]), cluster_of.get(b, [b])
        if ca is cb:
            continue
        if len(ca) * len(cb) > P.MAX_LINK_CHECKS:
            continue
        cross = [sim(x, y) for x in ca for y in cb if comparable(x, y)]
        if sum(cross) / len(cross) < P.LINK_THRESHOLD:
            continue
        merged = ca + cb
        for x in merged:
            cluster_of[x] = merged
        for x, y in ((a, b), (b, a)):
            if s > best.get(x, (-1.0, 0))[0]:
                best[x] = (s, y)
    clusters = {id(c): sorted(c) for c in cluster_of.values()}
    out: list[dict[str, Any]] = []
    for members in clusters.values():
        if len({files[m] for m in members}) < 2:
            continue
        if len({lits[m] if lits[m] is not None else -1 - m for m in members}) < 2:
            continue
        top = max(members, key=lambda m: (best[m][0], -m))
        top_sim, other = best[top]
        reason = _reason(items[top].text, items[other].text, analysed[top], analysed[other], index)
        task = cited.get((min(top, other), max(top, other)))
        out.append(
            {
                "ids": [items[m].id for m in members],
                "similarity": round(top_sim, 2),
                "reason": reason if task is None else f"one cites task-{task}; {reason}",
            }
        )
    out.sort(key=lambda p: (-len(p["ids"]), p["ids"]))
    return out


def _reason(text_a: str, text_b: str, ta: Terms, tb: Terms, index: _Index) -> str:
    """Why two texts look alike: the identifiers and the rarest terms they share, as written."""
    ids_b = set(identifiers(text_b))
    shared_ids = [i for i in identifiers(text_a) if i in ids_b][:4]
    id_parts = {stem(w) for i in shared_ids for w in _WORD.findall(i)}
    surface: dict[str, str] = {}
    for w in _WORD.findall(text_a.casefold()):
        surface.setdefault(stem(w), w)

    def shown(term: str) -> str:
        return " ".join(surface.get(w, w) for w in term.split(" "))

    shared = sorted(ta.terms & tb.terms, key=lambda k: (-index.idf[k], k))
    shared = [k for k in shared if not set(k.split(" ")) <= id_parts]
    phrases = [shown(k) for k in shared if " " in k][:3]
    words = [shown(k) for k in shared if " " not in k][: 6 - len(phrases)]
    parts = []
    if shared_ids:
        parts.append("shared identifiers: " + ", ".join(shared_ids))
    if phrases:
        parts.append(("phrases: " if parts else "shared phrases: ") + ", ".join(f"“{p}”" for p in phrases))
    if words:
        parts.append(("rare words: " if parts else "rare shared words: ") + ", ".join(words))
    return "; ".join(parts) if parts else "similar wording across reports"
