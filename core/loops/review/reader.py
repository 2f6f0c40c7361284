"""Review loops: Mechanist auto-iteration-loop and ARIS auto-review-loop (formats.md §3).

Both lineages keep ``review-stage/REVIEW_STATE.json``, ``AUTO_REVIEW.md`` and
``REVIEWER_MEMORY.md`` (legacy: at the project root). The lineage is told by shape: a state
with ``iterations_consumed`` is Mechanist, anything else ARIS. Real ARIS files drift
(``thread_id``/``threadId``, ``current_round``/``round``, free-form verdicts): documented
keys are normalised, everything else is kept in ``raw``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from scars.core.loops.base import (
    Budget,
    LoopState,
    StopRule,
    TrendPoint,
    as_int,
    as_number,
    configured_count,
    fmt_number,
    now_utc,
    parse_time,
    read_json,
    read_text,
    rel,
    score_out_of_ten,
)
from scars.core.model import Problem
from scars.core.text import join_clauses
from scars.core.values import as_list

# Mechanist constants (seed 003).
MECHANIST_MAX_ITERATIONS = 6
MECHANIST_MAX_CLAIM_REENTRIES = 2
TARGET_SCORE = 6.0
STALL_LIMIT = 2
STALE_AFTER = timedelta(hours=24)
# The termination reasons Mechanist writes (auto-iteration-loop SKILL.md, Termination step 2), and
# `stalled`: the stall guard's termination ("status 'stalled'" in its final report), which real
# runs write as their termination_reason too.
MECHANIST_TERMINATIONS = ("positive_verdict", "iterations_exhausted", "claim_reentry_exhausted", "stalled")
# ARIS auto-review-loop constant.
ARIS_MAX_ROUNDS = 4

POSITIVE = ("ready", "almost")
VERIFY_REPORT = "verify/VERIFY_REPORT.md"  # the claim buckets, next to the review stage
BLOCKING_BUCKETS = ("FAIL", "INCONCLUSIVE", "ZERO_ELIGIBLE_VARIANTS")
BUCKETS = ("PASS",) + BLOCKING_BUCKETS + ("INTEGRITY_ONLY",)

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


# --------------------------------------------------------------------------- AUTO_REVIEW.md

# "## Iteration 2 (…)", "## Round 3 — …", and a run prefix: "## Loop 2 — Round 1", "## Night 3 Round 1",
# "## Loop 2 / Round 1", or any name before a slash or a dash: "## Feedback Loop Extension / Round 1".
_REVIEW_SECTION = re.compile(
    r"^##\s+(?:(?P<prefix>(?:Loop|Night|Run|Pass|Session)\s+\d+|[^#/—–\s][^#/—–]*?(?=\s*[/—–]))\s*[—–:/\-]?\s*)?"
    r"(?P<kind>Iteration|Round)\s+(?P<n>\d+)\b(?P<rest>.*)$",
    re.IGNORECASE,
)
# "- Budget after this iteration: iterations 3/6, claim-reentries 1/2" (the limits as the run
# configured them: an override such as "iterations 0/2, claim-reentries 0/1" is read as written).
_BUDGET_LINE = re.compile(r"budget after this iteration\W+iterations\s+(\d+)\s*/\s*(\d+)", re.IGNORECASE)
_REENTRY_LINE = re.compile(r"claim[- ]re-?entries\s+(\d+)\s*/\s*(\d+)", re.IGNORECASE)
_FENCE = re.compile(r"^\s*(```|~~~)")
# A labelled figure of an assessment: "- Score: 7/10", "**Verdict**: almost", "- **Verdict**
# (canonical): `almost`", "- Score 6.8/10" (no colon), "- **Average Score: 5.25/10**".
_LABEL_WORD = r"(?:(?:average|overall|mean|final)\s+)?(?:score|verdict)\b"
_LABEL = re.compile(r"(?P<label>" + _LABEL_WORD + r")\s*(?:\([^)]*\))?\s*(?P<colon>:)?\s*(?P<value>.*)$", re.IGNORECASE)
# Several figures on one line: "- Score: 6.4/10 (was 5.8). Verdict: almost.", "Verdict: READY |
# Score: ~8/10", "- Score **7.3/10**, verdict **Almost**" — split where the next one's label starts.
_LABEL_SPLIT = re.compile(r"\s*(?:\||;|,|\.(?=\s))\s*(?=" + _LABEL_WORD + r")", re.IGNORECASE)
_BARE_SCORE = re.compile(r"~?\d+(?:\.\d+)?(?:\s*[-–—]\s*\d+(?:\.\d+)?)?\s*/\s*10(?!\d)")


def _unfenced_lines(text: str):
    """(line number, line, inside a fenced block?) for every line."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
            yield number, line, True
            continue
        yield number, line, fenced


def _verdict_value(value: str) -> str:
    value = value.strip().strip("*_` ").strip()
    if len(verdict_parts(value)) > 1:
        return value.rstrip(". ")  # a compound verdict is kept whole ("Ready (workshop); Not ready (main)")
    # Cut commentary after the verdict words: "Almost (minor fixes)", "`ready` — …".
    value = re.split(r"\s+[—–-]\s+|\s*\(", value, maxsplit=1)[0]
    return value.strip("*_` ").rstrip(".").strip()


