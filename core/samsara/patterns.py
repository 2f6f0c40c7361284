"""Cross-task patterns (formats.md §1.4): upstream's literal rule and our near-duplicate rule.

* literal (upstream's): the same whitespace-normalised text, or the same ``systemic_ref`` id,
  in at least two different reports;
* possible patterns (ours, never counted as the literal rule): items of different reports
  that describe the same rot in other words, by IDF-weighted containment of their terms
  (below). Both are pure functions of the items they are given.

How the near-duplicate rule was chosen and how well it does on labelled real pairs:
``bench/patterns_quality.py`` (its labelled set: ``bench/patterns_labels.yaml``).
"""

from __future__ import annotations

import functools
import math
import re
import threading
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from itertools import chain
from typing import Any, Protocol, TypeVar

from scars.core.model import ScarItem
from scars.core.records import record
from scars.core.text import CJK_CLASS, STOPWORDS, cjk_re

# A pair of items of different reports is a possible pattern when the IDF-weighted share of
# the smaller item's terms that the other one also has is at least this, and they share at
# least MIN_SHARED words (each item having at least MIN_TOKENS words).
SIMILARITY_THRESHOLD = 0.2


MIN_SHARED = 3


MIN_TOKENS = 3


# Candidate pairs (to stay near-linear at tens of thousands of items): an item is compared
# with the items that have one of its PROBES rarest terms, among terms found in at most
# BLOCK_DF items (a term that common is a poor key and its postings would make the search
# quadratic). An approximation: a pair is compared only when one of the two has one of the
# other's rarest terms.
PROBES = 16


PROBE_HITS = 2  # a candidate has at least this many of the item's probe terms (fewer if it has fewer)


BLOCK_DF = 48


# Two clusters join (through a similar pair) only when the mean similarity of all their
# cross-report pairs is at least LINK_THRESHOLD (average linkage: no chains through one long
# item that resembles many); clusters whose product of sizes exceeds MAX_LINK_CHECKS stay apart.
LINK_THRESHOLD = 0.15


MAX_LINK_CHECKS = 100


# An item that cites a task ("same as task-3's scar", "(task-1 scar)", "inherits … from task-2",
# "Task 2/3") is paired with the one item of that task's reports (never its own report) it
# resembles most, when their similarity is at least CITED_THRESHOLD and they share at least
# CITED_MIN_SHARED words: the writer's own pointer stands for the rest of the evidence, so the pair
# counts as similar at SIMILARITY_THRESHOLD (its own score when higher). A cited task with more
# than CITE_LIMIT items is not searched (a pointer into that many items names none of them).
CITED_THRESHOLD = 0.1


CITED_MIN_SHARED = 2


CITE_LIMIT = 200


# A pair across scripts (one text with CJK, the other without) can share only the terms written
# outside CJK (identifiers, English words, paths): the CJK text's weight is that of those terms
# alone, and the pair needs CROSS_MIN_SHARED shared words (one more than MIN_SHARED: those words
# are all the CJK text has to match with).
CROSS_MIN_SHARED = 4


_K = TypeVar("_K")
_V = TypeVar("_V")


_WORD = re.compile(r"\w+", re.UNICODE)


# Code identifiers, kept whole for the reason a pattern gives: dotted or slashed names
# (shutil.move, hook.sh.j2, skills/x), snake_case and camelCase words.
_IDENT = re.compile(
    r"[A-Za-z_][\w-]*(?:(?:\.|/|::)[\w-]+)+|(?<![\w.])_*[A-Za-z][A-Za-z0-9]*_\w+|\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z]+[A-Z]\w*\b"
)


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


@record(slots=True)
class Terms:
    """What the near-duplicate rule sees of one text."""

    words: frozenset[str]  # stemmed, case-folded words without stop words, numbers or 1-letter words
    terms: frozenset[str]  # words + pairs of adjacent words ("code block") + CJK character bigrams


