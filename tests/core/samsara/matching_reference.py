"""The log matcher as it was before it was made proportional to what is left to match (issue 17):
every stage by brute force over every target (the near-copy stage compares each target's text,
the similarity stage analyses every target's terms and scores by the full IDF index). A test
oracle only: ``test_matching_fast`` checks the matcher gives exactly its results."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

from scars.core.samsara.matching import (
    MIN_SHARED_WORDS,
    Matcher,
    Target,
    _Cleaned,
    _copy_form,
    _near,
    _Ranked,
    targets_of,
)
from scars.core.samsara.patterns import terms


class ReferenceMatcher(Matcher):
    def __init__(self, targets: Sequence[Target]):
        super().__init__(targets)
        self._ref_index: tuple[list[frozenset[str]], list[bool], dict[str, float], dict[str, list[int]]] | None = None

    @classmethod
    def of(cls, feature):  # type: ignore[override]
        return cls(targets_of(feature))

    def _normalised(self, c: _Cleaned, pool: Sequence[Target]) -> list[Target]:
        found: list[Target] = []
        for head in c.heads:
            head_form = _copy_form(head)
            for t in pool:
                near = t.normalized and (t.normalized == head or _near(head_form, _copy_form(t.normalized)))
                if near and t not in found:
                    found.append(t)
            if found:
                return found
        return found

    def _ref(self):
        if self._ref_index is None:
            analysed = [terms(t.text) for t in self.targets]
            df: dict[str, int] = defaultdict(int)
            postings: dict[str, list[int]] = defaultdict(list)
            for n, a in enumerate(analysed):
                for k in a.words:
                    df[k] += 1
                    postings[k].append(n)
            total = sum(1 for a in analysed if a.terms)
            idf = {k: math.log((total + 1) / (d + 0.5)) + 0.1 for k, d in df.items()}
            self._ref_index = ([a.words for a in analysed], [bool(a.terms) for a in analysed], idf, postings)
        return self._ref_index

    def _rank(self, text: str, pool: Sequence[Target], taken: set[str], *, whole: bool = False):
        words_of, _any, idf, postings = self._ref()
        words = terms(text).words
        default = math.log(len(self.targets) + 2) + 0.1
        mass = math.fsum([idf.get(k, default) for k in words])
        if mass <= 0:
            return words, []
        allowed = {id(t) for t in pool}
        scores: dict[int, float] = defaultdict(float)
        for k in sorted(words):
            w = idf.get(k)
            if w is None:
                continue
            for n in postings.get(k, ()):
                scores[n] += w
        ranked = []
        for n, shared in scores.items():
            t = self.targets[n]
            if id(t) in allowed and len(words & words_of[n]) >= MIN_SHARED_WORDS:
                ranked.append((shared / mass, n, t))
        ranked.sort(key=lambda x: (-x[0], x[2].id in taken, x[1]))
        return words, [_Ranked(sc, t, words & words_of[n]) for sc, n, t in ranked]
