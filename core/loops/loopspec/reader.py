"""loop-spec (aztechead/loop-spec) ITERATE state: formats.md §2.

Reads ``.loop-spec/features/<slug>/feature.json`` (the ``iterate`` block, with the
documented defaults when absent), the judge completion message ``.iterate-judge.out``,
``SPEC.md`` / ``VERIFICATION.md`` for the converged floor, ``ITERATION.md`` and the
repository's ``.loop-spec/BACKLOG.md``; evaluates the limit gate, the record routes, the
floor veto and the harvest, as ``lib/iterate-judged.sh`` does.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from scars.core.loops.base import (
    Budget,
    LoopState,
    StopRule,
    TrendPoint,
    as_int,
    as_number,
    fmt_number,
    read_json,
    read_text,
    rel,
)
from scars.core.loops.loopspec import versions
from scars.core.model import Problem
from scars.core.records import record
from scars.core.storage import safe_read
from scars.core.storage.durable import read_upto
from scars.core.storage.paths import is_inside
from scars.core.text import join_clauses
from scars.core.values import as_dict

DEFAULT_MAX_ITERATIONS = 10
CRITERION_CONVERGED = 8.0  # the judge converges when every criterion scores at least this (1–10)
MAX_ITERATIONS_RANGE = (1, 100)
REQUIRED_VERDICT_KEYS = ("converged", "deterministic_gate_passed", "summary")
GAP_ROUTES = ("execute", "plan", "spec", "verify")
ROUTES = ("judge", "confirmation", "harvest", "deliver", "execute", "plan", "spec", "verify", "escalate")
# Phases in which a route recorded by ITERATE is still the pending decision.
_ITERATE_PHASES = ("iterate", None)
UNATTENDED_STYLES = ("auto", "review-only")
SPEC_GATE_OPTIONS = ("Re-open SPEC/DISCUSS", "Ship as-is", "Stop - hand back")
# The warnings[] prefixes loop-spec's own scripts recognise (iterate harvest; lib/cycle-result.sh
# publishes `converged: false` for a run whose warnings carry either).
BUDGET_SPENT_PREFIX = "iterate-budget-spent:"
TERMINAL_PREFIX = "iterate-terminal:"
GAP_WARNING_PREFIXES = (BUDGET_SPENT_PREFIX, TERMINAL_PREFIX)

# The graph engine's files in the feature directory (lib/graph/engine.py): the pause record of a
# human node, and the append-only checkpoint ledger whose last node's successor is where a resume
# starts. SPEC_GATE_NODE is the SPEC gate's pause in graph/cycle.graph.json.
GRAPH_PAUSE = "graph-pause.json"
GRAPH_LEDGER = "graph-checkpoints.jsonl"
SPEC_GATE_NODE = "human.iterate-spec-approval"
ITERATE_NODE = "iterate"
ESCALATE_GATE = "escalate"  # the escalate route's answers in the ledger (no graph node: the run ends)
LEDGER_TAIL_BYTES = 64 * 1024


def gap_warning(desc: Any, fix: Any) -> str:
    """A gap as harvest writes it into warnings[] (``iterate-budget-spent: <desc> — fix first: <fix>``)."""
    return f"{BUDGET_SPENT_PREFIX} {desc} — fix first: {fix}"


def backlog_text(desc: Any, fix: Any) -> str:
    """A gap's BACKLOG.md text as harvest adds it (``<desc> — fix first: <fix>``, id = gap-id(fix))."""
    return f"{desc} — fix first: {fix}"


def gap_parts(gap: dict[str, Any] | None) -> tuple[str, str]:
    """(description, fix first) of a gap with harvest's defaults (``gap``)."""
    if not gap:
        return "gap", "gap"
    desc = str(gap.get("description") or "gap")
    fix = str(gap.get("fix_first") or gap.get("description") or "gap")
    return desc, fix