def _word(token: str) -> str:
    """The word a case-folded token (without CJK) counts as: its stem, or "" for a stop word, a
    number or a single letter (which also break a run of adjacent words)."""
    return stem(token) if len(token) > 1 and token not in STOPWORDS and not token.isdigit() else ""


class _Memo(dict[_K, _V]):
    """``of(key)`` of each key seen (a token's word, a word's stem …), for one run of many texts
    (freed with it)."""

    def __init__(self, of: Callable[[_K], _V]) -> None:
        super().__init__()
        self._of = of

    def __missing__(self, key: _K) -> _V:
        got = self[key] = self._of(key)
        return got


@record(slots=True)
class _IdTerms:
    """:class:`Terms` with each term an int of a :class:`_Vocabulary`."""

    words: frozenset[int]
    terms: frozenset[int]
    latin: frozenset[int] | None = None  # a CJK text's terms written outside CJK (None: no CJK term)


# The key of the pair of adjacent words numbered a, b while it is looked up: a * _PAIR + b (no run
# numbers 2**32 distinct words).
_PAIR = 1 << 32


class _Vocabulary:
    """The terms of the texts of one run as small ints (sets of them hash and intersect faster
    than sets of strings): each distinct term (a word, a pair of adjacent words, a CJK term) is
    numbered on first sight, each distinct token judged once and each distinct pair of words
    spelt once (``word``: :func:`_word` or a memo of it); :meth:`text` gives a term's text back.
    Freed with the run."""

    def __init__(self, word: Callable[[str], str] = _word) -> None:
        self.ids: dict[str, int] = {}
        self.names: list[str] = []
        self.judged: _Memo[str, str] = _Memo(word)  # token -> its word
        self._word = self.judged.__getitem__
        self._token: _Memo[str, int] = _Memo(self._token_id)  # token -> its word's number, -1: no word
        self._pair: _Memo[int, int] = _Memo(self._pair_id)  # a * _PAIR + b -> the pair's number

    def _id(self, name: str) -> int:
        n = self.ids.get(name)
        if n is None:
            n = self.ids[name] = len(self.names)
            self.names.append(name)
        return n

    def _token_id(self, token: str) -> int:
        w = self._word(token)
        return self._id(w) if w else -1

    def _pair_id(self, key: int) -> int:
        a, b = divmod(key, _PAIR)
        return self._id(self.names[a] + " " + self.names[b])

    def text(self, term: int) -> str:
        return self.names[term]

    def analyse(self, text: str) -> _IdTerms:
        """The words and terms of a text (stop words break a run of adjacent words)."""
        folded = text.casefold()
        if not folded.isascii() and cjk_re().search(folded):
            words, latin, cjk = _cjk_terms(folded, self._word)
            outside = frozenset(map(self._id, latin))
            if not cjk:
                return _IdTerms(frozenset(map(self._id, words)), outside)
            return _IdTerms(frozenset(map(self._id, words)), outside.union(map(self._id, cjk)), outside)
        # A text without CJK: every token is a word or none (a stop word, a number, a letter),
        # which breaks a run of adjacent words.
        ws = list(map(self._token.__getitem__, _WORD.findall(folded)))
        ids = set(ws)
        ids.discard(-1)
        pair = self._pair
        pairs = {pair[a * _PAIR + b] for a, b in zip(ws, ws[1:]) if a != b and a >= 0 and b >= 0}
        pairs |= ids
        return _IdTerms(frozenset(ids), frozenset(pairs))


def _cjk_terms(folded: str, word: Callable[[str], str]) -> tuple[set[str], set[str], set[str]]:
    """:meth:`_Vocabulary.analyse` of a case-folded text that may hold CJK, as strings: (its
    words, its terms written outside CJK, its CJK terms — CJK characters and bigrams)."""
    words: set[str] = set()
    out: set[str] = set()
    chars_out: set[str] = set()
    prev: str | None = None
    cjk = cjk_re()
    for w in _WORD.findall(folded):
        if cjk.search(w):
            chars = [c for c in w if cjk.match(c)]
            chars_out.update(a + b for a, b in zip(chars, chars[1:]))
            if len(chars) == 1:
                chars_out.add(chars[0])
            prev = None
            for rest in cjk.sub(" ", w).split():
                if r := word(rest):
                    words.add(r)
            continue
        s = word(w)
        if not s:
            prev = None
            continue
        words.add(s)
        if prev is not None and prev != s:
            out.add(prev + " " + s)
        prev = s
    out |= words
    return words, out, chars_out