def assessment_figures(line: str, *, heading: bool = False) -> list[tuple[str, str]]:
    """The (label, value) figures of one assessment line, in order: ``score`` (or ``average
    score`` …) and ``verdict``. The line starts with a label (after a list bullet; markdown
    emphasis ignored), with a colon — or, for a score, its ``N/10`` right after; later figures on
    the line need no colon. A heading's rest (``(score: 7/10)``) may hold them anywhere."""
    text = line.replace("**", "").replace("__", "")
    if heading:
        found = re.search(_LABEL_WORD, text, re.IGNORECASE)
        if found is None:
            return []
        text = text[found.start() :]
    else:
        text = re.sub(r"^\s*(?:[-*+]\s+)?", "", text)
    figures: list[tuple[str, str]] = []
    for index, segment in enumerate(_LABEL_SPLIT.split(text)):
        m = _LABEL.match(segment)
        if m is None:
            break
        label = " ".join(m.group("label").lower().split())
        value = m.group("value").strip().strip(")").strip() if heading else m.group("value").strip()
        if m.group("colon") is None and index == 0 and not (label.endswith("score") and _BARE_SCORE.match(value)):
            break  # "- Score tables below": no figure
        figures.append((label, value))
    return figures


def parse_auto_review(text: str) -> list[dict[str, Any]]:
    """Round/iteration sections of AUTO_REVIEW.md, grouped into runs.

    Headings are matched leniently (``## Iteration N`` / ``## Round N`` with any suffix),
    never inside fenced code; a level-1 heading, a new run prefix (``## Loop 2 — Round 1``) or a
    section number that does not grow starts a new run. The score is the first number before ``/10`` on the section's
    ``Score`` line; the verdict is canonicalised.
    """
    runs: list[dict[str, Any]] = []
    title = None
    current: dict[str, Any] | None = None

    def new_run(run_title: str | None) -> dict[str, Any]:
        run: dict[str, Any] = {"title": run_title, "sections": []}
        runs.append(run)
        return run

    run: dict[str, Any] | None = None
    for number, line, fenced in _unfenced_lines(text):
        if fenced:
            continue
        if line.startswith("# "):
            title = line[2:].strip()
            if run is None or run["sections"]:
                run = new_run(title)
            else:
                run["title"] = title
            current = None
            continue
        m = _REVIEW_SECTION.match(line)
        if m:
            n = int(m.group("n"))
            prefix = " ".join(m.group("prefix").split()) if m.group("prefix") else None
            if run is None:
                run = new_run(prefix or title)
            elif prefix is not None and prefix != run.get("prefix") and run["sections"]:
                run = new_run(prefix)  # "## Loop 2 — Round 1" after "## Loop 1 — Round 3"
            elif run["sections"] and n <= run["sections"][-1]["number"]:
                run = new_run(prefix)
            if prefix is not None:
                run["prefix"] = prefix
            current = {
                "kind": m.group("kind").lower(),
                "number": n,
                "heading": line[3:].strip(),
                "line": number,
                "score": None,
                "verdict_text": None,
                "verdict": None,
                "final": "FINAL" in m.group("rest"),
                "iterations": None,
                "iterations_limit": None,
                "claim_reentries": None,
                "claim_reentries_limit": None,
            }
            run["sections"].append(current)
            _take_figures(current, assessment_figures(m.group("rest"), heading=True))  # "## Round 1 (score: 7/10)"
            continue
        if line.startswith("## "):
            current = None
            continue
        if current is None:
            continue
        budget = _BUDGET_LINE.search(line)
        if budget and current["iterations"] is None:
            current["iterations"], current["iterations_limit"] = int(budget.group(1)), int(budget.group(2))
            reentry = _REENTRY_LINE.search(line)
            if reentry:
                current["claim_reentries"], current["claim_reentries_limit"] = (
                    int(reentry.group(1)),
                    int(reentry.group(2)),
                )
            continue
        _take_figures(current, assessment_figures(line))
    return [r for r in runs if r["sections"]]


def _take_figures(section: dict[str, Any], figures: list[tuple[str, str]]) -> None:
    """A section's score and verdict: the first of each, except that an average / overall score
    (a summary of several reviewers) replaces a plain one."""
    for label, value in figures:
        if label.endswith("score"):
            summary = label != "score"
            if section["score"] is not None and not (summary and not section.get("score_summary")):
                continue
            score = score_out_of_ten(value)
            if score is None:
                score = as_number(value.replace("*", "").strip())
            if score is not None:
                section["score"], section["score_summary"] = score, summary
        elif section["verdict_text"] is None:
            raw_value = _verdict_value(value)
            if raw_value:
                section["verdict_text"] = raw_value
                section["verdict"] = canonical_verdict(raw_value)


# --------------------------------------------------------------------------- REVIEWER_MEMORY.md

_MEMORY_HEADING = re.compile(r"^##\s+(?P<heading>.*?\b(?:Iteration|Round)\s+(?P<n>\d+)\b.*)$", re.IGNORECASE)


def parse_reviewer_memory(text: str) -> list[dict[str, Any]]:
    """``## [Night N ]Iteration|Round N — Score: X/10, Verdict: V`` sections of REVIEWER_MEMORY.md."""
    sections = []
    for number, line, fenced in _unfenced_lines(text):
        if fenced:
            continue
        m = _MEMORY_HEADING.match(line)
        if not m:
            continue
        heading = m.group("heading").strip()
        verdict_m = re.search(r"Verdict:\s*(.+)$", heading, re.IGNORECASE)
        verdict_text = _verdict_value(verdict_m.group(1)) if verdict_m else None
        sections.append(
            {
                "heading": heading,
                "number": int(m.group("n")),
                "line": number,
                "score": score_out_of_ten(heading),
                "verdict_text": verdict_text,
                "verdict": canonical_verdict(verdict_text) if verdict_text else None,
            }
        )
    return sections