def read_graph_state(feature_dir: Path, root: Path) -> dict[str, Any]:
    """The engine's pause record and the last record of its checkpoint ledger (read only).

    ``pause``: the paused node (None when no pause record); ``last``: the ledger's last parseable
    record (the engine's own rule: a torn last line is skipped), None when there is none.
    """
    out: dict[str, Any] = {"pause": None, "last": None, "ledger": False}
    pause_path = feature_dir / GRAPH_PAUSE
    if pause_path.is_file():
        data, failure = read_json(pause_path, root)
        if failure is None and isinstance(data, dict) and isinstance(data.get("node"), str):
            out["pause"] = data["node"]
    ledger = feature_dir / GRAPH_LEDGER
    if ledger.is_file():
        out["ledger"] = True
        tail = ""
        try:  # its tail only, read by the read rule (a ledger linked out of the repository is never read)
            fd = safe_read.open_file(ledger, root=root, what=GRAPH_LEDGER)
        except (OSError, safe_read.Unreadable):
            fd = -1
        if fd >= 0:
            try:
                size = os.fstat(fd).st_size
                os.lseek(fd, max(0, size - LEDGER_TAIL_BYTES), os.SEEK_SET)
                tail = read_upto(fd, LEDGER_TAIL_BYTES).decode("utf-8", errors="replace")
            except OSError:
                tail = ""
            finally:
                os.close(fd)
        for line in reversed(tail.splitlines()):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                out["last"] = record
                break
    return out


# --------------------------------------------------------------------------- judge verdict

_FENCED_JSON = re.compile(r"```json\s*(\{.*?\})\s*```", re.DOTALL)


@record(slots=True)
class Extracted:
    """A judge verdict extracted from a completion message, or why it is malformed."""

    verdict: dict[str, Any] | None
    problem: str | None = None
    source: str | None = None  # "fenced" | "braces"

    @property
    def ok(self) -> bool:
        return self.verdict is not None


def extract_verdict(message: str) -> Extracted:
    """Extract the judge's verdict JSON (formats.md §2.3).

    The first fenced ```json {…}``` block (non-greedy), else the greedy span from the first
    ``{`` to the last ``}``; it must parse as a JSON object holding ``converged``,
    ``deterministic_gate_passed`` and ``summary``. A malformed verdict is never converged.
    """
    if not isinstance(message, str):
        return Extracted(None, "completion message is not text")
    match = _FENCED_JSON.search(message)
    if match:
        candidate, source = match.group(1), "fenced"
    else:
        start, end = message.find("{"), message.rfind("}")
        if start < 0 or end <= start:
            return Extracted(None, "no JSON object in the completion message")
        candidate, source = message[start : end + 1], "braces"
    try:
        verdict = json.loads(candidate)
    except (json.JSONDecodeError, RecursionError) as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        return Extracted(None, f"verdict is not valid JSON: {reason}", source)
    if not isinstance(verdict, dict):
        return Extracted(None, "verdict is not a JSON object", source)
    missing = [k for k in REQUIRED_VERDICT_KEYS if k not in verdict]
    if missing:
        return Extracted(None, "verdict lacks required key(s): " + ", ".join(missing), source)
    return Extracted(verdict, None, source)


def verdict_converged(verdict: Any) -> bool:
    """Only a well-formed verdict with ``converged: true`` is converged."""
    return isinstance(verdict, dict) and verdict.get("converged") is True


def verdict_scores(verdict: Any) -> list[float]:
    if not isinstance(verdict, dict) or not isinstance(verdict.get("scores"), list):
        return []
    out = []
    for entry in verdict["scores"]:
        value = as_number(entry.get("score")) if isinstance(entry, dict) else None
        if value is not None:
            out.append(value)
    return out


# --------------------------------------------------------------------------- limit / record