# A thread's vocabulary (_vocabulary) starts afresh once it numbers more terms than this: it
# serves every read of the thread (a repository root's thousand features judge a word once, not
# once per feature) and must not grow for the life of the app (at this limit it holds ~10 MB; the
# generated wide root's 1,000 features number 156,000 terms, 29 MB, and with this limit run as fast).
VOCABULARY_LIMIT = 50_000


_local = threading.local()


def _vocabulary() -> _Vocabulary:
    """This thread's vocabulary (a vocabulary is not shared between threads: it numbers terms as
    it meets them). Terms are only compared within one run, which takes its vocabulary once, so a
    new one never mixes numbers."""
    v: _Vocabulary | None = getattr(_local, "vocabulary", None)
    if v is None or len(v.names) > VOCABULARY_LIMIT or len(v.judged) > VOCABULARY_LIMIT:
        v = _local.vocabulary = _Vocabulary()
    return v


def terms(text: str) -> Terms:
    """The words and terms of a text (stop words break a run of adjacent words)."""
    v = _vocabulary()
    t = v.analyse(text)
    return Terms(frozenset(map(v.text, t.words)), frozenset(map(v.text, t.terms)))


@functools.cache
def _pieces_re() -> re.Pattern[str]:
    """A run of word characters that are not CJK: what :func:`terms` stems into a word (a word
    without CJK whole, the runs between the CJK characters of one with them)."""
    return re.compile(f"[^\\W{CJK_CLASS}]+")


@functools.cache
def _cjk_word_re() -> re.Pattern[str]:
    """A CJK word character: :func:`terms` gives a text holding one a term (a bigram or itself)."""
    return re.compile(f"(?=\\w)[{CJK_CLASS}]")


FIND_MEMO = 16_384  # runs WordSets.find remembers at a time


class WordSets:
    """The words of many texts, the same as ``terms(text).words``, for a rule that needs no pairs
    or bigrams (the log matcher): each distinct run of word characters is judged and stemmed
    once, the rest is set operations. Texts are given case-folded (``ScarItem.normalized``)."""

    def __init__(self) -> None:
        self._stem_of: dict[str, str] = {}  # run -> its word ("" for a stop word, a number, a letter)
        self._not_words: set[str] = set()  # the runs that are no word
        # the words this thread's possible patterns judged (read only: the log matcher at 50,000
        # items judges ~70,000 runs, freed with it, not kept for the life of the process)
        self._known = _vocabulary().judged

    def _judge(self, run: str) -> str:
        w = self._known.get(run)
        if w is None:
            w = _word(run)
        self._stem_of[run] = w
        if not w:
            self._not_words.add(run)
        return w

    def words(self, folded: str) -> set[str]:
        stem_of = self._stem_of
        out: set[str] = set()
        for run in _pieces_re().findall(folded):
            w = stem_of.get(run)
            if w is None:
                w = self._judge(run)
            if w:
                out.add(w)
        return out

    @staticmethod
    def any_terms(folded: str, words: set[str]) -> bool:
        """``bool(terms(text).terms)`` given the text's words: it has a word or a CJK character."""
        return bool(words) or (not folded.isascii() and _cjk_word_re().search(folded) is not None)

    def find(self, texts: Iterable[str], need: set[str]) -> tuple[dict[str, array[int]], list[tuple[str, ...]], int]:
        """For the words ``need``: (the texts having each, in order; the needed words each text
        has; how many texts have any term — :func:`any_terms`). The runs judged are remembered up
        to FIND_MEMO runs at a time (50,000 texts hold ~85,000 distinct runs: 7 MB remembered)."""
        stem_of, not_words = self._stem_of, self._not_words
        need_runs = {r for r, w in stem_of.items() if w in need}
        findall = _pieces_re().findall
        postings: dict[str, array[int]] = {k: array("l") for k in need}
        has: list[tuple[str, ...]] = []
        total = 0
        for n, text in enumerate(texts):
            if len(stem_of) > FIND_MEMO:  # forgotten together: a run not remembered is judged again
                stem_of.clear()
                not_words.clear()
            runs = set(findall(text))
            for run in runs.difference(stem_of):
                if self._judge(run) in need:
                    need_runs.add(run)
            if not runs <= not_words or (not text.isascii() and _cjk_word_re().search(text) is not None):
                total += 1
            hit = runs & need_runs
            if hit:
                found = tuple({stem_of[r] for r in hit})
                for k in found:
                    postings[k].append(n)
                has.append(found)
            else:
                has.append(())
        return postings, has, total


