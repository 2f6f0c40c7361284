"""THE matcher of iteration-log texts to scar items: which item a triaged description means.

A log's ``triage_result`` names items by text. scars writes each item's text as it is; the loop's
own logs hold hand-written summaries (``"task-2 known_shortcuts[1]: partial-write K3b — flow.md …"``,
``"Safety valve max rounds hardcoded to 3"``, a folded block scalar, an accept mapping). One
matcher, used by everything that reads a log against the reports — the decisions carried over
from earlier rounds, ``scars status``, the app, ``scars log verify``, the watch-fors and the
reconciliation of recorded and recounted figures — finds, for one description (a string or a
mapping), the item it describes, in three stages:

1. **exact** — the whitespace-normalised, case-folded text equals an item's;
2. **normalised** — after removing what a person adds around an item's text: a leading
   reference (``task-2 known_shortcuts[1] (verified: false):``, which also narrows the search to
   that task and section), quotes, a trailing ``…``, and commentary after `` — `` / `` → `` /
   ``(task-1 defer)``; the cleaned text equals an item's, or one is a copy of the other cut short
   (:func:`near_copy`);
3. **similar** — IDF-weighted containment: the weight of the description's terms (stemmed words,
   adjacent-word pairs and CJK bigrams, as the possible-pattern rule forms them) that the item
   also has, over the weight of all the description's terms (a summary is contained in the
   item it summarises), IDF over the feature's items.

Every result has a confidence and a reason. ``exact``, ``normalised`` and ``similar`` are
*confident* and are taken; a similar best candidate with a runner-up within
:data:`AMBIGUOUS_MARGIN` is ``ambiguous``, a best score below :data:`SIMILAR` but at least
:data:`WEAK` is ``weak``; both are shown with their candidates and never taken; below that
it is ``none``. A description is matched against the remaining items, the resolved ones and the
reports' legacy ``resolved_items`` entries (a fix whose item left its section lives there).

The thresholds were set on the upstream logs and the real-shaped fixtures under
``tests/fixtures/real_shaped`` (``tests/core/samsara/test_matching.py`` names every pair).
"""

from __future__ import annotations

import heapq
import math
import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from scars.core.model import SECTION_OF, Feature, IterationLog, LogMatch, ScarItem, normal_of, odd_normal
from scars.core.records import record, replace
from scars.core.samsara.patterns import WordSets, terms
from scars.core.text import normalize
from scars.core.values import as_text

SIMILAR = 0.5  # a best candidate scoring this much is taken (when no runner-up is close)
WEAK = 0.3  # below SIMILAR and at least this: shown as a weak match, never taken
AMBIGUOUS_MARGIN = 0.12  # a runner-up within this of the best makes the match ambiguous
MIN_SHARED_WORDS = 2  # a similar match shares at least this many words
MIN_COPY_CHARS = 20  # a near copy keeps at least this many characters …
MIN_COPY_WORDS = 4  # … and words of the text it copies

ACTIONS = ("fix", "accept", "defer")
RESOLVED_ENTRY = "resolved_items"  # target ids of resolved_items entries start with this

# "task-2 known_shortcuts[1] (verified: false): …" — a reference to a report's item.
_REFERENCE = re.compile(
    r"^\s*(?P<task>[\w.\-]+)\s+(?P<section>known_shortcuts|silent_failure_conditions|assumptions_made)"
    r"\s*\[(?P<index>\d+)\]\s*(?:\([^)]*\))?\s*[:：]\s*",
    re.I,
)
_TASK_MENTION = re.compile(r"[(（]\s*(?P<task>task-\d+)[^)）]*[)）]", re.I)
_COMMENTARY = re.compile(r"\s+(?:—|–|--|→|->)\s+|\s*→\s*")
_ELLIPSIS = re.compile(r"(?:\s*(?:…|\.\.\.))+\s*$")
_QUOTES = "\"'“”‘’「」『』`"