def iterate_block(feature: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The ``iterate`` block with defaults filled in, and the problems found in it."""
    problems: list[str] = []
    block = feature.get("iterate")
    if block is None:
        block = {}
    elif not isinstance(block, dict):
        problems.append("iterate is not an object; using the defaults")
        block = {}
    out = dict(block)
    max_it = as_int(block.get("maxIterations"))
    if "maxIterations" not in block:
        max_it = DEFAULT_MAX_ITERATIONS
    elif max_it is None or not MAX_ITERATIONS_RANGE[0] <= max_it <= MAX_ITERATIONS_RANGE[1]:
        problems.append(
            f"iterate.maxIterations {block.get('maxIterations')!r} is not an integer in 1..100; "
            f"using {DEFAULT_MAX_ITERATIONS}"
        )
        max_it = DEFAULT_MAX_ITERATIONS
    used = as_int(block.get("used")) if "used" in block else 0
    if used is None or used < 0:
        problems.append(f"iterate.used {block.get('used')!r} is not a count; using 0")
        used = 0
    history = block.get("history")
    if history is None:
        history = []
    elif not isinstance(history, list):
        problems.append("iterate.history is not a list; ignored")
        history = []
    out.update(
        maxIterations=max_it,
        used=used,
        confirmationUsed=block.get("confirmationUsed") is True,
        lastVerdict=block.get("lastVerdict"),
        feedback=block.get("feedback"),
        history=history,
    )
    return out, problems


def recorded_gap(block: dict[str, Any]) -> dict[str, Any] | None:
    """The gap the re-entered phase fixes first, as recorded: ``iterate.feedback``, else the
    last verdict's ``gap`` (None when neither holds one; nothing is derived)."""
    gap = block.get("feedback")
    if not isinstance(gap, dict):
        last = block.get("lastVerdict")
        gap = last.get("gap") if isinstance(last, dict) else None
    return gap if isinstance(gap, dict) else None


def limit_route(used: int, max_iterations: int, confirmation_used: bool) -> str:
    """``iterate limit``: judge while rounds remain, one confirmation pass, then harvest."""
    if used < max_iterations:
        return "judge"
    if used > 0 and not confirmation_used:
        return "confirmation"
    return "harvest"


def _norm_fix(text: Any) -> str:
    return " ".join(str(text).lower().split()) if text is not None else ""


def default_gap(verdict: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "execute",
        "description": "goal not met",
        "fix_first": verdict.get("weakest") or verdict.get("summary"),
    }


def floor_veto(verdict: dict[str, Any], floor: list[str]) -> dict[str, Any]:
    """The verdict rewritten by a converged-floor veto (record step 4)."""
    first = floor[0]
    kind = "execute" if any("still FAIL" in line for line in floor) else "verify"
    vetoed = dict(verdict)
    vetoed["converged"] = False
    vetoed["gap"] = {"type": kind, "description": f"converged floor: {first}", "fix_first": first}
    return vetoed


def record_route(
    verdict: dict[str, Any],
    history: list[Any],
    *,
    floor: list[str] | None = None,
    confirmation: bool = False,
) -> tuple[str, dict[str, Any], dict[str, Any] | None]:
    """The route ``iterate record`` answers for ``verdict`` (steps 4–5).

    ``history`` is the iterate history *including* this verdict as its last entry;
    ``floor`` the FLOOR lines of the converged floor (empty or None = the floor held).
    Returns (route, the verdict as stored, the gap set as feedback or None).
    """
    if verdict_converged(verdict):
        if not floor:
            return "deliver", verdict, None
        verdict = floor_veto(verdict, floor)
    if confirmation:
        return "harvest", verdict, None
    gap = verdict.get("gap") if isinstance(verdict.get("gap"), dict) else None
    if gap is None:
        gap = default_gap(verdict)
    kind = gap.get("type")
    route = str(kind) if kind in GAP_ROUTES else "execute"
    previous = history[-2] if len(history) >= 2 and isinstance(history[-2], dict) else None
    previous_gap = previous.get("gap") if previous and isinstance(previous.get("gap"), dict) else None
    if (
        gap.get("needs_operator") is True
        or previous_gap is not None
        and _norm_fix(gap.get("fix_first"))
        and (_norm_fix(gap.get("fix_first")) == _norm_fix(previous_gap.get("fix_first")))
    ):
        route = "escalate"
    return route, verdict, gap


def harvest_warnings(last_verdict: Any, slug: str, backlog_entry_id: str | None) -> tuple[list[str], bool]:
    """The warnings ``iterate harvest`` writes, and whether the terminal rule fired."""
    gaps: list[Any] = []
    if isinstance(last_verdict, dict):
        gaps.append(last_verdict.get("gap"))
        if isinstance(last_verdict.get("remaining_gaps"), list):
            gaps.extend(last_verdict["remaining_gaps"])
    warnings: list[str] = []
    terminal = False
    for gap in gaps:
        if not isinstance(gap, dict):
            continue
        desc, fix = gap_parts(gap)
        if backlog_entry_id and gap_id(str(fix)) == backlog_entry_id:
            terminal = True
            warnings.append(f"{TERMINAL_PREFIX} {desc} — fix first: {fix}")
        else:
            warnings.append(gap_warning(desc, fix))
    if not warnings:
        warnings.append(f"{BUDGET_SPENT_PREFIX} final remediation was never re-judged against the original goal")
    return warnings, terminal


# --------------------------------------------------------------------------- converged floor


def good_enough_criteria(spec_text: str) -> int:
    """Checkbox lines inside the ``### Good Enough…`` section of SPEC.md (every version's count)."""
    return versions.good_enough_count(spec_text)


def converged_floor(
    spec_text: str | None,
    verification_text: str | None,
    verification_name: str = "VERIFICATION.md",
) -> tuple[int, list[str]]:
    """4.x's ``lib/converged-floor.sh`` (the oracle, 4.3.0): (exit code, FLOOR lines, worded as it
    prints them; ``verification_name`` is the path they name). 0 = the floor holds. Fail-open on
    the SPEC side: no SPEC or no Good Enough criteria skips the floor. 6.x's is
    ``loopspec.versions.converged_floor_v6``."""
    if spec_text is None:
        return 0, []
    criteria = good_enough_criteria(spec_text)
    if criteria == 0:
        return 0, []
    if verification_text is None:
        return 1, [
            f"FLOOR VERIFICATION.md is not readable ({verification_name}) — a converged verdict needs the "
            "verification record"
        ]
    lines: list[str] = []
    for n in range(1, criteria + 1):
        ge = f"GE-{n:03d}"
        if not versions.has_grounding_row(verification_text, ge):
            lines.append(
                f"FLOOR {ge} has no grounding row in {verification_name} — unverified Good Enough scope cannot converge"
            )
    for line in versions.awk_lines(verification_text):
        if line.startswith("|"):
            fields = line.split("|")
            if len(fields) > 3 and re.sub(r"^[ \t]+|[ \t]+$", "", fields[3]) == "FAIL":
                lines.append(f"FLOOR acceptance table row still FAIL: {line}")
    return (1 if lines else 0), lines


# --------------------------------------------------------------------------- backlog

BACKLOG_TYPES = versions.backlog_types(versions.LINE_6)
_BACKLOG_LINE = re.compile(
    r"^- \[(?P<mark>[ xX])\] \((?P<date>\d{4}-\d{2}-\d{2}) (?P<slug>\S+) (?P<type>\S+?)"
    r"(?: id=(?P<id>[0-9a-f]{8}))?\) (?P<text>.*)$"
)


def gap_id(text: str) -> str:
    """``backlog.sh gap-id``: lowercase, runs outside [a-z0-9] → one space, strip, sha256[:8]."""
    normalised = re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()
    return hashlib.sha256(normalised.encode("utf-8")).hexdigest()[:8]


def _crc_table() -> tuple[int, ...]:
    table = []
    for i in range(256):
        c = i << 24
        for _ in range(8):
            c = ((c << 1) ^ 0x04C11DB7) if c & 0x80000000 else (c << 1)
        table.append(c & 0xFFFFFFFF)
    return tuple(table)


_CKSUM_TABLE = _crc_table()


def posix_cksum(data: bytes) -> str:
    """POSIX ``cksum`` of ``data`` as ``<crc>-<size>`` (how lib/graph/checkpoint.sh stamps a
    ledger record's ``stateHash``): CRC-32 (0x04C11DB7, unreflected) over the bytes and the length."""
    crc = 0
    for byte in data:
        crc = ((crc << 8) & 0xFFFFFFFF) ^ _CKSUM_TABLE[((crc >> 24) ^ byte) & 0xFF]
    n = len(data)
    while n:
        crc = ((crc << 8) & 0xFFFFFFFF) ^ _CKSUM_TABLE[((crc >> 24) ^ (n & 0xFF)) & 0xFF]
        n >>= 8
    return f"{(~crc) & 0xFFFFFFFF}-{len(data)}"


@record(slots=True)
class BacklogEntry:
    line: int
    done: bool
    date: str
    slug: str
    type: str
    id: str | None
    text: str
    terminal: bool
    terminal_note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "done": self.done,
            "date": self.date,
            "slug": self.slug,
            "type": self.type,
            "id": self.id,
            "text": self.text,
            "terminal": self.terminal,
            "terminal_note": self.terminal_note,
        }