# A run of the characters an identifier is made of: _IDENT matches inside one run only and finds in
# a run alone what it finds there in the whole text (what borders a run is none of them, as the
# text's start and end), so it is searched run by run, and only in a run that can hold one — with a
# separator (. / :) or an underscore, or a lower-case letter followed by an upper-case one — rather
# than tried at every position of every word (half of its time, and the most of a pattern's reason).
_IDENT_RUN = re.compile(r"[\w./:-]+")
_CAMEL = re.compile(r"[a-z][A-Z]")


def identifiers(text: str) -> list[str]:
    """Code identifiers in a text, in order of appearance, without repeats."""
    seen: dict[str, None] = {}
    found: list[str] = []
    find, camel = _IDENT.findall, _CAMEL.search
    for run in _IDENT_RUN.findall(text):
        if "." in run or "/" in run or ":" in run or "_" in run or camel(run):
            found += find(run)
    for m in found:
        ident = m.rstrip(".").casefold()
        if all(len(part) > 1 for part in re.split(r"[./]|::", ident)):  # not "e.g", "i.e"
            seen.setdefault(ident, None)
    return list(seen)


# A task named in a case-folded text: "task-3", "task 2/3", "tasks 4 and 5", "task_6".
_CITE = re.compile(r"\btasks?[\s_-]*(\d+)((?:\s*(?:/|,|&|\band\b)\s*(?:tasks?[\s_-]*)?\d+)*)")
_TASK_FILE = re.compile(r"task[-_]?(\d+)\b", re.IGNORECASE)


def cited_tasks(text: str) -> frozenset[int]:
    """The task numbers a text names ("same as task-3's scar": 3; "Task 2/3": 2 and 3)."""
    folded = text.casefold()
    if "task" not in folded:
        return frozenset()
    out: set[int] = set()
    for m in _CITE.finditer(folded):
        out.add(int(m.group(1)))
        out.update(int(d) for d in re.findall(r"\d+", m.group(2)))
    return frozenset(out)


def task_of(it: ScarItem) -> int | None:
    """The task an item's report is of: its ``task_id``'s number, else its file's ("task-3-scar.yaml")."""
    if it.task_id:
        m = re.fullmatch(r"(?:task)?[\s_-]*(\d+)", it.task_id.strip(), re.IGNORECASE)
        if m:
            return int(m.group(1))
    m = _TASK_FILE.match(it.file.rsplit("/", 1)[-1])
    return int(m.group(1)) if m else None


_NO_KEY = -1  # hash() never gives -1 (CPython): the hash of an item without a key


def _literal_key(it: ScarItem) -> tuple[bool, str] | None:
    """An item's key under the literal rule: its systemic_ref id, else its normalised text (computed
    from the text: ScarItem.odd_normal), None for an item without one."""
    if it.systemic_ref:
        return (True, it.systemic_ref)
    text = it.normalized
    return (False, text) if text else None