# --------------------------------------------------------------------------- verify buckets

_BUCKET_TOKEN = re.compile(r"\b(PASS|FAIL|INCONCLUSIVE|ZERO_ELIGIBLE_VARIANTS|INTEGRITY_ONLY)\b")
# The state markers of Mechanist's templates: "✅ PASS", "❌ FAIL", "🟡 INCONCLUSIVE",
# "🟠 ZERO_ELIGIBLE_VARIANTS" (agents/verify.md: "⬛ ZERO_ELIGIBLE_VARIANTS"), "⚪ INTEGRITY_ONLY".
_MARKED_STATE = re.compile(
    r"(?:✅|❌|🟡|🟠|⬛|⚪)\ufe0f?\s*(PASS|FAIL|INCONCLUSIVE|ZERO_ELIGIBLE_VARIANTS|INTEGRITY_ONLY)\b"
)
# "**Counts:** 1 PASS, 1 FAIL, …" (agents/verify.md) and "- ✅ PASS: 1 (…)" (the final status block).
_COUNT_BEFORE = re.compile(r"(\d+)\s+(PASS|FAIL|INCONCLUSIVE|ZERO_ELIGIBLE_VARIANTS|INTEGRITY_ONLY)\b")
_COUNT_AFTER = re.compile(r"\b(PASS|FAIL|INCONCLUSIVE|ZERO_ELIGIBLE_VARIANTS|INTEGRITY_ONLY)\s*:\s*(\d+)\b")
_TABLE_SEPARATOR = re.compile(r"^\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
# Headers of the column holding a claim's final state: the template's "State", a plain "verdict",
# and real reports' "Final" (beside an "Integrity" column: `PASS | INTEGRITY_ONLY`) and
# "Terminal state". A table with two of them reads each; when they disagree the row is unresolved.
_STATE_HEADERS = ("state", "verdict", "final state", "final verdict", "final", "terminal state", "terminal")
# "- C3 (short text): … — ❌ FAIL" / "- claim_1: INCONCLUSIVE" — a claim id, then a colon.
_CLAIM_ITEM = re.compile(r"^\s*[-*+]\s+(?:\*\*|`)?(?P<id>[A-Za-z][\w.\-]*)(?:\*\*|`)?\s*(?:\([^)]*\))?\s*:")


@dataclass(frozen=True, slots=True)
class VerifyClaims:
    """The claim states of ``verify/VERIFY_REPORT.md``, as far as they can be read.

    ``claims`` maps a claim id to its one state; ``unresolved`` lists the lines that name a claim
    whose state cannot be told (several state tokens and no state column or marker, a state cell
    without a state, two rows giving one claim two states, the report's own counts contradicting
    its rows). ``declared`` holds the report's own per-state counts when it states them.
    """

    claims: dict[str, str]
    unresolved: tuple[tuple[int, str], ...] = ()
    declared: dict[str, int] | None = None

    @property
    def counts(self) -> dict[str, int]:
        counts = {b: 0 for b in BUCKETS}
        if not self.claims and self.declared is not None:
            counts.update(self.declared)
            return counts
        for state in self.claims.values():
            counts[state] += 1
        return counts

    @property
    def blocking(self) -> dict[str, int]:
        """Claims in FAIL / INCONCLUSIVE / ZERO_ELIGIBLE_VARIANTS (a blocking claim always blocks)."""
        counts = self.counts
        return {b: counts[b] for b in BLOCKING_BUCKETS if counts[b]}

    @property
    def known(self) -> bool:
        """Every claim's state was read (and at least one claim, or the report's own counts)."""
        return not self.unresolved and (bool(self.claims) or self.declared is not None)


def _cells(line: str) -> list[str]:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|"):
        body = body[:-1]
    return [c.strip() for c in body.split("|")]


def _state_of(text: str) -> tuple[str | None, bool]:
    """(state, ambiguous) of a cell or a line: the marked state, else the only state token."""
    marked = {m.group(1) for m in _MARKED_STATE.finditer(text)}
    if len(marked) == 1:
        return marked.pop(), False
    if len(marked) > 1:
        return None, True
    tokens = set(_BUCKET_TOKEN.findall(text))
    if len(tokens) == 1:
        return tokens.pop(), False
    return None, len(tokens) > 1


def _claim_id(text: str) -> str:
    return text.strip().strip("*`_ ").strip()


def read_verify_claims(text: str) -> VerifyClaims:
    """Each claim's state in a VERIFY_REPORT.md (Mechanist ``skills/auto-verify`` Phase 11).

    A table row's state is its ``State`` (or ``verdict``, ``Final``, ``Terminal state``) column —
    real reports put ``Integrity | Final`` side by side (``PASS | INTEGRITY_ONLY``): the Final
    column decides, and two state columns that disagree leave the row unresolved; a row of a table without one,
    or a list item ``- <claim>: …``, takes the state after a state marker (✅ ❌ 🟡 🟠 ⬛ ⚪), else
    its only state token. The Summary table of the template carries several tokens per row
    (``FAIL (exp FAIL / mech N/A) … 🟡 INCONCLUSIVE``): the State column decides. A row naming
    several states that none of these rules settles is *unresolved*, never dropped: unknown is
    never success. Count lines (``**Counts:** 1 PASS, …``, ``- ✅ PASS: 1``) are the report's own
    tally, checked against its rows.
    """
    lines = text.splitlines()
    claims: dict[str, str] = {}
    ambiguous: list[tuple[str, int, str]] = []
    unresolved: list[tuple[int, str]] = []
    declared: dict[str, int] = {}
    fenced = False
    header: list[str] | None = None
    state_cols: list[int] = []
    in_table = False

    def settle(claim: str, state: str, number: int, line: str) -> None:
        if claim in claims and claims[claim] != state:
            unresolved.append((number, f"claim {claim} is given two states ({claims[claim]}, {state}): {line}"))
            return
        claims[claim] = state

    for index, line in enumerate(lines):
        number = index + 1
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        stripped = line.strip()
        if stripped.startswith("|"):
            if _TABLE_SEPARATOR.match(stripped):
                continue
            nxt = lines[index + 1].strip() if index + 1 < len(lines) else ""
            if not in_table and _TABLE_SEPARATOR.match(nxt):
                header = [c.lower().strip("*` ") for c in _cells(stripped)]
                state_cols = [i for i, h in enumerate(header) if h in _STATE_HEADERS]
                in_table = True
                continue
            in_table = True
            cells = _cells(stripped)
            claim = _claim_id(cells[0]) if cells else ""
            if state_cols:
                states = {_state_of(cells[i] if i < len(cells) else "")[0] for i in state_cols}
                if None in states:
                    unresolved.append((number, f"claim {claim or '?'} has no state in its State column: {stripped}"))
                elif len(states) > 1:
                    named = " and ".join(header[i] for i in state_cols) if header else "state"
                    unresolved.append((number, f"claim {claim or '?'}: its {named} columns disagree: {stripped}"))
                else:
                    settle(claim, states.pop(), number, stripped)  # type: ignore[arg-type]
                continue
            state, several = _state_of(stripped)
            if state is not None:
                settle(claim, state, number, stripped)
            elif several:
                ambiguous.append((claim, number, stripped))
            continue
        in_table = False
        header, state_cols = None, []
        counted = _COUNT_AFTER.findall(stripped) if stripped.startswith(("-", "*", "+")) else []
        if stripped.lower().lstrip("*_ ").startswith("counts"):
            for n, bucket in _COUNT_BEFORE.findall(stripped):
                declared[bucket] = int(n)
            continue
        if counted and len(counted) == 1 and _CLAIM_ITEM.match(stripped) is None:
            bucket, n = counted[0]
            declared[bucket] = int(n)
            continue
        item = _CLAIM_ITEM.match(stripped)
        if item is None or not _BUCKET_TOKEN.search(stripped):
            continue
        claim = item.group("id")
        if claim.upper() in BUCKETS:  # "- ✅ PASS: 1" shapes already counted above
            continue
        # The per-claim line of agents/verify.md ends with its state: "… — ❌ FAIL".
        tail = re.split(r"\s+[—–]\s+", stripped)[-1]
        state, several = _state_of(tail)
        if state is None:
            state, several = _state_of(stripped)
        if state is not None:
            settle(claim, state, number, stripped)
        elif several:
            ambiguous.append((claim, number, stripped))
    for claim, number, line in ambiguous:
        if claim not in claims:
            unresolved.append((number, f"claim {claim or '?'}: several states and no State column or marker: {line}"))
    if declared and claims:
        counted_rows = {b: 0 for b in BUCKETS}
        for state in claims.values():
            counted_rows[state] += 1
        differ = [b for b in BUCKETS if declared.get(b, counted_rows[b]) != counted_rows[b]]
        if differ:
            unresolved.append(
                (
                    0,
                    "the report's own counts ("
                    + ", ".join(f"{declared.get(b, 0)} {b}" for b in differ)
                    + ") differ from its claim rows ("
                    + ", ".join(f"{counted_rows[b]} {b}" for b in differ)
                    + ")",
                )
            )
    return VerifyClaims(claims, tuple(unresolved), {b: declared.get(b, 0) for b in BUCKETS} if declared else None)


def parse_verify_buckets(text: str) -> dict[str, int]:
    """Claims per state in ``verify/VERIFY_REPORT.md`` (:func:`read_verify_claims`' counts)."""
    return read_verify_claims(text).counts


# --------------------------------------------------------------------------- reading a loop


STAGE_DIR = "review-stage"


def project_of(directory: Path) -> Path:
    """The project of a review loop's directory: the parent of ``review-stage/``, else the
    directory itself (the legacy layout keeps the files at the project root)."""
    return directory.parent if directory.name == STAGE_DIR else directory


def _lineage(state: dict[str, Any] | None) -> str:
    if isinstance(state, dict) and ("iterations_consumed" in state or "claim_reentries_consumed" in state):
        return "mechanist"
    return "aris"


def read_review_dir(directory: Path, root: Path | None = None, *, now: datetime | None = None) -> LoopState:
    """One review loop: the state, log and memory files of ``directory``. Never raises on bad input."""
    directory = Path(directory)
    root = Path(root) if root is not None else directory
    now = now or now_utc()
    failures: list[Problem] = []
    state_path = directory / "REVIEW_STATE.json"
    review_path = directory / "AUTO_REVIEW.md"
    memory_path = directory / "REVIEWER_MEMORY.md"

    state: dict[str, Any] | None = None
    if state_path.exists() or state_path.is_symlink():
        data, failure = read_json(state_path, root)
        if failure is not None:
            failures.append(failure)
        elif not isinstance(data, dict):
            failures.append(Problem(rel(state_path, root), None, "REVIEW_STATE.json is not a JSON object"))
        else:
            state = data

    runs: list[dict[str, Any]] = []
    if review_path.exists() or review_path.is_symlink():
        text, failure = read_text(review_path, root)
        if failure is not None:
            failures.append(failure)
        else:
            runs = parse_auto_review(text or "")
            if not runs:
                failures.append(
                    Problem(rel(review_path, root), None, "no `## Iteration N` / `## Round N` section found")
                )
    memory: list[dict[str, Any]] = []
    if memory_path.exists() or memory_path.is_symlink():
        text, failure = read_text(memory_path, root)
        if failure is not None:
            failures.append(failure)
        else:
            memory = parse_reviewer_memory(text or "")

    lineage = _lineage(state)
    if lineage == "mechanist" or (state is None and runs and runs[-1]["sections"][-1]["kind"] == "iteration"):
        return _mechanist(directory, root, state, runs, memory, failures, now)
    return _aris(directory, root, state, runs, memory, failures, now)


def _name(directory: Path, root: Path) -> str:
    """The loop's name: its path from the scanned root, with the project's name when that is short."""
    r = rel(directory, root)
    if r in ("", ".") or "/" not in r:
        parent = directory.absolute().parent.name
        return f"{parent}/{directory.name}" if parent else directory.name
    return r


def _points_from_runs(runs: list[dict[str, Any]]) -> list[TrendPoint]:
    if not runs:
        return []
    points = []
    for section in runs[-1]["sections"]:
        if section["score"] is None and section["verdict"] is None:
            continue  # a bootstrap section (e.g. "Round 0: Bootstrap")
        points.append(TrendPoint(f"{section['kind']} {section['number']}", section["score"], section["verdict"]))
    return points


def _last_from_runs(runs: list[dict[str, Any]]) -> tuple[float | None, str | None, str | None]:
    for run in reversed(runs):
        for section in reversed(run["sections"]):
            if section["score"] is not None or section["verdict"] is not None:
                return section["score"], section["verdict_text"], section["verdict"]
    return None, None, None


def score_met(score: float | None) -> bool:
    """The STOP rule's score dimension: a score at or above 6/10 (no score never meets it).

    The one place of this rule: the loop readers and the ``review-continue`` gate call it.
    """
    return score is not None and score >= TARGET_SCORE


def _stop(
    score: float | None,
    verdict: str | None,
    buckets: dict[str, int] | None,
    buckets_source: str,
    unresolved: tuple[tuple[int, str], ...] = (),
    verdict_text: str | None = None,
) -> StopRule:
    """The STOP rule: score ≥ 6, verdict ready/almost, no blocking claim. ``buckets`` None = the
    claim states are unknown (``buckets_source`` says why); ``unresolved`` lines of the report
    whose claim state could not be read. A blocking claim always blocks; when two dimensions hold
    and the third is unknown the rule cannot be evaluated (unknown is never success)."""
    reasons = []
    met_score = score_met(score)
    reasons.append(
        f"score {fmt_number(score)} {'≥' if met_score else '<'} {fmt_number(TARGET_SCORE)}"
        if score is not None
        else "no score yet"
    )
    met_verdict = verdict in POSITIVE
    parts = verdict_parts(verdict_text) if verdict is None else []
    met: bool | None = met_score and met_verdict
    if parts:
        # "Ready (workshop…); Not ready (main-track…)": one verdict per target, and the target the
        # loop stopped for is not written. Unknown, never read as either.
        reasons.append(
            "compound verdict ("
            + "; ".join(f"{kind}: {part}" for kind, part in parts)
            + "): which target the STOP rule is about is not written, so it cannot be evaluated"
        )
        if met_score:
            met = None
    else:
        reasons.append(f"verdict {verdict or 'unknown'} {'is' if met_verdict else 'is not'} ready/almost")
    blocking = {b: buckets.get(b, 0) for b in BLOCKING_BUCKETS if buckets.get(b, 0)} if buckets else {}
    if blocking:
        met = False
        reasons.append("claims still in " + ", ".join(f"{b} ({n})" for b, n in blocking.items()))
    if unresolved:
        if met:
            met = None
        first = unresolved[0][1]
        more = f" (and {len(unresolved) - 1} more)" if len(unresolved) > 1 else ""
        reasons.append(f"claim states unknown in {buckets_source}: {first}{more}")
    elif buckets is not None:
        if not blocking:
            reasons.append(f"no FAIL/INCONCLUSIVE/ZERO_ELIGIBLE claims ({buckets_source})")
    elif buckets_source:
        if met:
            met = None  # two dimensions hold, the third cannot be checked: unknown is not success
        reasons.append(buckets_source)
    return StopRule(met, tuple(reasons), "positive_verdict" if met else None)


# Action types of seed 003 (formats.md §3.3): ① variant-only fix, ② main-experiment-script / plan
# fix, ③ claim-stage re-entry. `iteration_breakdown[].type` names them; the ② name is not given
# upstream (`main_experiment_fix` is ours), so the usual spellings of each are accepted.
ACTION_TYPES: dict[str, tuple[str, ...]] = {
    "①": ("variant_fix", "variant_only_fix", "①", "1", "type_1"),
    "②": ("main_experiment_fix", "experiment_fix", "main_experiment_script_fix", "plan_fix", "②", "2", "type_2"),
    "③": ("claim_reentry", "claim_stage_reentry", "claim_rewrite", "③", "3", "type_3"),
}
MAX_TYPE_2_PER_CLAIM = 2  # "If it has already had 2 ② attempts and is still INCONCLUSIVE, do not attempt a 3rd"


def _action_type(value: Any) -> str | None:
    key = str(value).strip().lower().replace("-", "_").replace(" ", "_") if value is not None else ""
    return next((t for t, names in ACTION_TYPES.items() if key in names), None)


def claim_actions(
    claims: dict[str, str], breakdown: list[dict[str, Any]], budget: Budget, reentries: Budget
) -> dict[str, dict[str, Any]]:
    """The legal back-edge actions of each open claim (seed 003's per-bucket routing contract).

    FAIL: ① (variant fix), then ③ (claim-stage re-entry) once a ① has run on it — ③ refused when
    the re-entry sub-budget is spent; INCONCLUSIVE: ② only, at most twice per claim (③ is never
    legal: the main experiment is broken, not the claim); ZERO_ELIGIBLE_VARIANTS: ① only;
    INTEGRITY_ONLY: no action. Every action costs an iteration: none is legal once the budget is
    spent. ``needs`` is the action the claim waits for next.
    """
    done: dict[str, dict[str, int]] = {}
    for entry in breakdown:
        kind = _action_type(entry.get("type"))
        if kind is None:
            continue
        for claim in as_list(entry.get("target_claims")):
            done.setdefault(str(claim), {}).setdefault(kind, 0)
            done[str(claim)][kind] += 1
    out: dict[str, dict[str, Any]] = {}
    for claim, state in claims.items():
        if state == "PASS":
            continue
        history = done.get(claim, {})
        legal: list[str] = []
        refused: dict[str, str] = {}
        needs: str | None = None
        if state == "FAIL":
            needs = "③" if history.get("①") else "①"
            legal.append("①")
            if reentries.spent:
                refused["③"] = f"claim re-entry sub-budget spent ({reentries.used}/{reentries.limit})"
            else:
                legal.append("③")
            refused["②"] = "a FAIL claim's main experiment passed its audit: ② is for INCONCLUSIVE claims"
            if needs == "③" and "③" in refused:
                legal.remove("①")  # its variants were already fixed: only a re-entry would help
        elif state == "INCONCLUSIVE":
            needs = "②"
            refused["③"] = "claim rewrite is forbidden on an INCONCLUSIVE claim (fix the main experiment)"
            refused["①"] = "the variants never ran: the main experiment is what is broken"
            attempts = history.get("②", 0)
            if attempts >= MAX_TYPE_2_PER_CLAIM:
                refused["②"] = (
                    f"already {attempts} type ② attempts (at most {MAX_TYPE_2_PER_CLAIM} per claim): "
                    "requires manual main-experiment repair"
                )
            else:
                legal.append("②")
        elif state == "ZERO_ELIGIBLE_VARIANTS":
            needs = "①"
            legal.append("①")
            refused["②"] = "the main experiment passed its audit: fix the variant scripts only"
            refused["③"] = "the claim is not at fault: fix the variant scripts only"
        elif state == "INTEGRITY_ONLY":
            for kind in ACTION_TYPES:
                refused[kind] = "INTEGRITY_ONLY is a no-action bucket (recorded under Open Items)"
        if budget.spent:
            for kind in legal:
                refused.setdefault(kind, f"the iteration budget is spent ({budget.used}/{budget.limit})")
            legal = []
        out[claim] = {"bucket": state, "legal": legal, "refused": refused, "needs": needs, "done": history}
    return out


def _mechanist(
    directory: Path, root: Path, state: dict[str, Any] | None, runs, memory, failures: list[Problem], now: datetime
) -> LoopState:
    state = state or {}
    state_file = rel(directory / "REVIEW_STATE.json", root)
    used = as_int(state.get("iterations_consumed"))
    reentries = as_int(state.get("claim_reentries_consumed"))
    # The log's last "Budget after this iteration" line: the counts when the state has none, and
    # the limits the run was configured with (MAX_ITERATIONS / MAX_CLAIM_REENTRIES are overridable).
    log_budget = (
        next((sec for sec in reversed(runs[-1]["sections"]) if sec.get("iterations") is not None), None)
        if runs
        else None
    )
    if used is None and log_budget is not None:
        used, reentries = log_budget["iterations"], log_budget.get("claim_reentries")
    noop = as_int(state.get("consecutive_noop_count")) or 0
    status = canonical_status(state.get("status"))
    if status not in (None, "in_progress", "awaiting_upstream", "completed", "stalled"):
        failures.append(Problem(state_file, None, f"unknown status {status!r} (kept)"))
    termination = state.get("termination_reason") if isinstance(state.get("termination_reason"), str) else None
    score = as_number(state.get("last_score"))
    verdict_text = state.get("last_verdict") if isinstance(state.get("last_verdict"), str) else None
    if score is None and verdict_text is None:
        score, verdict_text, _ = _last_from_runs(runs)
    verdict = canonical_verdict(verdict_text)

    # Buckets from verify/VERIFY_REPORT.md next to the review stage (project root).
    project = project_of(directory)
    buckets: dict[str, int] | None = None
    unresolved: tuple[tuple[int, str], ...] = ()
    claims: VerifyClaims | None = None
    verify_path = project / VERIFY_REPORT
    if verify_path.exists() or verify_path.is_symlink():
        text, failure = read_text(verify_path, root)
        if failure is not None:
            failures.append(failure)
            source = f"claim buckets unknown: {VERIFY_REPORT} unreadable"
        else:
            claims = read_verify_claims(text or "")
            source = VERIFY_REPORT
            if claims.claims or claims.declared is not None:
                buckets = claims.counts
            unresolved = claims.unresolved
            if not claims.claims and claims.declared is None:
                source = f"claim buckets unknown: no claim state found in {VERIFY_REPORT}"
            verify_file = rel(verify_path, root)
            for number, why in unresolved:
                failures.append(Problem(verify_file, number or None, f"claim state unknown: {why}"))
    elif status == "completed" and termination == "positive_verdict":
        buckets = {}
        source = f"the loop terminated on a positive verdict ({VERIFY_REPORT} not found)"
    else:
        source = f"claim buckets unknown: {VERIFY_REPORT} not found"
    stop = _stop(score, verdict, buckets, source, unresolved, verdict_text)

    # MAX_ITERATIONS is overridable upstream (the `MAX_ITERATIONS:` argument); a state that
    # records `max_iterations` is read with it.
    logged = log_budget or {}
    limit = configured_count(
        state.get("max_iterations"), configured_count(logged.get("iterations_limit"), MECHANIST_MAX_ITERATIONS)
    )
    reentry_limit = configured_count(
        state.get("max_claim_reentries"),
        configured_count(logged.get("claim_reentries_limit"), MECHANIST_MAX_CLAIM_REENTRIES),
    )
    budget = Budget(used, limit, "iterations")
    reentry_budget = Budget(reentries, reentry_limit, "claim re-entries")
    stalled = noop >= STALL_LIMIT or status == "stalled"
    stamp = parse_time(state.get("timestamp"))
    stale = bool(stamp and status != "awaiting_upstream" and now - stamp > STALE_AFTER)
    reasons = list(stop.reasons)
    if stalled:
        reasons.append(f"stall guard: {noop} consecutive no-op iterations (limit {STALL_LIMIT})")
    if reentry_budget.spent:
        reasons.append(f"claim re-entry sub-budget spent ({reentries}/{reentry_limit}): type ③ refused")
    if budget.spent:
        reasons.append(f"iteration budget spent ({used}/{limit})")
    breakdown = [e for e in as_list(state.get("iteration_breakdown")) if isinstance(e, dict)]
    actions = claim_actions(claims.claims if claims else {}, breakdown, budget, reentry_budget)
    # The loop's own terminations besides STOP: the budget, the re-entry sub-budget when only
    # type ③ could help the open claims, the stall guard.
    reentry_exhausted = (
        stop.met is not True
        and not budget.spent
        and reentry_budget.spent
        and bool(actions)
        and all(not a["legal"] for a in actions.values())
        and any("③" in a["refused"] and a["needs"] == "③" for a in actions.values())
    )
    if reentry_exhausted:
        reasons.append("only type ③ could help the open claims and the claim re-entry sub-budget is spent")
    outcome = stop.outcome or (
        "stalled"
        if stalled
        else termination
        or ("iterations_exhausted" if budget.spent else ("claim_reentry_exhausted" if reentry_exhausted else None))
    )
    stop = StopRule(stop.met, tuple(reasons), outcome)

    pending = as_list(state.get("pending_upstream_calls"))
    if status == "completed":
        route = "done"
    elif status == "awaiting_upstream":
        skills = [c.get("skill") for c in pending if isinstance(c, dict) and c.get("skill")]
        route = "upstream: " + (" → ".join(map(str, skills)) if skills else "pending calls")
    elif stalled or budget.spent or reentry_exhausted:
        route = "terminate"
    else:
        route = f"iteration {(used or 0) + 1}"

    waiting = False
    if status == "completed":
        # Terminated (by the loop, or by a person at the gate): nothing is waiting any more.
        reason = f"completed ({termination or 'no termination_reason recorded'})"
    elif stop.met is not True and (budget.spent or stalled or reentry_exhausted):
        waiting = True
        why = (
            "the stall guard fired"
            if stalled
            else f"the iteration budget is spent ({used}/{limit})"
            if budget.spent
            else f"the claim re-entry sub-budget is spent ({reentries}/{reentry_limit}) and only type ③ could help"
        )
        reason = f"STOP rule not met and {why}: a person decides what happens to the open claims"
    elif stop.met:
        reason = "STOP rule met: " + join_clauses(stop.reasons[:2])
    elif status == "awaiting_upstream":
        reason = f"awaiting upstream calls ({len(pending)}) run by the orchestrator"
    else:
        reason = "STOP rule not met; " + budget.describe()
    if stale:
        reason += f"; state is stale (last written {state.get('timestamp')}): a resume archives it and starts fresh"

    points = _points_from_runs(runs)
    if not points and score is not None:
        points = [TrendPoint(f"iteration {used or 1}", score, verdict)]
    details = {
        "lineage": "mechanist",
        "status": status,
        "termination_reason": termination,
        "last_score": score,
        "last_verdict": verdict_text,
        "canonical_verdict": verdict,
        "target_score": TARGET_SCORE,
        "claim_reentries": reentry_budget.to_dict(),
        "consecutive_noop_count": noop,
        "stalled": stalled,
        "stale": stale,
        "timestamp": state.get("timestamp"),
        "display_iteration": (used or 0) + 1,
        "thread_id": state.get("thread_id", state.get("threadId")),
        "buckets": buckets,
        "buckets_source": source,
        "claims_unresolved": [why for _, why in unresolved],
        "claims": dict(claims.claims) if claims else {},
        "claim_actions": actions,
        "pending_upstream_calls": pending,
        "runs_total": state.get("runs_total"),
        "gpu_hours_total": state.get("gpu_hours_total"),
        "auto_review_runs": _runs_summary(runs),
        "reviewer_memory": memory,
    }
    return LoopState(
        kind="mechanist",
        name=_name(directory, root),
        path=rel(directory, root),
        budget=budget,
        stop_rule=stop,
        route=route,
        waiting_for_human=waiting,
        reason=reason,
        parse_failures=tuple(failures),
        raw=state,
        status=status or "unknown",
        trend_label="review score /10",
        points=tuple(points),
        details=details,
    )


def _runs_summary(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "title": run["title"],
            "sections": [
                {
                    k: s.get(k)
                    for k in (
                        "kind",
                        "number",
                        "heading",
                        "line",
                        "score",
                        "verdict_text",
                        "verdict",
                        "final",
                        "iterations",
                        "iterations_limit",
                        "claim_reentries",
                        "claim_reentries_limit",
                    )
                }
                for s in run["sections"]
            ],
        }
        for run in runs
    ]