def parse_backlog(
    text: str, file: str = ".loop-spec/BACKLOG.md", types: tuple[str, ...] = BACKLOG_TYPES
) -> tuple[list[BacklogEntry], list[Problem]]:
    """BACKLOG.md's entries. ``types``: the ones the feature's loop-spec defines
    (``loopspec.versions.backlog_types``); any other is kept and noted (backlog.sh takes any)."""
    entries: list[BacklogEntry] = []
    failures: list[Problem] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.startswith("- ["):
            continue
        m = _BACKLOG_LINE.match(line.rstrip())
        if not m:
            failures.append(Problem(file, number, "backlog entry not in the form `- [ ] (date slug type[ id=…]) text`"))
            continue
        body = m.group("text")
        terminal = " -- TERMINAL: " in body
        note = None
        if terminal:
            body, note = body.split(" -- TERMINAL: ", 1)
        if m.group("type") not in types:
            failures.append(
                Problem(
                    file, number, f"backlog type {m.group('type')!r} is not one loop-spec defines (kept)", "warning"
                )
            )
        entries.append(
            BacklogEntry(
                number,
                m.group("mark") != " ",
                m.group("date"),
                m.group("slug"),
                m.group("type"),
                m.group("id"),
                body,
                terminal,
                note,
            )
        )
    return entries, failures