@record(slots=True)
class Target:
    """Something a description may name: an item (remaining or resolved), or a report's legacy
    ``resolved_items`` entry (``id`` ``resolved_items:<report>#<n>``)."""

    id: str
    text: str
    # Its whitespace-normalised, case-folded text (``normalize``), or None when that is
    # ``text.casefold()``: :func:`targets_of` holds it only then (ScarItem.odd_normal), never a
    # second copy of every text.
    normal: str | None
    task_id: str | None
    section: str
    file: str
    index: int | None  # the item's position in its section (None for resolved_items entries)

    @property
    def normalized(self) -> str:
        return normal_of(self.text, self.normal)


def description_of(entry: Any) -> str:
    """The text a triage entry names: the string, or a mapping's ``description`` (``what``,
    ``item``, ``assumption`` when that is what it holds)."""
    if isinstance(entry, Mapping):
        for key in ("description", "what", "item", "assumption", "text"):
            if entry.get(key) is not None:
                return as_text(entry.get(key))
        return ""
    return as_text(entry)


@record(slots=True)
class _Cleaned:
    heads: tuple[str, ...]  # normalised candidate texts, longest first
    body: str  # the description without its reference (for similarity)
    task: str | None
    section: str | None
    index: int | None
    reference: str | None  # the reference removed, as written


def clean(description: str) -> _Cleaned:
    """The description without what a person adds around an item's text (stage 2)."""
    text = " ".join(description.split())
    task = section = index = reference = None
    m = _REFERENCE.match(text)
    if m:
        reference = m.group(0).strip()
        task, section, index = m.group("task"), m.group("section").lower(), int(m.group("index"))
        text = text[m.end() :]
    else:
        t = _TASK_MENTION.search(text)
        if t:
            task = t.group("task")
    heads: list[str] = []

    def add(h: str) -> None:
        h = _ELLIPSIS.sub("", h).strip().strip(_QUOTES + " :;,.").strip()
        n = normalize(h)
        if n and n not in heads:
            heads.append(n)

    add(text)
    head = _COMMENTARY.split(text, maxsplit=1)[0]
    add(head)
    add(_TASK_MENTION.sub("", head))
    q = re.match(r"^\s*[" + _QUOTES + r"](?P<q>[^" + _QUOTES + r"]{8,})[" + _QUOTES + r"]", text)
    if q:
        add(q.group("q"))
    return _Cleaned(tuple(heads), text, task, section, index, reference)


def near_copy(a: str, b: str) -> bool:
    """``a`` and ``b`` (normalised texts) are one text, one of them cut short or run on: the
    shorter, without a trailing ellipsis, keeps at least MIN_COPY_CHARS characters and
    MIN_COPY_WORDS words and starts, or is found inside, the longer."""
    return _near(_copy_form(a), _copy_form(b))


def _copy_form(text: str) -> str:
    """A text as :func:`near_copy` compares it: no trailing ellipsis, no end punctuation."""
    if "…" in text or "..." in text:  # the only texts _ELLIPSIS can change (it costs µs per text)
        text = _ELLIPSIS.sub("", text)
    return text.strip().rstrip(".:;,")


def _near(a: str, b: str) -> bool:
    """:func:`near_copy` of two texts already in their :func:`_copy_form`."""
    if not a or not b or a == b:
        return bool(a) and a == b
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    return _copyable(short) and short in long_


def _copyable(form: str) -> bool:
    """A text long enough to be the shorter of a near copy (MIN_COPY_CHARS, MIN_COPY_WORDS)."""
    return len(form) >= MIN_COPY_CHARS and len(form.split()) >= MIN_COPY_WORDS


def targets_of(feature: Feature) -> list[Target]:
    """Every item of the feature (remaining and resolved) and every ``resolved_items`` entry."""
    out: list[Target] = []
    position: dict[tuple[str, str], int] = defaultdict(int)
    by_file: dict[str, list[ScarItem]] = defaultdict(list)
    for it in (*feature.items, *feature.resolved):
        by_file[it.file].append(it)
    for file in sorted(by_file):
        for it in sorted(by_file[file], key=lambda i: i.line or 0):
            section = SECTION_OF[it.category]
            key = (file, section)
            odd = it.odd_normal
            if odd == "":  # an item without a literal key: its text is compared as any other
                odd = odd_normal(it.text, normalize(it.text))
            out.append(Target(it.id, it.text, odd, it.task_id, section, file, position[key]))
            position[key] += 1
    for r in feature.reports:
        for n, (section, desc, _res) in enumerate(r.resolved_entries):
            if r.entry_items and r.entry_items[n] is not None:
                continue  # it resolved that item (samsara.resolutions): a description names the item
            out.append(
                Target(
                    f"{RESOLVED_ENTRY}:{r.file}#{n}",
                    desc,
                    odd_normal(desc, normalize(desc)),
                    r.task_id,
                    section,
                    r.file,
                    None,
                )
            )
    return out