def _aris(
    directory: Path, root: Path, state: dict[str, Any] | None, runs, memory, failures: list[Problem], now: datetime
) -> LoopState:
    state_file = rel(directory / "REVIEW_STATE.json", root)
    st = state or {}
    round_key = "round" if "round" in st else ("current_round" if "current_round" in st else None)
    rounds = as_list(st.get("rounds"))
    used = as_int(st.get(round_key)) if round_key else None
    if round_key and used is None:
        failures.append(Problem(state_file, None, f"{round_key} {st.get(round_key)!r} is not a round number"))
    if used is None and rounds:
        used = max((as_int(r.get("round")) or 0) for r in rounds if isinstance(r, dict)) or None
    if used is None and runs:
        numbered = [s["number"] for s in runs[-1]["sections"] if s["score"] is not None or s["verdict"] is not None]
        used = max(numbered) if numbered else None
    limit = configured_count(st.get("max_rounds"), ARIS_MAX_ROUNDS)
    status = canonical_status(st.get("status"))

    # Last score and verdict: the documented keys, else the last round entry, else the log.
    score = as_number(st.get("last_score"))
    verdict_text = st.get("last_verdict") if isinstance(st.get("last_verdict"), str) else None
    source = "REVIEW_STATE.json"
    if (score is None or verdict_text is None) and rounds:
        last_round = next((r for r in reversed(rounds) if isinstance(r, dict)), {})
        if score is None:
            score = as_number(last_round.get("score"))
        if verdict_text is None and isinstance(last_round.get("verdict"), str):
            verdict_text = last_round["verdict"]
        source = "REVIEW_STATE.json rounds[]"
    if score is None and verdict_text is None and runs:
        score, verdict_text, _ = _last_from_runs(runs)
        source = "AUTO_REVIEW.md"
    verdict = canonical_verdict(verdict_text)
    stop = _stop(score, verdict, None, "", verdict_text=verdict_text)

    # Trend: AUTO_REVIEW.md's current run, else rounds[], else score_trajectory.
    points = _points_from_runs(runs)
    if not points and rounds:
        for index, r in enumerate(rounds, 1):
            if isinstance(r, dict):
                points.append(
                    TrendPoint(
                        f"round {as_int(r.get('round')) or index}",
                        as_number(r.get("score")),
                        canonical_verdict(r.get("verdict")),
                    )
                )
    if not points and isinstance(st.get("score_trajectory"), list):
        verdicts = as_list(st.get("verdict_trajectory"))
        for index, value in enumerate(st["score_trajectory"], 1):
            v = verdicts[index - 1] if index - 1 < len(verdicts) else None
            points.append(TrendPoint(f"round {index}", as_number(value), canonical_verdict(v)))
    if not points and score is not None:
        points = [TrendPoint(f"round {used or 1}", score, verdict)]

    budget = Budget(used, limit, "rounds")
    stamp = parse_time(st.get("timestamp"))
    stale = bool(stamp and now - stamp > STALE_AFTER)
    if status == "completed":
        route = "done"
    elif budget.spent:
        route = "terminate"
    else:
        route = f"round {(used or 0) + 1}"
    waiting = False
    if status == "completed":
        reason = f"completed: score {fmt_number(score)}, verdict {verdict or 'unknown'}"
    elif stop.met is not True and budget.spent:
        waiting = True
        reason = f"STOP rule not met and the round budget is spent ({used}/{limit}): a person decides"
    elif stop.met:
        reason = f"positive: score {fmt_number(score)}, verdict {verdict}"
    elif stop.met is None:
        reason = "STOP rule cannot be evaluated: " + stop.reasons[-1]
    elif state is None and not runs:
        reason = "no review state or log could be read"
    else:
        reason = "STOP rule not met; " + budget.describe()
    if stale and status != "completed":
        reason += f"; state older than 24 h ({st.get('timestamp')}): a resume restarts the loop"
    details = {
        "lineage": "aris",
        "status": status,
        "round_key": round_key,
        "last_score": score,
        "last_verdict": verdict_text,
        "canonical_verdict": verdict,
        "target_score": TARGET_SCORE,
        "score_source": source,
        "thread_id": st.get("threadId", st.get("thread_id")),
        "difficulty": st.get("difficulty"),
        # The run's own threshold, when its state records one (kept as written, not evaluated).
        "own_threshold": st.get("positive_threshold_effective"),
        "own_threshold_met": st.get("positive_threshold_met"),
        "pending_experiments": as_list(st.get("pending_experiments")),
        "timestamp": st.get("timestamp"),
        "stale": stale,
        "auto_review_runs": _runs_summary(runs),
        "reviewer_memory": memory,
    }
    return LoopState(
        kind="aris",
        name=_name(directory, root),
        path=rel(directory, root),
        budget=budget,
        stop_rule=StopRule(
            stop.met,
            stop.reasons + ((f"{used}/{limit} rounds",) if used is not None else ()),
            stop.outcome or ("rounds_exhausted" if budget.spent else None),
        ),
        route=route,
        waiting_for_human=waiting,
        reason=reason,
        parse_failures=tuple(failures),
        raw=state,
        status=status or "unknown",
        trend_label="review score /10",
        points=tuple(points),
        details=details,
    )
