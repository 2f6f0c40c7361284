"""A review's verdict and status as the two lineages (and hand edits) write them, made canonical:
``ready`` / ``almost`` / ``not ready`` (Phase B's tables before any substring rule), a compound
verdict's parts, REVIEW_STATE.json's ``status`` synonyms."""

from __future__ import annotations

import re
from typing import Any

POSITIVE = ("ready", "almost")

# Verdict canonicalisation tables (Phase B), checked before any substring rule.
_READY_TERMS = {
    "ready",
    "accept",
    "accepted",
    "sufficient",
    "good enough",
    "looks ready",
    "ready for submission",
    "yes",
}
_ALMOST_TERMS = {"almost", "almost ready", "nearly ready", "close", "minor revision", "minor revisions"}
_NOT_READY_TERMS = {
    "not ready",
    "revise",
    "weak",
    "reject",
    "rejected",
    "needs major work",
    "major revision",
    "major revisions",
    "no",
    "not yet",
}
_NOT_READY_PATTERN = re.compile(r"\bnot\s+(?:yet\s+|quite\s+)?ready\b|\bnot\s+almost\b|\bmajor\s+revisions?\b")
# Phase B's `almost` synonyms anywhere in the phrase ("NEEDS MINOR REVISION" as "minor revision").
_ALMOST_PATTERN = re.compile(r"\balmost\b|\bnearly\s+ready\b|\bminor\s+revisions?\b")

# REVIEW_STATE.json `status` as written by hand or by other versions ("COMPLETE", "in progress").
_STATUS_SYNONYMS = {
    "complete": "completed",
    "completed": "completed",
    "done": "completed",
    "finished": "completed",
    "in_progress": "in_progress",
    "in progress": "in_progress",
    "in-progress": "in_progress",
    "running": "in_progress",
    "awaiting_upstream": "awaiting_upstream",
    "awaiting upstream": "awaiting_upstream",
    "awaiting-upstream": "awaiting_upstream",
    "stalled": "stalled",
}


def canonical_status(value: Any) -> str | None:
    """A state's ``status`` in the loop's own words (``completed``, ``in_progress``,
    ``awaiting_upstream``, ``stalled``): case and spelling variants such as ``COMPLETE`` are
    normalised; anything else is kept as written (and reported)."""
    if not isinstance(value, str) or not value.strip():
        return None
    key = " ".join(value.strip().lower().split())
    return _STATUS_SYNONYMS.get(key, _STATUS_SYNONYMS.get(key.replace(" ", "_"), value.strip()))


def verdict_parts(text: Any) -> list[tuple[str, str]]:
    """The parts of a compound verdict — one verdict per target, ``;``-separated: ``Ready
    (workshop…); Almost (…); Not ready (main-track…)`` — as (canonical verdict, the part as
    written); [] for a verdict of one part, or parts that do not each start with a verdict."""
    if not isinstance(text, str) or ";" not in text:
        return []
    parts = [p.strip().strip("*_` ").strip() for p in text.split(";")]
    parts = [p for p in parts if p]
    out = []
    for part in parts:
        head = re.split(r"\s+[—–-]\s+|\s*\(|:", part, maxsplit=1)[0]
        if _single_verdict(head, strict=True) is None:
            return []
        out.append((_single_verdict(head) or "not ready", part))
    return out if len(out) > 1 else []


def canonical_verdict(text: Any) -> str | None:
    """A reviewer's free-form verdict as ``ready`` / ``almost`` / ``not ready``.

    Lowercase, trim, strip markdown and punctuation, look the phrase up in the synonym
    tables, then test substrings — ``not ready`` *before* ``ready`` (it contains it).
    Anything else is ``not ready``; None when there is no verdict at all — or when it is a
    compound verdict whose parts disagree (:func:`verdict_parts`: which target the loop's STOP
    was about is not written, so scars does not guess).
    """
    if text is None:
        return None
    parts = verdict_parts(text)
    if parts:
        kinds = {kind for kind, _ in parts}
        return kinds.pop() if len(kinds) == 1 else None
    return _single_verdict(text)


def _single_verdict(text: Any, *, strict: bool = False) -> str | None:
    """One verdict phrase canonicalised; with ``strict``, None unless it names a verdict."""
    if text is None:
        return None
    if not isinstance(text, str):
        text = str(text)
    t = text.lower()
    t = re.sub(r"[*_`#>\[\]()\"'“”]", " ", t)
    t = re.sub(r"[.,;:!?]+", " ", t)
    t = " ".join(t.split())
    if not t:
        return None
    if t in _NOT_READY_TERMS:
        return "not ready"
    if t in _ALMOST_TERMS:
        return "almost"
    if t in _READY_TERMS:
        return "ready"
    if _NOT_READY_PATTERN.search(t):
        return "not ready"
    if _ALMOST_PATTERN.search(t) or any(t.startswith(term + " ") for term in _ALMOST_TERMS):
        return "almost"  # "needs minor revision", "almost there", "nearly ready (two nits)"
    if re.search(r"\bready\b", t) or any(t.startswith(term + " ") for term in _READY_TERMS - {"yes"}):
        return "ready"
    return None if strict else "not ready"