class _Ranked(NamedTuple):
    """A target sharing words with a description: its score, itself, the words it shares."""

    score: float
    target: Target
    shared: frozenset[str]


_SEP = "\n"  # between the copy forms of a haystack (no normalised text holds one)
_CHUNK = 4096  # targets per haystack while the near copies are searched


class Matcher:
    """Matches descriptions to one feature's targets. Build once per feature. It holds what is
    left to match, not an index of the feature: the texts a description may equal or copy (its
    normalised text and its heads) are looked for in one pass over the targets for every
    description :meth:`expect` announced (each target's text normalised in turn, the near copies
    found in haystacks of a few thousand targets at a time), and only the targets found are kept;
    the words of the targets are read (:class:`WordSets`) only when a description reaches the
    similarity stage, and only the postings of the words descriptions have are kept."""

    def __init__(self, targets: Sequence[Target]):
        self.targets = list(targets)
        self._exact: dict[str, list[int]] = {}  # normalised text looked for -> the targets having it
        self._near: dict[str, set[int]] = {}  # head looked for -> the targets it equals or copies
        self._wanted_exact: set[str] = set()  # announced by expect(), not yet looked for
        self._wanted_heads: set[str] = set()
        self._words = WordSets()
        self._postings: dict[str, Sequence[int]] = {}  # word -> the targets having it (words asked for so far)
        self._total: int | None = None  # targets with any term (the IDF's document count)
        self._has: list[tuple[str, ...]] = []  # each target's words among those in _postings
        self._position: dict[int, int] | None = None  # id(target) -> its position
        self._expected: set[str] = set()  # words of descriptions still to come (expect())
        self._cleaned: dict[str, _Cleaned] = {}  # description -> clean(description)
        self._words_of: dict[str, frozenset[str]] = {}  # text -> terms(text).words

    @classmethod
    def of(cls, feature: Feature) -> Matcher:
        return cls(targets_of(feature))

    def expect(self, entries: Iterable[Any]) -> None:
        """Words of descriptions that will be matched: if one of them needs the similarity stage,
        the targets are read once for all their words instead of once per description."""
        for entry in entries:
            description = description_of(entry)
            if not description.strip():
                continue
            self._wanted_exact.add(normalize(description))
            c = self._clean(description)
            self._wanted_heads.update(c.heads)
            self._expected |= self._words_in(c.body or description)
            head = _COMMENTARY.split(c.body, maxsplit=1)[0] if c.body else ""
            if head:
                self._expected |= self._words_in(head)

    def _clean(self, description: str) -> _Cleaned:
        """:func:`clean`, once per description (expect() and match() both ask)."""
        c = self._cleaned.get(description)
        if c is None:
            c = self._cleaned[description] = clean(description)
        return c

    def _words_in(self, text: str) -> frozenset[str]:
        """``terms(text).words``, once per text (expect(), the ranking and its head all ask)."""
        w = self._words_of.get(text)
        if w is None:
            w = self._words_of[text] = terms(text).words
        return w

    # ----------------------------------------------------------------- the three stages

    def match(self, entry: Any, *, taken: Iterable[str] = (), similar: bool = True) -> LogMatch:
        """The target ``entry`` (a description or an accept mapping) names. ``taken``: ids already
        given to another description of the same list, avoided when an equal choice exists.
        ``similar``: False stops after the normalised stage (the same text, or a copy of it)."""
        description = description_of(entry)
        taken_set = set(taken)
        if not description.strip():
            return _result(description, None, "none", 0.0, "the entry has no description")
        exact = [self.targets[n] for n in self._exact_at(normalize(description))]
        if exact:
            pick = _prefer_free(exact, taken_set)
            reason = "same text" + (f" (one of {len(exact)} items with this text)" if len(exact) > 1 else "")
            return _result(description, pick.id, "exact", 1.0, reason)
        c = self._clean(description)
        pool = self._pool(c)
        found = self._normalised(c, pool)
        if found:
            pick = _prefer_free(found, taken_set)
            if len({t.normalized for t in found}) == 1 or c.index is not None and _at_index(found, c) is not None:
                chosen = _at_index(found, c) or pick
                return _result(description, chosen.id, "normalized", 1.0, self._why_normalised(c, chosen))
            return _result(
                description,
                None,
                "ambiguous",
                1.0,
                f"its text without {self._added(c)} starts or is found in {len(found)} different items",
                tuple((t.id, 1.0) for t in found[:5]),
            )
        if not similar:
            return _result(description, None, "none", 0.0, "not the same text nor a copy of it")
        return self._similar(description, c, pool, taken_set)

    def _pool(self, c: _Cleaned) -> list[Target]:
        """The targets a reference narrows the search to (its task and section), else all."""
        pool = self.targets
        if c.task:
            by_task = [t for t in pool if (t.task_id or "").casefold() == c.task.casefold()]
            if by_task:
                pool = by_task
        if c.section:
            by_section = [t for t in pool if t.section == c.section]
            if by_section:
                pool = by_section
        return pool

    def _normalised(self, c: _Cleaned, pool: Sequence[Target]) -> list[Target]:
        """The pool's targets (in order) that the first head having any equals or is a near copy of."""
        allowed = None if pool is self.targets else {id(t) for t in pool}
        for head in c.heads:
            found = sorted(self._near_copies(head))
            out = [self.targets[n] for n in found]
            if allowed is not None:
                out = [t for t in out if id(t) in allowed]
            if out:
                return out
        return []

    def _exact_at(self, key: str) -> list[int]:
        """The targets (positions, in order) whose normalised text is ``key``."""
        if key not in self._exact:
            self._look_for({key}, set())
        return self._exact[key]

    def _near_copies(self, head: str) -> set[int]:
        """Every target whose text equals ``head`` or is a near copy of it (:func:`near_copy`)."""
        if head not in self._near:
            self._look_for(set(), {head})
        return self._near[head]

    def _look_for(self, keys: set[str], heads: set[str]) -> None:
        """One pass over the targets for ``keys`` (equal normalised texts) and ``heads`` (equal or
        near copies), with those :meth:`expect` announced: their targets kept in ``_exact`` and
        ``_near``. A target's copy form (:func:`_copy_form`) is the head's when equal; holds the
        head (a copyable head the shorter: found in a haystack of the forms of a chunk of targets,
        one ``str.find`` per head and chunk); or is held by the head at a place where the head has
        the form's first MIN_COPY_CHARS characters (the target the shorter, copyable)."""
        keys = (keys | self._wanted_exact) - self._exact.keys()
        heads = (heads | self._wanted_heads) - self._near.keys()
        self._wanted_exact.clear()
        self._wanted_heads.clear()
        exact: dict[str, list[int]] = {k: [] for k in keys | heads}
        near: dict[str, set[int]] = {h: set() for h in heads}
        by_form: dict[str, list[str]] = defaultdict(list)  # a head's copy form -> the heads
        holding: list[tuple[str, str]] = []  # (copy form, head): the copyable heads, held by a target
        windows: dict[str, list[tuple[str, str, int]]] = defaultdict(list)  # the heads' MIN_COPY_CHARS windows
        for h in heads:
            form = _copy_form(h)
            if not form:
                continue
            by_form[form].append(h)
            if _copyable(form):
                holding.append((form, h))
            for i in range(len(form) - MIN_COPY_CHARS + 1):
                windows[form[i : i + MIN_COPY_CHARS]].append((form, h, i))
        chunk: list[str] = []  # the copy forms of the targets from ``first`` on
        starts: list[int] = []
        first = 0

        def search() -> None:  # the copyable heads in the chunk's haystack
            hay = _SEP.join(chunk)
            for form, h in holding:
                at = hay.find(form)
                while at >= 0:
                    k = bisect_right(starts, at) - 1
                    near[h].add(first + k)
                    at = hay.find(form, starts[k + 1]) if k + 1 < len(starts) else -1

        at = 0
        for n, t in enumerate(self.targets):
            k = t.normalized
            if not k:
                f = ""
            else:
                if k in exact:
                    exact[k].append(n)
                f = _copy_form(k)
            if f:
                for h in by_form.get(f, ()):
                    near[h].add(n)
                if len(f) >= MIN_COPY_CHARS:
                    for form, h, i in windows.get(f[:MIN_COPY_CHARS], ()):
                        if len(f) < len(form) and form.startswith(f, i) and _copyable(f):
                            near[h].add(n)
            if holding:
                chunk.append(f)
                starts.append(at)
                at += len(f) + len(_SEP)
                if len(chunk) == _CHUNK:
                    search()
                    first, chunk, starts, at = n + 1, [], [], 0
        if holding and chunk:
            search()
        for h in heads:
            near[h].update(exact[h])
        self._exact.update(exact)
        self._near.update(near)

    @staticmethod
    def _added(c: _Cleaned) -> str:
        parts = []
        if c.reference:
            parts.append(f"the reference {c.reference!r}")
        parts.append("quotes, a trailing ellipsis and the commentary after a dash or arrow")
        return " and ".join(parts)

    def _why_normalised(self, c: _Cleaned, t: Target) -> str:
        where = "equals" if t.normalized in c.heads else "is a shortened or extended copy of"
        return f"its text without {self._added(c)} {where} the item's text"

    def _index(self, words: Iterable[str]) -> tuple[dict[str, Sequence[int]], int]:
        """(postings of ``words`` — with those expected — and the count of targets having any
        term): the targets' words are read only when a word asked for has no postings yet."""
        need = {k for k in (*words, *self._expected) if k not in self._postings}
        self._expected.clear()
        if need or self._total is None:
            postings, has, total = self._words.find((t.normalized for t in self.targets), need)
            self._postings.update(postings)
            self._has = has if not self._has else [a + b for a, b in zip(self._has, has, strict=True)]
            self._total = total
        return self._postings, self._total

    def _rank(
        self, text: str, pool: Sequence[Target], taken: set[str], *, whole: bool = False
    ) -> tuple[frozenset[str], list[_Ranked]]:
        """(the text's words, the pool's targets sharing MIN_SHARED_WORDS of them, best first).
        A target's score: the IDF weight (over all targets) of the words it shares over the weight
        of all the text's words; a word no target has weighs the most.

        Unless ``whole`` (or the pool is narrowed), only the head of the ranking the similarity
        stage reads is certain: the best three and the first with another text than the best.
        Targets are scored in the order of their rarest shared word, and the search stops when
        the words not yet looked at weigh less than every target of that head: no target
        outside can rank before it (the whole ranking, when it does not stop, is exact too)."""
        words = self._words_in(text)
        postings, total = self._index(words)
        idf = {k: math.log((total + 1) / (len(postings[k]) + 0.5)) + 0.1 for k in words if postings.get(k)}
        default = math.log(len(self.targets) + 2) + 0.1
        mass = math.fsum([idf.get(k, default) for k in words])  # exact: no order of the set shows
        if mass <= 0 or not idf:
            return words, []
        targets, has, asked = self.targets, self._has, frozenset(idf)
        entries: list[tuple[float, bool, int, float]] = []  # (-score, taken, position, weight shared)
        heaviest = [0.0]  # the most weight an entry shares

        def score(n: int) -> None:
            shared = asked.intersection(has[n])
            if len(shared) >= MIN_SHARED_WORDS:
                weight = 0.0
                for k in sorted(shared):  # one order of addition: ties never move with the hash seed
                    weight += idf[k]
                entries.append((-(weight / mass), targets[n].id in taken, n, weight))
                heaviest[0] = max(heaviest[0], weight)

        if pool is not targets:  # a reference narrowed it: every target of the pool, scored
            for n in self._positions(pool):
                score(n)
            head = sorted(entries)
        else:
            order = sorted(idf, key=lambda k: (len(postings[k]), k))  # rarest first
            rest = [0.0] * (len(order) + 1)  # the weight of the words from j on
            for j in range(len(order) - 1, -1, -1):
                rest[j] = rest[j + 1] + idf[order[j]]
            seen: set[int] = set()
            head = []
            for j, k in enumerate(order):
                for n in postings[k]:
                    if n not in seen:
                        seen.add(n)
                        score(n)
                if j + 1 == len(order):
                    head = sorted(entries)
                    break
                bound = rest[j + 1] * (1 + 1e-9) + 1e-12  # no target not yet seen weighs more
                if whole or heaviest[0] <= bound:
                    continue
                head = self._certain_head(entries, bound)
                if head:
                    break
        return words, [_Ranked(-e[0], targets[e[2]], asked.intersection(has[e[2]])) for e in head]

    def _certain_head(self, entries: list[tuple[float, bool, int, float]], bound: float) -> list:
        """The best entries up to the third and the first with another text than the best, when
        each weighs more than ``bound`` (then no target outside ``entries`` ranks among them)."""
        k = 3
        while True:
            top = heapq.nsmallest(k, entries)
            first = self.targets[top[0][2]].normalized
            runner = next((i for i in range(1, len(top)) if self.targets[top[i][2]].normalized != first), None)
            if runner is None and len(top) == k < len(entries):
                k *= 4
                continue
            if runner is None or len(top) < 3:
                return []
            last = max(2, runner)
            return top[: last + 1] if top[last][3] > bound else []

    def _positions(self, pool: Sequence[Target]) -> list[int]:
        if self._position is None:
            self._position = {id(t): n for n, t in enumerate(self.targets)}
        return [self._position[id(t)] for t in pool]

    def _similar(self, description: str, c: _Cleaned, pool: Sequence[Target], taken: set[str]) -> LogMatch:
        whole = c.index is not None  # the reference's item is looked for in the whole ranking
        words, ranked = self._rank(c.body or description, pool, taken, whole=whole)
        part = ""
        # The text before a person's commentary (" — path filters once …") alone, when it says more.
        head = _COMMENTARY.split(c.body, maxsplit=1)[0] if c.body else ""
        if head and head != c.body and len(self._words_in(head)) >= 3:
            h_words, h_ranked = self._rank(head, pool, taken, whole=whole)
            if h_ranked and (not ranked or h_ranked[0][0] > ranked[0][0]):
                words, ranked, part = h_words, h_ranked, "its text before the commentary: "
        if not words:
            return _result(description, None, "none", 0.0, "no words to compare")
        if not ranked:
            return _result(description, None, "none", 0.0, "no item shares two words with it")

        shared_of = {id(r.target): r.shared for r in ranked}

        def shares(t: Target) -> str:
            common = sorted(shared_of[id(t)])
            return ", ".join(common[:6]) + (" …" if len(common) > 6 else "")

        best_score, best, _shared = ranked[0]
        runner = next(((r.score, r.target) for r in ranked[1:] if r.target.normalized != best.normalized), None)
        cands = tuple((r.target.id, r.score) for r in ranked[:3])
        pinned = _at_index([r.target for r in ranked], c)
        if pinned is not None:
            # "task-2 known_shortcuts[0]: …" names the item by its place; its words must agree.
            sc = next(r.score for r in ranked if r.target is pinned)
            if sc >= WEAK and best_score - sc < AMBIGUOUS_MARGIN:
                return _result(
                    description,
                    pinned.id,
                    "similar",
                    sc,
                    f"its reference {c.reference} names the item and {part}{sc:.2f} of its weight agrees "
                    f"(shares {shares(pinned)})",
                    cands,
                )
        if best_score < WEAK:
            return _result(
                description, None, "none", best_score, f"best item shares only {best_score:.2f} of its weight", cands
            )
        if best_score < SIMILAR:
            return _result(
                description,
                None,
                "weak",
                best_score,
                f"{part}best item {best.id} holds {best_score:.2f} of its weight (shares {shares(best)}); "
                f"not taken below {SIMILAR}",
                cands,
            )
        if runner is not None and best_score - runner[0] < AMBIGUOUS_MARGIN:
            free = [(sc, t) for sc, t in ((best_score, best), runner) if t.id not in taken]
            if len(free) == 1 and free[0][0] >= SIMILAR:
                # Two items fit equally and another description of the round already names one.
                sc, t = free[0]
                other = runner[1] if t is best else best
                return _result(
                    description,
                    t.id,
                    "similar",
                    sc,
                    f"{part}{sc:.2f} of its weight is in the item (shares {shares(t)}); "
                    f"{other.id} fits as well but another description of the round names it",
                    cands,
                )
            return _result(
                description,
                None,
                "ambiguous",
                best_score,
                f"{part}{best.id} ({best_score:.2f}) and {runner[1].id} ({runner[0]:.2f}) fit almost equally",
                cands,
            )
        return _result(
            description,
            best.id,
            "similar",
            best_score,
            f"{part}{best_score:.2f} of its weight is in the item (shares {shares(best)})",
            cands,
        )