def literal_patterns(items: list[ScarItem]) -> list[tuple[str, ...]]:
    """The literal rule: items with one key — the systemic_ref id, else the normalised text (none
    for an item without one) — in two or more reports; their ids per pattern, largest first."""
    # The hash of each item's key first (a text's key is computed from it, then dropped: the keys
    # of 40,000 texts held at once were 13 MB), then the items whose hash another item has too by
    # their keys.
    hashes = array("q")
    for it in items:
        hashes.append(hash(key) if (key := _literal_key(it)) is not None else _NO_KEY)
    ordered = sorted(hashes)
    shared = {h for h, after in zip(ordered, ordered[1:]) if h == after and h != _NO_KEY}
    del ordered
    groups: dict[tuple[bool, str], list[ScarItem]] = defaultdict(list)
    for it, h in zip(items, hashes):
        if h in shared and (key := _literal_key(it)) is not None:
            groups[key].append(it)
    out = []
    for group in groups.values():
        if len({it.file for it in group}) >= 2:
            out.append(tuple(it.id for it in group))
    out.sort(key=lambda ids: (-len(ids), ids))
    return out


class _Analysed(Protocol):
    """The terms of one text, as strings (:class:`Terms`) or as ints (:class:`_IdTerms`)."""

    @property
    def words(self) -> frozenset[Hashable]: ...

    @property
    def terms(self) -> frozenset[Hashable]: ...


class _Index:
    """Document frequencies and IDF weights of the terms of a list of texts. A term's weight
    depends on its document frequency only (computed once per frequency); a sum of weights is
    ``math.fsum`` (exact, so the same in any order)."""

    def __init__(self, analysed: Sequence[_Analysed], latin: Mapping[int, frozenset[Any]] | None = None):
        self.df: Counter[Hashable] = Counter(chain.from_iterable(t.terms for t in analysed))
        n = sum(1 for t in analysed if t.terms)
        by_df = {d: max(0.0, math.log((n + 1) / (d + 0.5))) for d in set(self.df.values())}
        self._idf = {k: by_df[d] for k, d in self.df.items()}
        self.mass = [self.weight(t.terms) for t in analysed]
        # each text's weight in a pair across scripts: a CJK text's terms written outside CJK
        # (``latin``: those terms, by text), every term of another text
        self.across_mass = self.mass
        if latin:
            self.across_mass = list(self.mass)
            for n, x in latin.items():
                self.across_mass[n] = self.weight(x)

    def idf(self, term: Hashable) -> float:
        return self._idf[term]

    def weight(self, keys: Iterable[Hashable]) -> float:
        """The summed IDF of terms found in the texts."""
        return math.fsum(map(self._idf.__getitem__, keys))

    def score(self, a: int, b: int, ta: _Analysed, tb: _Analysed) -> float:
        """IDF-weighted containment: the weight of the shared terms over the lighter text's."""
        ma, mb = self.mass[a], self.mass[b]
        low = ma if ma < mb else mb
        if low <= 0:
            return 0.0
        return math.fsum(map(self._idf.__getitem__, ta.terms & tb.terms)) / low

    def score_across(self, a: int, b: int, ta: _Analysed, tb: _Analysed) -> float:
        """:meth:`score` of a pair across scripts (one text with CJK terms, the other without):
        the CJK text weighs its terms written outside CJK only."""
        ma, mb = self.across_mass[a], self.across_mass[b]
        low = ma if ma < mb else mb
        if low <= 0:
            return 0.0
        return math.fsum(map(self._idf.__getitem__, ta.terms & tb.terms)) / low


