"""Text rules: normalising, tokens, and whether a text says anything.

* :func:`normalize` / :func:`norm` — whitespace collapsed, case folded: the key of the literal
  cross-task pattern rule and of every "same text" comparison;
* :func:`tokens` — the token set of the near-duplicate (possible pattern) rule;
* :func:`is_meaningful` — a decision field is not empty, a placeholder or punctuation only;
* :func:`generic_reason_problem` — a gate reason is question-specific, not a generic answer;
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any, Protocol

_WS = re.compile(r"\s+")


def normalize(text: str) -> str:
    """Whitespace-normalised, case-folded text: the key of the literal pattern rule."""
    return _WS.sub(" ", text).strip().casefold()


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


# Values that say nothing. Compared case-insensitively after trimming whitespace and a
# trailing full stop.
PLACEHOLDERS: frozenset[str] = frozenset(
    {
        "n/a",
        "na",
        "n.a",
        "n.a.",
        "tbd",
        "tba",
        "tbc",
        "todo",
        "to do",
        "fixme",
        "none",
        "null",
        "nil",
        "-",
        "--",
        "---",
        "?",
        "??",
        "???",
        "…",
        "...",
        "..",
        "x",
        "xx",
        "xxx",
        "unknown",
        "nobody",
        "no one",
        "noone",
        "whatever",
        "same",
        "see above",
        "placeholder",
        "<none>",
        "<tbd>",
        "\u2014",
        "\u2013",
    }
)


def is_meaningful(value: Any) -> bool:
    """False for None, empty, whitespace-only, punctuation-only and placeholder texts."""
    if value is None:
        return False
    if not isinstance(value, str):
        return False
    text = unicodedata.normalize("NFKC", value).strip()
    if not text:
        return False
    folded = text.casefold()
    if folded in PLACEHOLDERS or folded.rstrip(".").strip() in PLACEHOLDERS:
        return False
    # Nothing but punctuation, symbols or invisible characters.
    return any(unicodedata.category(ch)[0] in "LN" for ch in text)


def why_not_meaningful(value: Any) -> str:
    if value is None:
        return "is missing"
    if not isinstance(value, str):
        return f"must be text, not {type(value).__name__}"
    if not value.strip():
        return "is empty"
    return f"is a placeholder ({value.strip()!r}); say something a person can act on"


GENERIC_ANSWERS = frozenset(
    {
        "ok",
        "okay",
        "k",
        "approved",
        "approve",
        "looks good",
        "lgtm",
        "continue",
        "yes",
        "y",
        "yep",
        "sure",
        "fine",
        "good",
        "done",
        "go",
        "go ahead",
        "proceed",
        "stop",
        "no",
        "n",
        "agreed",
        "agree",
        "accept",
        "accepted",
        "ship it",
        "ship",
        "fine by me",
        "whatever",
        "none",
        "n/a",
        "na",
        "-",
        "?",
        "yes please",
        "sounds good",
        "all good",
        "ack",
        "confirmed",
        "confirm",
        "skip",
        "retry",
        "defer",
        # the same in the upstream's other language
        "好",
        "好的",
        "可以",
        "同意",
        "繼續",
        "继续",
        "停止",
        "是",
        "確認",
        "确认",
        "沒問題",
        "没问题",
        "通過",
        "通过",
    }
)


def _norm_reason(text: str) -> str:
    t = " ".join(str(text).split()).casefold()
    return re.sub(r"^[\W_]+|[\W_]+$", "", t)


class _AnswerSet(Protocol):
    """A gate, as far as the reason check needs it: its answers (value, key, label, aliases)."""

    @property
    def answers(self) -> Sequence[Any]: ...


def generic_reason_problem(reason: str | None, gate: _AnswerSet | None = None) -> str | None:
    """Why ``reason`` is not a question-specific answer (formats.md §1.6 validity), or None."""
    if reason is None or not str(reason).strip():
        return "a reason is required"
    n = _norm_reason(reason)
    words = set(GENERIC_ANSWERS)
    if gate is not None:
        for a in gate.answers:
            words |= {a.value.casefold(), a.key.casefold(), _norm_reason(a.label), *(x.casefold() for x in a.aliases)}
    if n in words or sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in n) < 4:
        return (
            f"{reason.strip()!r} is a generic answer; say why, specific to this question "
            "(e.g. which items or figures made you decide)"
        )
    return None