# --------------------------------------------------------------------------- ITERATION.md

_ITER_HEADING = re.compile(r"^##\s+Iteration\s+(\d+)\b(.*)$")
_SCORE_ROW = re.compile(r"^\s*\|(?P<criterion>[^|]+)\|\s*(?P<score>\d+(?:\.\d+)?)\s*\|")


def parse_iteration_md(text: str) -> list[dict[str, Any]]:
    """Sections ``## Iteration N — …`` of ITERATION.md (our convention, formats.md §2.7)."""
    sections: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        m = _ITER_HEADING.match(line)
        if m:
            current = {
                "iteration": int(m.group(1)),
                "title": m.group(2).strip(" —-"),
                "line": number,
                "converged": None,
                "scores": [],
                "route": None,
            }
            sections.append(current)
            continue
        if current is None:
            continue
        if line.startswith("## "):
            current = None
            continue
        stripped = line.strip().lstrip("-* ").strip()
        low = stripped.lower()
        if low.startswith("converged:"):
            current["converged"] = low.split(":", 1)[1].strip().startswith("yes")
        elif low.startswith("route:"):
            current["route"] = stripped.split(":", 1)[1].strip() or None
        else:
            row = _SCORE_ROW.match(line)
            if row and row.group("criterion").strip().lower() != "criterion":
                current["scores"].append(float(row.group("score")))
    return sections


# --------------------------------------------------------------------------- reading a feature


def _artifact(
    feature: dict[str, Any],
    key: str,
    default: str,
    project: Path,
    failures: list[Problem],
    root: Path,
    feature_file: str,
) -> Path | None:
    artifacts = as_dict(feature.get("artifacts"))
    value = artifacts.get(key)
    text = value if isinstance(value, str) and value.strip() else default
    candidate = Path(text)
    if candidate.is_absolute() or not is_inside(project / candidate, root):
        failures.append(
            Problem(feature_file, None, f"artifacts.{key} {text!r} points outside the repository; not read")
        )
        return None
    return project / candidate


def project_of(feature_json: Path) -> Path:
    """The project of ``<project>/.loop-spec/features/<slug>/feature.json``; a feature.json
    elsewhere is its own directory's."""
    feature_dir = feature_json.parent
    if feature_dir.parent.name == "features" and feature_dir.parent.parent.name == ".loop-spec":
        return feature_dir.parent.parent.parent
    return feature_dir