def similarity(texts: Sequence[str]) -> list[list[float]]:
    """Every pairwise similarity of a few texts, weighted by their own term frequencies
    (0 where the pair shares fewer than MIN_SHARED words). For tools and tests; the feature
    rule is :func:`possible_patterns`."""
    analysed = [terms(t) for t in texts]
    latin = {n: x for n, t in enumerate(analysed) if (x := _latin(t.terms, str)) is not None}
    index = _Index(analysed, latin)
    out = [[0.0] * len(texts) for _ in texts]
    for a, ta in enumerate(analysed):
        for b, tb in enumerate(analysed):
            across = (a in latin) != (b in latin)
            if a != b and len(ta.words & tb.words) >= (CROSS_MIN_SHARED if across else MIN_SHARED):
                out[a][b] = (index.score_across if across else index.score)(a, b, ta, tb)
    return out


def _latin(keys: frozenset[_K], text: Callable[[_K], str]) -> frozenset[_K] | None:
    """The terms of a text written outside CJK, or None when it has no CJK term (``text``: a term's
    text; a CJK term is a CJK character or bigram, and no other term holds one)."""
    cjk = cjk_re().search
    latin = frozenset(k for k in keys if not cjk(text(k)))
    return None if len(latin) == len(keys) else latin


def candidates(
    analysed: Sequence[_Analysed], df: Mapping[Any, int], text: Callable[[Any], str] = str
) -> Iterator[tuple[int, int]]:
    """The pairs (n, m), n < m, worth scoring, each once: m has at least PROBE_HITS of n's
    probes (or n of m's), an item's probes being its PROBES rarest terms among those found
    in 2 to BLOCK_DF items (``df``: in how many items each term is), the rarest first and, among
    equally rare ones, in the order of the terms' text (``text``: a term's text)."""
    block = {k for k, d in df.items() if 2 <= d <= BLOCK_DF}  # the terms usable as keys
    order = {k: n for n, k in enumerate(sorted(block, key=text))}.__getitem__
    postings: dict[Any, list[int]] = defaultdict(list)
    keys: list[list[Any]] = []
    for n, t in enumerate(analysed):
        if len(t.words) < MIN_TOKENS:
            keys.append([])
            continue
        usable = sorted(t.terms & block, key=order)
        for k in usable:
            postings[k].append(n)
        usable.sort(key=df.__getitem__)  # stable: by df, then by the text
        keys.append(usable[:PROBES])

    def hit(a: int, b: int) -> bool:
        """b holds enough of a's probes."""
        ks = keys[a]
        return bool(ks) and len(analysed[b].terms.intersection(ks)) >= min(PROBE_HITS, len(ks))

    for n, ks in enumerate(keys):
        if not ks:
            continue
        hits = Counter(chain.from_iterable(map(postings.__getitem__, ks)))
        need = min(PROBE_HITS, len(ks))
        for m, c in hits.items():
            if c < need or m == n:
                continue
            if m < n and hit(m, n):
                continue  # yielded already, from m's side
            yield (n, m) if n < m else (m, n)


