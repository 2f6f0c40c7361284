"""Text rules: normalising, tokens, and whether a text says anything.

* :func:`normalize` / :func:`norm` — whitespace collapsed, case folded: the key of the literal
  cross-task pattern rule and of every "same text" comparison;
* :func:`tokens` — the token set of the near-duplicate (possible pattern) rule;
* :func:`text_problem` — THE judge of "does this text say anything" (every decision field, every
  gate reason, every auto-decisions answer, ``scars log verify``); :func:`is_meaningful` is its
  yes/no form. The rules are listed in its docstring and in docs/decisions.md.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from typing import Any, Protocol


def normalize(text: str) -> str:
    r"""Whitespace-normalised, case-folded text: the key of the literal pattern rule.

    ``" ".join(text.split())`` is ``re.sub(r"\s+", " ", text).strip()``: ``\s`` and ``str.split()``
    know the same whitespace (``str.isspace``; a test checks every code point), at a quarter
    of the time."""
    return " ".join(text.split()).casefold()


_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple:
    """Sort key putting numbers in number order: task-2 before task-10 (case folded)."""
    return tuple(int(p) if p.isdigit() else p.casefold() for p in _DIGITS.split(text or ""))


def join_clauses(clauses: Sequence[str], sep: str = "; ") -> str:
    """Sentences joined as one line's clauses: a clause's closing full stop is dropped before the
    separator ("… conflicts.", "2/3 rounds" → "… conflicts; 2/3 rounds")."""
    parts = [c.strip() for c in clauses if c and c.strip()]
    return sep.join(
        p[:-1] if p.endswith(".") and not p.endswith("..") and i < len(parts) - 1 else p for i, p in enumerate(parts)
    )


def norm(text: Any) -> str:
    """The same normalisation as ScarItem.normalized (whitespace collapsed, case folded)."""

    return normalize(str(text))


_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "then",
        "else",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "not",
        "no",
        "nor",
        "so",
        "than",
        "too",
        "very",
        "can",
        "will",
        "just",
        "do",
        "does",
        "did",
        "has",
        "have",
        "had",
        "into",
        "over",
        "under",
        "out",
        "up",
        "down",
        "only",
        "own",
        "same",
        "such",
        "there",
        "their",
        "they",
        "them",
        "we",
        "you",
        "he",
        "she",
        "i",
        "our",
        "your",
        "his",
        "her",
        "which",
        "who",
        "whom",
        "what",
        "when",
        "where",
        "why",
        "how",
        "all",
        "any",
        "both",
        "each",
        "few",
        "more",
        "most",
        "other",
        "some",
    ]
)


STOPWORDS: frozenset[str] = _STOPWORDS  # the words the possible-pattern rule ignores

_WORD = re.compile(r"\w+", re.UNICODE)


_CJK_CLASS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
CJK_CLASS: str = _CJK_CLASS  # the body of cjk_re's class, for patterns that combine it with others


@functools.cache
def cjk_re() -> re.Pattern[str]:
    """One CJK character (kana, CJK ideographs, hangul). Compiled on first use, not at import:
    a class of such wide ranges takes ~10 ms to compile, which every start-up paid."""
    return re.compile(f"[{_CJK_CLASS}]")


def tokens(text: str) -> frozenset[str]:
    """Token set of a text: case-folded words without stop words; CJK runs as bigrams."""
    words = _WORD.findall(text.casefold())
    if text.isascii():
        return frozenset(w for w in words if len(w) > 1 and w not in _STOPWORDS)
    out: set[str] = set()
    cjk = cjk_re()
    for w in words:
        if cjk.search(w):
            chars = [c for c in w if cjk.match(c)]
            rest = cjk.sub(" ", w).split()
            out.update(a + b for a, b in zip(chars, chars[1:]))
            if len(chars) == 1:
                out.add(chars[0])
            out.update(r for r in rest if len(r) > 1 and r not in _STOPWORDS)
        elif len(w) > 1 and w not in _STOPWORDS:
            out.add(w)
    return frozenset(out)


# ----------------------------------------------------------------------------- meaningful text
#
# One judge for every text a person gives scars as a decision: an accept's re-review signal,
# owner and rationale, a defer's reason and revisit-when, a sign-off's name, a watch, a round's
# decision_reason, a blocked fix's reason, every gate reason (prompt, --reason, SCARS_REASON_*,
# answers file, the app's round gate), the texts of an auto-decisions.md entry, and the accepts
# `scars log verify` reads. Texts are compared after NFKC, case folding, collapsed whitespace
# and with the punctuation, quotes and brackets around them removed ("OK." is "ok").

# Texts that hold a place instead of saying something: a template's blank, "to be decided",
# "nothing", a field's own name. A Rule-3 list item of iteration-log.yaml (evidence_gained,
# residual_risk) is not judged: "none" is a legitimate residual risk there.
PLACEHOLDERS: frozenset[str] = frozenset(
    {
        # English
        "n/a", "na", "n.a", "n.a.", "not applicable", "tbd", "tba", "tbc", "to be decided",
        "to be determined", "to be confirmed", "todo", "to do", "fixme", "xxx", "xx", "x",
        "placeholder", "fill", "fill in", "fill me", "fill me in", "none", "null", "nil",
        "nothing", "empty", "unknown", "unsure", "not sure", "idk", "dunno", "nobody", "no one",
        "noone", "someone", "somebody", "anyone", "anybody", "whoever", "whatever", "same",
        "same as above", "see above", "as above", "ditto", "etc", "later", "sometime", "misc",
        "owner", "the owner", "owner name", "name", "your name", "signal", "re-review signal",
        "re_review_signal", "rationale", "reason", "description", "text", "value", "string",
        "example", "foo", "bar", "test", "asdf", "lorem ipsum",
        # Chinese (both scripts) and Japanese / Korean, as the upstream logs write
        "待定", "待補", "待补", "待填", "待確認", "待确认", "未定", "未知", "不知道", "不詳", "不详",
        "無", "无", "没有", "沒有", "暫無", "暂无", "不適用", "不适用", "略", "同上", "見上", "见上",
        "某人", "有人", "負責人", "负责人", "なし", "無し", "特になし", "該当なし", "未定です",
        "없음", "미정",
    }
)  # fmt: skip

# Answers that agree or move on without saying why (formats.md §1.6: "approved" / "looks good"
# / "continue" alone is not a question-specific answer), in the upstream logs' two languages.
GENERIC_ANSWERS: frozenset[str] = frozenset(
    {
        "ok", "okay", "k", "approved", "approve", "looks good", "looks fine", "lgtm", "continue",
        "yes", "y", "yep", "yeah", "sure", "fine", "good", "great", "done", "go", "go ahead",
        "proceed", "stop", "no", "n", "agreed", "agree", "accept", "accepted", "ship it", "ship",
        "fine by me", "works for me", "yes please", "sounds good", "all good", "ack", "noted",
        "confirmed", "confirm", "skip", "retry", "defer", "fix", "as discussed", "per discussion",
        "obviously", "because", "+1",
        "好", "好的", "可以", "行", "同意", "繼續", "继续", "停止", "是", "是的", "對", "对", "嗯",
        "確認", "确认", "沒問題", "没问题", "通過", "通过", "收到", "了解", "知道了", "批准", "核准",
    }
)  # fmt: skip

# Words that add nothing next to a generic answer or a placeholder ("ok, thanks", "yes please",
# "done for now", "TODO fill in"): a text made only of these, generic answers and placeholders
# says nothing either.
_FILLER: frozenset[str] = frozenset(
    {
        "looks", "good", "go", "ahead", "ship", "it", "sounds", "all", "fine", "by", "me", "please",
        "thanks", "thank", "you", "for", "now", "just", "to", "be", "later", "fill", "in", "the", "and", "then", "so", "i", "we", "think",
        "works", "with", "this", "that", "from", "here", "too", "also",
        "了", "吧", "啊", "呀", "的", "我", "就", "先", "吗", "嗎", "呢",
    }
)  # fmt: skip

_GENERIC_WORDS = frozenset(w for w in GENERIC_ANSWERS | PLACEHOLDERS if " " not in w) | _FILLER


@functools.cache
def _cjk_phrases() -> list[str]:
    """The generic words written in CJK, longest first (on first use, as :func:`cjk_re`)."""
    return sorted((w for w in _GENERIC_WORDS if cjk_re().search(w)), key=len, reverse=True)


# A template's blank kept as written: "<owner>", "<question-specific answer>", "{{owner}}".
_TEMPLATE = re.compile(r"^(<[^<>]*>|\{\{[^{}]*\}\}|\$\{[^{}]*\}|%s)$")
# A marker that the text is still to be written: "TODO: fill", "TBD - later", "FIXME(bob)".
_MARKER = re.compile(r"^(todo|tbd|tba|tbc|fixme|xxx|placeholder)\s*[:：(（\[\-–—]")


@functools.cache
def _run_re() -> re.Pattern[str]:
    """A CJK run, a run of other letters, or digits (on first use, as :func:`cjk_re`)."""
    return re.compile(f"[{_CJK_CLASS}]+|[^\\W\\d_{_CJK_CLASS}]+|\\d+")


_EDGE = re.compile(r"^[\W_]+|[\W_]+$")

# A reason asked at a gate is refused below this display width (CJK characters count two):
# "ab", "好", "ok!" say nothing about the question.
MIN_REASON_WIDTH = 4


class _AnswerSet(Protocol):
    """A question, as far as the reason check needs it: its answers (value, key, label, aliases)."""

    @property
    def answers(self) -> Sequence[Any]: ...


def _fold(text: str) -> str:
    return normalize(unicodedata.normalize("NFKC", text))


def _core(folded: str) -> str:
    """``folded`` without the punctuation, quotes, brackets and symbols around it."""
    return _EDGE.sub("", folded)


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _generic_words(core: str) -> list[str] | None:
    """The words of ``core`` when every one is a generic answer, a placeholder or a filler
    word (a CJK run cut into known phrases, longest first); None when one says something."""
    found: list[str] = []
    for w in _run_re().findall(core):
        if w in _GENERIC_WORDS:
            found.append(w)
            continue
        if not cjk_re().match(w):
            return None
        rest = w
        while rest:
            hit = next((p for p in _cjk_phrases() if rest.startswith(p)), None)
            if hit is None:
                return None
            found.append(hit)
            rest = rest[len(hit) :]
    return found or None


def answer_words(question: _AnswerSet) -> frozenset[str]:
    """The answers of a question as texts (value, key, label, aliases), compared as reasons are."""
    words: set[str] = set()
    for a in question.answers:
        for w in (a.value, a.key, a.label, *a.aliases):
            words.add(_core(_fold(str(w))))
    return frozenset(words)


def text_problem(value: Any, *, question: _AnswerSet | None = None, specific: bool = False) -> str | None:
    """Why ``value`` says nothing a person can act on, or None when it says something.

    Refused everywhere: None, a non-text, empty or whitespace, punctuation or symbols only, a
    template blank (``<owner>``, ``{{owner}}``), a to-do marker (``TODO: fill``, ``TBD - …``), a
    placeholder (:data:`PLACEHOLDERS`: tbd, n/a, -, …, none, owner, 待定, 无 …), a generic
    answer (:data:`GENERIC_ANSWERS`: ok, approved, looks good, lgtm, continue, yes, done, 好的,
    同意 …), and any text made only of those and filler words ("ok, continue", "好的，继续").

    A reason given at a gate (``question``: the gate, whose own answers then count as generic
    too, e.g. "B" or "ship as-is"; or ``specific=True`` where no gate object is at hand) must
    also be at least :data:`MIN_REASON_WIDTH` columns wide.
    """
    specific = specific or question is not None
    if value is None:
        return "a reason is required" if specific else "it is missing"
    if not isinstance(value, str):
        return f"it must be text, not {type(value).__name__}"
    folded = _fold(value)
    if not folded:
        return "a reason is required" if specific else "it is empty"
    shown = repr(value.strip()[:60] + ("…" if len(value.strip()) > 60 else ""))
    act = (
        "say why, specific to this question (e.g. which items or figures made you decide)"
        if specific
        else "say something a person can act on"
    )
    core = _core(folded)
    words = _generic_words(core)
    if (
        _TEMPLATE.match(folded)
        or _MARKER.match(folded)
        or folded in PLACEHOLDERS
        or core in PLACEHOLDERS
        or (words and any(w in PLACEHOLDERS for w in words))
    ):
        return f"{shown} is a placeholder; {act}"
    if not any(unicodedata.category(ch)[0] in "LN" for ch in core):
        return f"{shown} is punctuation only; {act}"
    if folded in GENERIC_ANSWERS or core in GENERIC_ANSWERS or words:
        return f"{shown} is a generic answer; {act}"
    if question is not None and core in answer_words(question):
        return f"{shown} only repeats an answer of this question; {act}"
    if specific and _width(core) < MIN_REASON_WIDTH:
        return f"{shown} is too short to say why; {act}"
    return None


def is_meaningful(value: Any) -> bool:
    """``text_problem(value) is None``: the text says something a person can act on."""
    return text_problem(value) is None


SPARK_BARS = "▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float], last: int | None = None) -> str:
    """Block characters for ``values`` (its ``last`` ones when given), scaled between their
    min and max; a flat series is drawn at mid height. The one sparkline of `scars loops` and
    the app's Loops inbox."""
    shown = list(values)[-last:] if last else list(values)
    if not shown:
        return ""
    lo, hi = min(shown), max(shown)
    if hi == lo:
        return SPARK_BARS[len(SPARK_BARS) // 2] * len(shown)
    top = len(SPARK_BARS) - 1
    return "".join(SPARK_BARS[round((v - lo) / (hi - lo) * top)] for v in shown)