def read_feature(feature_json: Path, root: Path | None = None) -> LoopState:
    """One loop-spec feature as a :class:`LoopState`. Never raises on bad input."""
    feature_json = Path(feature_json)
    feature_dir = feature_json.parent
    project = project_of(feature_json)
    root = Path(root) if root is not None else project
    name_rel = rel(feature_json, root)
    failures: list[Problem] = []

    data, failure = read_json(feature_json, root)
    if failure is None and not isinstance(data, dict):
        failure = Problem(name_rel, None, "feature.json is not a JSON object")
    if failure is not None:
        return LoopState(
            kind="loop-spec",
            name=feature_dir.name,
            path=name_rel,
            budget=Budget(None, None, "judge passes"),
            stop_rule=StopRule(None, ("feature.json unusable",)),
            route=None,
            waiting_for_human=False,
            reason=f"feature.json unusable: {failure.message}",
            parse_failures=(failure,),
        )

    slug = data.get("slug") if isinstance(data.get("slug"), str) and data.get("slug") else feature_dir.name
    block, problems = iterate_block(data)
    failures.extend(Problem(name_rel, None, p) for p in problems)
    used, max_it, conf_used = block["used"], block["maxIterations"], block["confirmationUsed"]
    history = block["history"]
    last = block["lastVerdict"] if isinstance(block["lastVerdict"], dict) else None
    if block["lastVerdict"] is not None and last is None:
        failures.append(Problem(name_rel, None, "iterate.lastVerdict is not an object; ignored"))
    if last is not None:
        missing = [k for k in REQUIRED_VERDICT_KEYS if k not in last]
        if missing:
            failures.append(
                Problem(
                    name_rel, None, "iterate.lastVerdict lacks " + ", ".join(missing) + " (malformed: never converged)"
                )
            )
    phase = data.get("currentPhase") if isinstance(data.get("currentPhase"), str) else None
    exec_style = data.get("execStyle") if isinstance(data.get("execStyle"), str) else None
    autonomous = data.get("autonomous") is True
    warnings = (
        [w for w in data.get("warnings", []) if isinstance(w, str)] if isinstance(data.get("warnings"), list) else []
    )
    harvest_done = [w for w in warnings if w.startswith(GAP_WARNING_PREFIXES)]
    lim = limit_route(used, max_it, conf_used)

    # Documents: SPEC.md / VERIFICATION.md for the floor, ITERATION.md for the record.
    docs_default = f"docs/loop-spec/features/{slug}"
    # Artifacts must stay inside the repository (the directory holding `.loop-spec/`), also
    # when only a part of it was scanned.
    boundary = project if is_inside(root, project) else root
    spec_path = _artifact(data, "spec", f"{docs_default}/SPEC.md", project, failures, boundary, name_rel)
    verif_path = _artifact(
        data, "verification", f"{docs_default}/VERIFICATION.md", project, failures, boundary, name_rel
    )
    iter_path = _artifact(data, "iteration", f"{docs_default}/ITERATION.md", project, failures, boundary, name_rel)

    def optional_text(path: Path | None) -> str | None:
        if path is None or not (path.exists() or path.is_symlink()):
            return None
        text, fail = read_text(path, boundary)
        if fail is not None:
            failures.append(fail)
        return text

    # Which loop-spec wrote the feature decides the floor (and says so): 4.x fails open on SPEC;
    # 6.x's `iterate record` fails closed and reads the default docs path, never artifacts.*.
    result_path = feature_dir / "result.json"
    result_data = read_json(result_path, root)[0] if result_path.is_file() else None
    assumed = versions.feature_line(data, result_data)
    floor_lines: list[str] = []
    floor_checked = False
    if verdict_converged(last):
        if assumed.line == versions.LINE_6:
            docs = versions.docs_dir(project, slug)
            spec_text = optional_text(docs / "SPEC.md")
            verif_text = optional_text(docs / "VERIFICATION.md")
            _, floor_lines = versions.converged_floor_v6(
                spec_text, verif_text, rel(docs / "SPEC.md", root), rel(docs / "VERIFICATION.md", root)
            )
            floor_checked = True
        else:
            spec_text = optional_text(spec_path)
            verif_text = optional_text(verif_path)
            _, floor_lines = converged_floor(spec_text, verif_text, rel(verif_path, root) if verif_path else "")
            floor_checked = spec_text is not None

    # The judge output on disk: a malformed one is listed (never converged).
    judge_out = feature_dir / ".iterate-judge.out"
    judge_problem = None
    if judge_out.exists() or judge_out.is_symlink():
        text = optional_text(judge_out)
        if text is not None:
            extracted = extract_verdict(text)
            if not extracted.ok:
                judge_problem = extracted.problem
                failures.append(Problem(rel(judge_out, root), None, f"judge output malformed: {extracted.problem}"))

    # Route: the recorded one, else derived from the last verdict, else the limit gate.
    recorded = block.get("lastRoute") if block.get("lastRoute") in ROUTES else None
    if block.get("lastRoute") is not None and recorded is None:
        failures.append(
            Problem(name_rel, None, f"iterate.lastRoute {block.get('lastRoute')!r} is not a known route; ignored")
        )
    stored_verdict = last
    gap = last.get("gap") if last and isinstance(last.get("gap"), dict) else None
    if recorded is not None:
        route = recorded
        if route == "deliver" and last is not None and verdict_converged(last) and floor_lines:
            # The floor no longer holds on the documents as they are now.
            route, stored_verdict, gap = record_route(last, history or [last], floor=floor_lines)
    elif last is not None:
        route, stored_verdict, gap = record_route(last, history or [last], floor=floor_lines)
    else:
        route = lim
    if harvest_done and route not in ("spec", "escalate"):
        route = "deliver"

    # Stop rule.
    reasons: list[str] = []
    if verdict_converged(stored_verdict):
        met, outcome = True, "converged"
        reasons.append(
            f"judge: converged (deterministic gate passed, every criterion ≥ {fmt_number(CRITERION_CONVERGED)})"
        )
        reasons.append("converged floor held" if floor_checked else "converged floor: no Good-Enough criteria to check")
    elif harvest_done and lim == "judge":
        # Gaps in warnings[] before the limit: shipped as-is at a gate (never converged).
        met, outcome = True, "delivered_with_gaps"
        reasons.append(
            f"delivered with {len(harvest_done)} gap(s) in warnings[] and the backlog before the limit "
            f"({used}/{max_it}): not converged"
        )
    elif harvest_done:
        met, outcome = True, "budget_spent"
        reasons.append(f"iteration limit spent ({used}/{max_it}); gaps harvested to warnings and the backlog")
        if any(w.startswith(TERMINAL_PREFIX) for w in harvest_done):
            reasons.append("terminal: a second limit spent on the same gap (approach wrong)")
    elif lim == "harvest" and used > 0:
        met, outcome = True, "budget_spent"
        reasons.append(f"iteration limit spent ({used}/{max_it}) and the confirmation pass used; next: harvest")
    else:
        met, outcome = False, None
        if stored_verdict is None:
            reasons.append("not judged yet")
        else:
            reasons.append("not converged")
            if floor_lines and verdict_converged(last):
                reasons.append(f"converged floor vetoed: {floor_lines[0]}")
        if gap:
            reasons.append(
                f"gap ({gap.get('type', '?')}): {gap.get('description') or gap.get('fix_first') or 'unspecified'}"
            )
        if lim == "confirmation":
            reasons.append(f"limit reached ({used}/{max_it}); one confirmation pass left")
        else:
            reasons.append(f"{max(max_it - used, 0)} of {max_it} judge passes left")
    if judge_problem:
        reasons.append(f"last judge output malformed ({judge_problem}): re-dispatch once, then escalate")

    # The graph engine's state: a pause at the SPEC gate, or a gate answer recorded in its ledger.
    graph = read_graph_state(feature_dir, root)
    last_record = graph["last"] or {}
    answered = str(last_record.get("edge") or "")
    handed_back = (
        graph["pause"] is None
        and last_record.get("node") == ITERATE_NODE
        and answered.startswith((f"{SPEC_GATE_NODE}:stop", f"{ESCALATE_GATE}:stop"))
    )
    if route == "harvest" or (lim == "harvest" and used > 0 and not harvest_done):
        preview, preview_terminal = harvest_warnings(
            last, slug, data.get("backlogEntryId") if isinstance(data.get("backlogEntryId"), str) else None
        )
    else:
        preview, preview_terminal = [], False
    if preview:
        reasons.append(
            "harvest would write: "
            + join_clauses(preview)
            + (" (terminal: the approach is wrong)" if preview_terminal else "")
        )

    # Waiting for a person.
    waiting = False
    reason = ""
    if handed_back and route in ("spec", "escalate"):
        reason = f"handed back ({answered}); resuming the cycle routes ITERATE's verdict again and asks again"
    elif route == "escalate" and phase in _ITERATE_PHASES:
        waiting = True
        fix = (gap or {}).get("fix_first") or (gap or {}).get("description") or "see the last verdict"
        why = (
            "the gap needs an operator"
            if (gap or {}).get("needs_operator") is True
            else "the same fix_first survived a remediation round"
        )
        reason = f"escalated: {why}; fix first: {fix}"
    elif route == "spec" and phase in _ITERATE_PHASES:
        desc = (gap or {}).get("description") or "SPEC-level gap"
        if exec_style in UNATTENDED_STYLES or autonomous:
            reason = f"SPEC-level gap ({desc}); unattended run rewinds to DISCUSS without asking"
        else:
            waiting = True
            reason = f"SPEC-level gap: {desc} — Re-open SPEC/DISCUSS, Ship as-is, or Stop?"
    elif met:
        reason = join_clauses(reasons[:1])
    elif stored_verdict is None:
        reason = f"phase {phase or 'unknown'}; not judged yet (the limit gate answers {lim}, {used}/{max_it} used)"
    else:
        reason = f"not converged; next: {route}"

    # Trend: mean judge score per pass (ITERATION.md when there is no history).
    points: list[TrendPoint] = []
    for index, entry in enumerate(history, 1):
        if not isinstance(entry, dict):
            continue
        scores = verdict_scores(entry)
        label = f"iteration {as_int(entry.get('iteration')) or index}"
        note: str | None = (
            "converged"
            if verdict_converged(entry)
            else (f"gap: {entry['gap'].get('type')}" if isinstance(entry.get("gap"), dict) else "not converged")
        )
        points.append(TrendPoint(label, sum(scores) / len(scores) if scores else None, note))
    iteration_sections: list[dict[str, Any]] = []
    iter_text = optional_text(iter_path)
    if iter_text is not None:
        iteration_sections = parse_iteration_md(iter_text)
        if not points:
            for section in iteration_sections:
                scores = section["scores"]
                note = {True: "converged", False: "not converged", None: None}[section["converged"]]
                points.append(
                    TrendPoint(f"iteration {section['iteration']}", sum(scores) / len(scores) if scores else None, note)
                )

    # The repository's backlog entries for this feature.
    backlog: list[dict[str, Any]] = []
    backlog_path = project / ".loop-spec" / "BACKLOG.md"
    if backlog_path.exists() or backlog_path.is_symlink():
        text = optional_text(backlog_path)
        if text is not None:
            entries, bfails = parse_backlog(text, rel(backlog_path, root), versions.backlog_types(assumed.line))
            failures.extend(bfails)
            backlog = [e.to_dict() for e in entries if e.slug == slug]

    reasons.append(assumed.describe())
    details = {
        "loop_spec_version": assumed.to_dict(),
        "slug": slug,
        "feature_title": data.get("feature_title"),
        "current_phase": phase,
        "exec_style": exec_style,
        "autonomous": autonomous,
        "confirmation_used": conf_used,
        "limit_route": lim,
        "last_route": block.get("lastRoute"),
        "converged": verdict_converged(stored_verdict),
        "criterion_converged": CRITERION_CONVERGED,
        "gap": gap,
        "feedback": block.get("feedback"),
        "recorded_gap": recorded_gap(block),
        "judge_summary": last.get("summary") if last is not None else None,
        "floor": floor_lines,
        "warnings": warnings,
        "pending_remediation_tasks": len(data["pendingRemediationTasks"])
        if isinstance(data.get("pendingRemediationTasks"), list)
        else 0,
        "backlog": backlog,
        "iteration_md": iteration_sections,
        "gate_options": list(SPEC_GATE_OPTIONS) if route == "spec" else [],
        "graph_pause": graph["pause"],
        "graph_last_checkpoint": graph["last"],
        "graph_ledger": graph["ledger"],
        "handed_back": handed_back,
        "harvest_preview": preview,
        "harvest_terminal": preview_terminal,
        "backlog_entry_id": data.get("backlogEntryId") if isinstance(data.get("backlogEntryId"), str) else None,
        # The Goal and Boundary freeze of DISCUSS: a reopen at the SPEC gate retires the record into
        # specApprovalHistory and PLAN freezes them again; an unattended rewind keeps the freeze.
        "spec_approval": data.get("specApproval"),
        "spec_approval_history": len(data["specApprovalHistory"])
        if isinstance(data.get("specApprovalHistory"), list)
        else 0,
    }
    status = (
        "converged"
        if outcome == "converged"
        else "limit spent"
        if outcome == "budget_spent"
        else "delivered with gaps"
        if outcome == "delivered_with_gaps"
        else "handed back"
        if handed_back and route in ("spec", "escalate")
        else (phase or "unknown")
    )
    return LoopState(
        kind="loop-spec",
        name=slug,
        path=name_rel,
        budget=Budget(used, max_it, "judge passes"),
        stop_rule=StopRule(met, tuple(reasons), outcome),
        route=route,
        waiting_for_human=waiting,
        reason=reason,
        parse_failures=tuple(failures),
        raw=data,
        status=status,
        trend_label="judge score (mean of criteria, 1–10)",
        points=tuple(points),
        details=details,
    )