def possible_patterns(items: list[ScarItem], literal: list[tuple[str, ...]]) -> list[dict[str, Any]]:
    """Near-duplicate clusters across reports (never the literal rule).

    Each item's text is reduced to terms: stemmed words (stop words, numbers and one-letter
    words dropped; CJK as character bigrams) and pairs of adjacent words. A term found in
    ``df`` of the ``n`` items weighs ``idf = ln((n + 1) / (df + 0.5))``, so rare words,
    identifiers and phrases count most. Two items of different reports are similar when the
    weight of their shared terms is at least ``SIMILARITY_THRESHOLD`` of the lighter item's
    total (containment: a short item restated inside a long one still matches) and they share
    at least ``MIN_SHARED`` words. Only :func:`candidates` are scored. Pairs in the same report
    or the same literal pattern are skipped. Similar pairs join into clusters, most similar
    first, by average linkage (``LINK_THRESHOLD``); a cluster is reported when it spans two or
    more reports and is not wholly one literal pattern, with its best pair's similarity and
    what that pair shares. Two shapes the wording misses: an item citing a task is paired with
    that task's item most like it (``CITED_THRESHOLD``), and a pair across scripts is scored on
    the CJK item's terms written outside CJK (``CROSS_MIN_SHARED``).

    A text repeated is analysed once; its terms are ints of this thread's :class:`_Vocabulary`.
    """
    in_literal: dict[str, int] = {}
    for n, ids in enumerate(literal):
        for i in ids:
            in_literal[i] = n
    vocabulary = _vocabulary()
    by_text: dict[str, _IdTerms] = {}
    analysed: list[_IdTerms] = []
    latin: dict[int, frozenset[int]] = {}  # a CJK item -> its terms written outside CJK
    cites: dict[int, frozenset[int]] = {}  # an item naming tasks -> their numbers
    for n, it in enumerate(items):
        key = it.normalized  # computed from the text (ScarItem.odd_normal): once per item
        t = by_text.get(key)
        if t is None:
            t = by_text[key] = vocabulary.analyse(it.text)
        analysed.append(t)
        if t.latin is not None:
            latin[n] = t.latin
        if "task" in key and (c := cited_tasks(key)):
            cites[n] = c
    index = _Index(analysed, latin)
    files = [it.file for it in items]
    lits = [in_literal.get(it.id) for it in items]

    def comparable(a: int, b: int) -> bool:
        return files[a] != files[b] and (lits[a] is None or lits[a] != lits[b])

    memo: dict[int, float] = {}
    size = len(items)
    few = [len(t.words) < MIN_TOKENS for t in analysed]

    cjk = bytearray(size)  # 1: the item has CJK terms (a pair across scripts: one 1, one 0)
    for n in latin:
        cjk[n] = 1

    def shares(a: int, b: int, need: int) -> bool:
        """The pair shares ``need`` words (CROSS_MIN_SHARED - MIN_SHARED more across scripts)."""
        extra = CROSS_MIN_SHARED - MIN_SHARED if cjk[a] != cjk[b] else 0
        return len(analysed[a].words & analysed[b].words) >= need + extra

    def raw(a: int, b: int) -> float:
        """The pair's score (across scripts, the CJK item's terms outside CJK)."""
        return (index.score_across if cjk[a] != cjk[b] else index.score)(a, b, analysed[a], analysed[b])

    def sim(a: int, b: int) -> float:
        key = a * size + b if a < b else b * size + a
        got = memo.get(key)
        if got is None:
            if few[a] or few[b]:
                got = memo[key] = 0.0
            else:  # shares(a, b, MIN_SHARED) and raw(a, b), inline: the most scored pairs
                ta, tb = analysed[a], analysed[b]
                if cjk[a] == cjk[b]:
                    got = index.score(a, b, ta, tb) if len(ta.words & tb.words) >= MIN_SHARED else 0.0
                else:
                    across = len(ta.words & tb.words) >= CROSS_MIN_SHARED
                    got = index.score_across(a, b, ta, tb) if across else 0.0
                memo[key] = got
        return got

    # Citations: each cited task's item most like the citing one (memo: counted similar).
    cited: dict[int, int] = {}  # the key of a cited pair -> the task cited
    if cites:
        tasks = _tasks(items)
        by_task: dict[int, list[int]] = defaultdict(list)
        for n, task in enumerate(tasks):
            if task is not None:
                by_task[task].append(n)
        for n in sorted(cites):
            if few[n]:
                continue
            for task in sorted(cites[n]):
                pool = by_task.get(task, [])
                if len(pool) > CITE_LIMIT:
                    continue
                closest: tuple[float, int] | None = None
                for m in pool:
                    if few[m] or m == n or not comparable(n, m) or not shares(n, m, CITED_MIN_SHARED):
                        continue
                    s = raw(n, m)
                    if s >= CITED_THRESHOLD and (closest is None or s > closest[0]):
                        closest = (s, m)
                if closest is not None:
                    m = closest[1]
                    pair = n * size + m if n < m else m * size + n
                    memo[pair] = max(memo.get(pair, 0.0), closest[0], SIMILARITY_THRESHOLD)
                    cited.setdefault(pair, task)

    def linked(ca: list[int], cb: list[int]) -> bool:
        """The mean similarity of the comparable pairs across two clusters is at least
        LINK_THRESHOLD. Similarities are never negative, so once the pairs scored so far reach it
        (by a margin far above any rounding of the sum) the rest need not be scored."""
        pairs = [(x, y) for x in ca for y in cb if comparable(x, y)]
        enough = LINK_THRESHOLD * len(pairs) * (1 + 1e-9)
        cross: list[float] = []
        partial = 0.0
        for x, y in pairs:
            v = sim(x, y)
            cross.append(v)
            partial += v
            if partial >= enough:
                return True
        return sum(cross) / len(cross) >= LINK_THRESHOLD

    edges = [(memo[key], *divmod(key, size)) for key in cited]
    for n, m in candidates(analysed, index.df, vocabulary.text):
        if comparable(n, m) and n * size + m not in cited:
            s = sim(n, m)
            if s >= SIMILARITY_THRESHOLD:
                edges.append((s, n, m))
    # Average linkage, most similar pair first.
    edges.sort(key=lambda e: (-e[0], e[1], e[2]))
    cluster_of: dict[int, list[int]] = {}
    best: dict[int, tuple[float, int]] = {}  # item -> (its best similarity in its cluster, the other item)
    for s, a, b in edges:
        ca, cb = cluster_of.get(a, [a]), cluster_of.get(b, [b])
        if ca is cb:
            continue
        if len(ca) * len(cb) > MAX_LINK_CHECKS:
            continue
        if not linked(ca, cb):
            continue
        merged = ca + cb
        for x in merged:
            cluster_of[x] = merged
        for x, y in ((a, b), (b, a)):
            if s > best.get(x, (-1.0, 0))[0]:
                best[x] = (s, y)
    clusters = {id(c): sorted(c) for c in cluster_of.values()}
    out: list[dict[str, Any]] = []
    stem_of = _Memo(stem).__getitem__
    for members in clusters.values():
        if len({files[m] for m in members}) < 2:
            continue
        if len({lits[m] if lits[m] is not None else -1 - m for m in members}) < 2:
            continue
        top = max(members, key=lambda m: (best[m][0], -m))
        top_sim, other = best[top]
        shared = sorted((-index.idf(k), vocabulary.text(k)) for k in analysed[top].terms & analysed[other].terms)
        reason = _reason(items[top].text, items[other].text, [k for _, k in shared], stem_of)
        task = cited.get(top * size + other if top < other else other * size + top)
        out.append(
            {
                "ids": [items[m].id for m in members],
                "similarity": round(top_sim, 2),
                "reason": reason if task is None else f"one cites task-{task}; {reason}",
            }
        )
    out.sort(key=lambda p: (-len(p["ids"]), p["ids"]))
    return out


