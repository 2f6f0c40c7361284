"""AUTO_REVIEW.md and REVIEWER_MEMORY.md, the log and the memory both lineages keep: its runs,
their sections (score, verdict, the budget lines) and what a loop state takes of them."""

from __future__ import annotations

import re
from typing import Any

from scars.core.loops.base import (
    TrendPoint,
    as_number,
    score_out_of_ten,
)
from scars.core.loops.review.verdicts import canonical_verdict, verdict_parts

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
FENCE = re.compile(r"^\s*(```|~~~)")
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
        if FENCE.match(line):
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


def points_from_runs(runs: list[dict[str, Any]]) -> list[TrendPoint]:
    if not runs:
        return []
    points = []
    for section in runs[-1]["sections"]:
        if section["score"] is None and section["verdict"] is None:
            continue  # a bootstrap section (e.g. "Round 0: Bootstrap")
        points.append(TrendPoint(f"{section['kind']} {section['number']}", section["score"], section["verdict"]))
    return points


def last_from_runs(runs: list[dict[str, Any]]) -> tuple[float | None, str | None, str | None]:
    for run in reversed(runs):
        for section in reversed(run["sections"]):
            if section["score"] is not None or section["verdict"] is not None:
                return section["score"], section["verdict_text"], section["verdict"]
    return None, None, None


def runs_summary(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
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