def _prefer_free(found: Sequence[Target], taken: set[str]) -> Target:
    return next((t for t in found if t.id not in taken), found[0])


def _at_index(found: Sequence[Target], c: _Cleaned) -> Target | None:
    """The candidate at the reference's index (0- or 1-based, 0-based first) when that settles it."""
    if c.index is None:
        return None
    for base in (0, 1):
        at = [t for t in found if t.index is not None and t.index + base == c.index]
        if len(at) == 1:
            return at[0]
    return None


def _result(
    description: str,
    target: str | None,
    confidence: str,
    score: float,
    reason: str,
    candidates: tuple[tuple[str, float], ...] = (),
) -> LogMatch:
    return LogMatch(
        round=0,
        action="",
        index=0,
        description=description,
        target=target,
        confidence=confidence,  # type: ignore[arg-type]  # one of CONFIDENCES
        score=score,
        reason=reason,
        candidates=candidates,
    )


def match_log(feature: Feature, log: IterationLog | None = None) -> tuple[LogMatch, ...]:
    """Every triaged description of every round of the log, matched (round order, then fix,
    accept, defer in list order). Within a round a target already named by an earlier
    description is avoided when another equally good one exists."""
    log = log if log is not None else feature.iteration_log
    if log is None or not any(r.fix or r.accept or r.defer for r in log.rounds):
        return ()
    matcher = Matcher.of(feature)
    matcher.expect(e for r in log.rounds for e in (*r.fix, *r.accept, *r.defer))
    out: list[LogMatch] = []
    for r in sorted(log.rounds, key=lambda r: r.round):
        taken: list[str] = []
        placed: list[LogMatch] = []
        for action, entries in (("fix", r.fix), ("accept", r.accept), ("defer", r.defer)):
            for n, entry in enumerate(entries):
                m = matcher.match(entry, taken=taken)
                if m.target:
                    taken.append(m.target)
                placed.append(_place(m, r.round, action, n, entry))
        out.extend(_settle_ambiguous(matcher, placed))
    return tuple(out)


def _settle_ambiguous(matcher: Matcher, placed: list[LogMatch]) -> list[LogMatch]:
    """A round's ambiguous matches again, with every item the round's other descriptions name
    taken (not only those before it): "another description of the round names the runner-up"
    holds whatever their order. Until nothing changes (a settled one may settle another)."""
    while True:
        changed = False
        for k, m in enumerate(placed):
            if m.confidence != "ambiguous":
                continue
            taken = [p.target for j, p in enumerate(placed) if j != k and p.target]
            again = matcher.match(m.entry, taken=taken)
            if again.target:
                placed[k] = _place(again, m.round, m.action, m.index, m.entry)
                changed = True
        if not changed:
            return placed


def _place(m: LogMatch, round_: int, action: str, index: int, entry: Any) -> LogMatch:
    return replace(m, round=round_, action=action, index=index, entry=entry)