def _tasks(items: Sequence[ScarItem]) -> list[int | None]:
    """:func:`task_of` of each item (once per report)."""
    of: dict[tuple[str | None, str], int | None] = {}
    out: list[int | None] = []
    for it in items:
        k = (it.task_id, it.file)
        if k not in of:
            of[k] = task_of(it)
        out.append(of[k])
    return out


def _reason(text_a: str, text_b: str, shared: list[str], stem_of: Callable[[str], str] = stem) -> str:
    """Why two texts look alike: the identifiers and the rarest terms they share, as written
    (``shared``: the texts of their shared terms, the rarest first and, among equally rare ones,
    in text order; ``stem_of``: :func:`stem` or a memo of it)."""
    ids_a = identifiers(text_a)
    ids_b = set(identifiers(text_b)) if ids_a else set()
    shared_ids = [i for i in ids_a if i in ids_b][:4]
    id_parts = {stem_of(w) for i in shared_ids for w in _WORD.findall(i)}
    written = _WORD.findall(text_a.casefold())
    # each stem as first written: the earliest of its words wins (assigned last)
    surface = dict(zip(reversed(list(map(stem_of, written))), reversed(written)))

    def shown(term: str) -> str:
        return " ".join(surface.get(w, w) for w in term.split(" "))

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
