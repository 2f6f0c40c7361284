"""`scars log verify`: check auto-decisions.md and iteration-log.yaml against each other,
against the scar reports, against scars' own journal and against the gate catalog.

Outcome (formats.md §1.6, log-level states):

* ``failure`` — something is missing, malformed, generic or contradicts another record: an
  entry with problems (missing field, bad enum, fields out of order, a generic answer such as
  "approved" / "looks good" / "ok" / "continue" alone), numbering that repeats or goes back,
  an era-B accept without re-review signal, owner or rationale or with a placeholder or generic
  one (the rule of `scars decide`: ``scars.core.text.text_problem``), a round without its required
  fields, a forced stop that names no safety-valve trigger, a round scars recorded that the
  log lacks or holds differently, an item scars decided that no report holds, in auto mode a
  round without its round-continuation (or safety-valve) entry (a round decided before the
  feature went auto is a note), a triage entry whose fix / accept / defer counts are not its
  round's, an entry that contradicts its round — its decision,
  or the choice its answer names ((A) / 繼續 / continue against a round that stopped, (B) /
  停止 / stop against one that continued), journal or not —, a round of a budget-era log
  without its Rule-3 fields (``budget_spent``, ``evidence_gained``, ``residual_risk``; an empty
  list says none), or an iteration entry whose gate-id is a gate of
  another loop.
* ``unknown`` — nothing contradicts, but something cannot be decided: no log at all, a
  hand-written triage description the one matcher (``scars.core.samsara.matching``) ties to no
  item confidently (weak, ambiguous or none), entries that cannot be matched to rounds.
  Unknown is never success. A description matched confidently (exact, normalised, similar) is
  checked: a consistent hand-written log verifies as success.
* ``success`` — neither.

Legacy accepts (``expiry_date`` + ``rationale``, era A) are tolerated on read only (seed 002):
one the committed iteration-log.yaml (HEAD's, from git's object store) already holds is a note,
not a failure, as long as its rationale says something (blanking it is a failure); one that is new
since the last commit is a failure — a new accept needs re-review signal, owner and rationale.
Outside a git work tree there is no committed version: legacy accepts are judged by their
rationale alone. Notes too: iteration entries under a gate-id the catalog does not hold
(formats.md §1.6 leaves the id free: upstream may name other decision points, e.g. the final
transition) and entries under an id an earlier scars wrote (``iteration.round-continue``, read as ``round-continuation``).

Gate-ids are checked against ``scars.core.gatekit.catalog``: each decision point has one entry id,
and the entries of the round's decision point (``round-continuation``, ``safety-valve``) are
matched to the rounds by the round their workflow prompt names.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import yaml

from scars.core.clock import parse_time
from scars.core.formats.auto_decisions import parse_auto_decisions
from scars.core.formats.iteration_log import _plain_round, safe_load
from scars.core.git import GitUnavailable, git_toplevel, run_git
from scars.core.loops.registry import DECISION_POINTS, point_of
from scars.core.loops.samsara.catalog import FORMER_ENTRY_IDS, SEED_002_POINTS
from scars.core.model import Problem
from scars.core.provenance import Provenance
from scars.core.records import field, record
from scars.core.samsara.decisions import ACCEPT_REQUIRED, replay
from scars.core.samsara.feature import read_feature
from scars.core.samsara.rounds import RULE_3, counted_by_scars
from scars.core.storage import safe_read
from scars.core.storage.journal import journal_path, read_journal
from scars.core.text import normalize, text_problem

Level = Literal["failure", "unknown", "note"]  # the Problem severities a verification gives

ROUND_DECISIONS = ("continue", "stop", "forced_stop", "interrupted")
_TRIGGER = re.compile(
    r"max(imum)?[\s_-]*rounds?|stagnat|net[\s_-]*rot|(reviewer|re-?dispatch)[\s_-]*(retr|limit)", re.I
)
_ROUND_IN_PROMPT = re.compile(r"\bround\s+(\d+)\b", re.I)
# The decision points whose entry records a round's decision (matched to the rounds).
ROUND_POINTS = frozenset({SEED_002_POINTS["round continuation"], SEED_002_POINTS["safety valve"]})


def _json(p: Problem) -> dict[str, Any]:
    """A finding as `scars log verify --json` prints it (the README's documented keys)."""
    return {"level": p.severity, "file": p.file, "line": p.line, "message": p.message}


@record(frozen=False)
class Verification:
    feature: str
    findings: list[Problem] = field(default_factory=list)  # severity failure / unknown / note
    checked: dict[str, int] = field(default_factory=dict)

    @property
    def outcome(self) -> str:
        levels = {f.severity for f in self.findings}
        if "failure" in levels:
            return "failure"
        if "unknown" in levels:
            return "unknown"
        return "success"

    def add(self, level: Level, file: str, message: str, line: int | None = None) -> None:
        self.findings.append(Problem(file, line, message, level))

    def to_json(self) -> dict[str, Any]:
        return {
            "feature": self.feature,
            "outcome": self.outcome,
            "reasons": [_json(f) for f in self.findings if f.severity != "note"],
            "notes": [_json(f) for f in self.findings if f.severity == "note"],
            "checked": dict(self.checked),
        }


def verify_feature(feature_dir: str | Path) -> Verification:
    """Verify one feature directory (never raises on file content)."""

    path = Path(feature_dir)
    feature = read_feature(path)
    v = Verification(feature=feature.name)
    entries = _check_auto_decisions(path, feature, v)
    _check_iteration_log(path, feature, v, entries)
    _check_provenance(path, feature, v)
    return v


# The journal records that are a person's decision or gate answer (scars.core.samsara.decisions),
# a round's start and close included.
_DECIDED = ("decision", "sign_off", "blocked_fix", "undo", "round_start", "round_close", "auto_decision", "gate_answer")


def _check_provenance(path: Path, feature, v: Verification) -> None:
    """Human-in-the-loop mode: every decision and gate answer of the journal was a person's — its
    provenance (scars.core.provenance) says no agent session and a terminal, the app or a request
    answered there. An agent's is a failure; one without a terminal from a flag, a variable or
    an answers file is unknown (a script or an agent nobody detected may have given it); records
    from before provenance was kept are one note."""
    if feature.auto_mode:
        return
    jp = journal_path(path)
    if not jp.is_file():
        return
    shown = ".scars/journal.jsonl"
    legacy = 0
    for rec in read_journal(jp).records:
        if rec.get("type") not in _DECIDED or rec.get("source") == "scars watch check":  # a watch's reopen: scars'
            continue
        if "provenance" not in rec:
            legacy += 1
            continue
        prov = Provenance.from_record(rec.get("provenance"))
        what = f"journal record {rec.get('seq')} ({rec.get('type')}, by {rec.get('by', '?')})"
        if prov is None:
            v.add("failure", shown, f"{what}: its provenance is unreadable")
        elif prov.agent is not None:
            v.add(
                "failure", shown, f"{what}: a human-in-the-loop decision made in an agent session ({prov.describe()})"
            )
        elif not prov.by_a_person:
            v.add(
                "unknown",
                shown,
                f"{what}: a human-in-the-loop decision given without a terminal ({prov.describe()}): "
                "no sign that a person made it",
            )
    if legacy:
        v.add("note", shown, f"{legacy} decision record(s) from before provenance was kept: no provenance recorded")


# --------------------------------------------------------------------------- auto-decisions.md


def _check_auto_decisions(path: Path, feature, v: Verification) -> list:

    f = path / "auto-decisions.md"
    if not f.is_file():
        v.checked["auto_decision_entries"] = 0
        if feature.auto_mode and feature.iteration_log and feature.iteration_log.rounds:
            v.add("failure", f.name, "the feature runs in auto mode but auto-decisions.md is missing")
        return []
    try:
        text = safe_read.read_text(f, root=feature.repo_root or path, strict=False)
    except (safe_read.Unreadable, OSError) as exc:
        v.checked["auto_decision_entries"] = 0
        v.add("failure", f.name, f"auto-decisions.md cannot be read: {exc}")
        return []
    entries = parse_auto_decisions(text)
    v.checked["auto_decision_entries"] = len(entries)
    if not entries:
        v.add("unknown", f.name, "no `## Decision NNN - <stage>.<gate-id>` entry found")
        return []
    seen: dict[int, int] = {}
    prev = 0
    for e in entries:
        for problem in e.problems:
            v.add("failure", f.name, f"decision {e.number:03d}: {problem}", e.line)
        if e.number in seen:
            v.add(
                "failure",
                f.name,
                f"decision {e.number:03d} appears twice (lines {seen[e.number]} and {e.line})",
                e.line,
            )
        seen.setdefault(e.number, e.line)
        if e.number > prev + 1 and prev > 0:
            v.add("failure", f.name, f"numbering jumps from {prev:03d} to {e.number:03d} (an entry is missing)", e.line)
        prev = max(prev, e.number)
        for name in ("principles_used", "architecture_considerations", "consequences"):
            if e.fields.get(name) == []:
                level: Level = "failure" if name == "consequences" else "note"
                v.add(level, f.name, f"decision {e.number:03d}: {name} is empty", e.line)
        _check_gate_id(e, f.name, v)
    if entries and entries[0].number != 1:
        v.add("note", f.name, f"numbering starts at {entries[0].number:03d}")
    return entries


def entry_point(e) -> str | None:
    """The entry id of the samsara decision point entry ``e`` records (None: none scars knows)."""
    if e.heading_stage != "iteration":
        return None
    gid = FORMER_ENTRY_IDS.get(e.gate_id, e.gate_id)
    gate = point_of(gid)
    return gid if gate is not None and gate.loop == "samsara" else None


def _check_gate_id(e, file: str, v: Verification) -> None:
    """An iteration entry's gate-id against the catalog (each decision point has one id)."""
    if e.heading_stage != "iteration" or not e.gate_id:
        return
    where = f"decision {e.number:03d}"
    if e.gate_id in FORMER_ENTRY_IDS:
        v.add(
            "note",
            file,
            f"{where}: iteration.{e.gate_id} was written by an earlier scars; the decision point's id is "
            f"{FORMER_ENTRY_IDS[e.gate_id]}",
            e.line,
        )
        return
    gate = point_of(e.gate_id)
    if gate is None:
        ids = ", ".join(g for g, p in DECISION_POINTS.items() if p.loop == "samsara")
        v.add(
            "note",
            file,
            f"{where}: iteration.{e.gate_id} names no decision point scars knows ({ids}); it is not matched to a round",
            e.line,
        )
    elif gate.loop != "samsara":
        v.add("failure", file, f"{where}: iteration.{e.gate_id} is a {gate.loop} gate, not a samsara one", e.line)


# --------------------------------------------------------------------------- iteration-log.yaml


def _round_matches(feature, round_no: int) -> list:
    """The round's triaged descriptions, each matched by the one matcher (feature.log_matches)."""
    return [m for m in feature.log_matches if m.round == round_no]


def _examples(matches: list) -> str:
    return "; ".join(repr(str(m.description)[:50]) for m in matches[:3]) + (" …" if len(matches) > 3 else "")


def _journal_rounds(path: Path) -> tuple[dict[int, dict], set[str]]:

    jp = journal_path(path)
    if not jp.is_file():
        return {}, set()
    state = replay(read_journal(jp).records)
    rounds = {r["round"]: r.get("entry") or {} for r in state.closed_rounds if isinstance(r.get("round"), int)}
    return rounds, set(state.decisions)


def is_legacy_accept(a: Any) -> bool:
    """An era-A accept: ``expiry_date`` where the re-review signal or owner is missing (seed 002:
    tolerated on read, never written anew)."""
    return isinstance(a, dict) and "expiry_date" in a and not all(a.get(k) for k in ("re_review_signal", "owner"))


def legacy_keys(a: dict[str, Any]) -> tuple[tuple[str, str, str], tuple[str, str, str]]:
    """What identifies a legacy accept between two versions of a log: its normalised description,
    or its expiry date with its rationale — an entry with one of the two edited is the same entry
    (its rationale then judged by its own rule); with both changed it is another."""
    desc = normalize(str(a.get("description") or ""))
    return ("d", desc, ""), ("r", str(a.get("expiry_date")), normalize(str(a.get("rationale") or "")))


def is_committed_legacy(a: dict[str, Any], committed: set[tuple[str, str, str]]) -> bool:
    return any(k in committed for k in legacy_keys(a))


# git's words (LC_ALL=C) when HEAD has no such file, or there is no HEAD yet: every entry is new.
_NOT_COMMITTED = re.compile(
    r"does not exist in|exists on disk, but not in|invalid object name|not a valid object name", re.I
)


def committed_legacy_accepts(feature_dir: Path) -> set[tuple[str, str, str]] | None:
    """The legacy accepts of the committed iteration-log.yaml (HEAD's, read from git's object
    store, never the work tree): the ones the legacy form is tolerated for. An empty set when the
    log is not committed yet (everything in it is new); None when there is no git work tree (no
    committed version to compare with: legacy accepts are judged by their rationale alone)."""
    try:
        git_toplevel(feature_dir)
    except GitUnavailable:
        return None
    try:
        blob = run_git(feature_dir, "cat-file", "blob", "HEAD:./iteration-log.yaml")
    except GitUnavailable as exc:
        if _NOT_COMMITTED.search(str(exc)):
            return set()
        return None
    try:
        data = safe_load(blob)
    except (yaml.YAMLError, RecursionError):  # a committed log that does not parse: nothing in it is tolerated
        return set()
    rounds = data.get("rounds") if isinstance(data, dict) else None
    out: set[tuple[str, str, str]] = set()
    for r in rounds if isinstance(rounds, list) else ():
        triage = r.get("triage_result") if isinstance(r, dict) else None
        accepts = triage.get("accept") if isinstance(triage, dict) else None
        for a in accepts if isinstance(accepts, list) else ():
            if is_legacy_accept(a):
                out.update(legacy_keys(a))
    return out


def _check_iteration_log(path: Path, feature, v: Verification, entries: list) -> None:

    f = path / "iteration-log.yaml"
    j_rounds, j_items = _journal_rounds(path)
    log = feature.iteration_log
    if not f.is_file() or log is None:
        v.checked["rounds"] = 0
        if f.is_file():
            v.add("failure", f.name, "iteration-log.yaml cannot be read (see `scars status` for the parse failure)")
        elif j_rounds:
            v.add(
                "failure",
                f.name,
                f"the journal closed round(s) {', '.join(map(str, sorted(j_rounds)))} but iteration-log.yaml is missing (run `scars round flush`)",
            )
        elif not entries:
            v.add("unknown", f.name, "neither iteration-log.yaml nor auto-decisions.md exists: nothing to verify")
        return
    v.checked["rounds"] = len(log.rounds)
    committed = (
        committed_legacy_accepts(path) if any(is_legacy_accept(a) for r in log.rounds for a in r.accept) else None
    )
    for w in log.warnings:  # odd content of a log scars verifies: a failure here
        v.add("failure", w.file, w.message, w.line)
    unmatched = 0
    matched = 0
    accepts = 0
    numbers = [r.round for r in log.rounds]
    if numbers != list(range(1, len(numbers) + 1)):
        v.add("failure", f.name, f"rounds are numbered {numbers}, not 1..{len(numbers)}")
    for r in log.rounds:
        where = f"round {r.round}"
        if r.decision is not None and r.decision not in ROUND_DECISIONS:
            v.add("failure", f.name, f"{where}: decision {r.decision!r} is not one of {', '.join(ROUND_DECISIONS)}")
        if r.decision != "interrupted":
            if not (r.decision_reason or "").strip():
                v.add("failure", f.name, f"{where}: decision_reason is missing")
            if log.budget_present and r.budget_context is None:
                v.add("failure", f.name, f"{where}: budget_context is missing (Rule 2)")
            raw_keys = set(r.raw) if isinstance(r.raw, dict) else set()
            absent = [k for k in RULE_3 if k not in raw_keys]
            if log.budget_present and absent:
                v.add(
                    "failure",
                    f.name,
                    f"{where}: {', '.join(absent)} missing (Rule 3: a round records what it spent, what it "
                    "learned and the risk left; an empty list says none)",
                )
            not_given = r.raw.get("rule3_not_given") if isinstance(r.raw, dict) else None
            if isinstance(not_given, list) and not_given:
                v.add(
                    "note",
                    f.name,
                    f"{where}: {', '.join(map(str, not_given))} not given when the round closed (recorded as none)",
                )
        if r.decision == "forced_stop" and not _TRIGGER.search(r.decision_reason or ""):
            v.add("failure", f.name, f"{where}: a forced stop must name its safety-valve trigger (Rule 6)")
        legacy = []
        for a in r.accept:
            accepts += 1
            if is_legacy_accept(a):
                shown = f"{where}: legacy accept {str(a.get('description', ''))[:60]!r}"
                if committed is not None and not is_committed_legacy(a, committed):
                    v.add(
                        "failure",
                        f.name,
                        f"{shown} is new since the last commit: the expiry_date form is read, never "
                        "written (a new accept needs re_review_signal, owner and rationale)",
                    )
                elif problem := text_problem(a.get("rationale")):
                    v.add("failure", f.name, f"{shown}: rationale {problem}")
                else:
                    legacy.append(str(a.get("expiry_date")))
                continue
            missing = [k for k in ACCEPT_REQUIRED if not str(a.get(k) or "").strip()]
            if missing:
                v.add(
                    "failure",
                    f.name,
                    f"{where}: accept {str(a.get('description', ''))[:60]!r} has no {', '.join(missing)}",
                )
            for k in ACCEPT_REQUIRED:  # the same rule as `scars decide` (formats.md §1.4)
                problem = text_problem(a.get(k)) if k not in missing else None
                if problem:
                    v.add(
                        "failure",
                        f.name,
                        f"{where}: accept {str(a.get('description', ''))[:60]!r}: {k} {problem}",
                    )
        if legacy:
            v.add(
                "note",
                f.name,
                f"{where}: {len(legacy)} legacy accept(s) with expiry_date ({', '.join(sorted(set(legacy)))}) instead of re-review signal and owner",
            )
        written_by_scars = r.round in j_rounds or counted_by_scars(r)
        round_matches = _round_matches(feature, r.round)
        matched += sum(1 for m in round_matches if m.confident)
        if written_by_scars:
            # scars writes each item's text as it is: anything but the same text is an item no
            # report holds (any more).
            missing = [m for m in round_matches if m.confidence != "exact"]
            if missing:
                unmatched += len(missing)
                v.add(
                    "failure",
                    f.name,
                    f"{where}: {len(missing)} triaged item(s) scars recorded are in no scar report: {_examples(missing)}",
                )
        else:
            # Hand-written descriptions: checked when the one matcher names their item confidently.
            unsure = [m for m in round_matches if not m.confident]
            if unsure:
                unmatched += len(unsure)
                kinds: dict[str, int] = {}
                for m in unsure:
                    kinds[m.confidence] = kinds.get(m.confidence, 0) + 1
                how = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
                v.add(
                    "unknown",
                    f.name,
                    f"{where}: {len(unsure)} triaged description(s) name no item confidently ({how}; "
                    f"`scars status` lists their candidates), so they cannot be checked: {_examples(unsure)}",
                )
        if written_by_scars:
            try:
                disk = (safe_read.load_yaml(f, root=feature.repo_root or path).value or {}).get("rounds") or []
                disk_r = next((x for x in disk if isinstance(x, dict) and x.get("round") == r.round), None)
                if disk_r != _plain_round(j_rounds[r.round]):
                    v.add("failure", f.name, f"{where} differs from the round scars recorded in .scars/journal.jsonl")
            except Exception:  # noqa: BLE001 - unreadable: reported above through the reader's warnings
                pass
    for num in sorted(set(j_rounds) - set(numbers)):
        v.add(
            "failure",
            f.name,
            f"round {num} is closed in the journal but missing from iteration-log.yaml (run `scars round flush`)",
        )
    known = {i.id for i in (*feature.items, *feature.resolved)}
    for item in sorted(j_items - known):
        v.add("failure", ".scars/journal.jsonl", f"decided item {item} is in no scar report any more")
    v.checked["accepts"] = accepts
    v.checked["matched_descriptions"] = matched
    v.checked["unmatched_descriptions"] = unmatched
    _check_logs_agree(feature, log, entries, v, path)


# The round gate's options as the loop words them: (A) 繼續下一輪 / (B) 停止，進入 Validation, and
# scars' English labels. An answer names its choice by the letter first, else by the word.
_CHOICE_LETTER = re.compile(r"^\W*\(?\s*([AB])\s*[)）.:]", re.I)
_CONTINUE = re.compile(r"繼續|继续|\bcontinu", re.I)
_STOP = re.compile(r"停止|\bstop|\bforced[_ ]stop|validation", re.I)


def answer_choice(entry) -> str | None:
    """ "continue" or "stop": what a round entry's gatekeeper_answer chose (None: it does not say)."""
    text = str(entry.fields.get("gatekeeper_answer") or "")
    m = _CHOICE_LETTER.match(text)
    if m:
        return "continue" if m.group(1).upper() == "A" else "stop"
    cont, stop = _CONTINUE.search(text), _STOP.search(text)
    if cont and (not stop or cont.start() < stop.start()):
        return "continue"
    if stop:
        return "stop"
    return None


# How a triage entry's answer states its round's classification (scars writes it as
# ``gates.samsara.triage_summary`` does: "round R: fix F, accept A, defer D").
_TRIAGE_COUNTS = re.compile(r"\bfix\s+(\d+),\s*accept\s+(\d+),\s*defer\s+(\d+)", re.I)
_ROUND_IN_ANSWER = re.compile(r"\bround\s+(\d+)\s*:", re.I)
TRIAGE_POINT = SEED_002_POINTS["triage"]


def triage_counts(entry) -> tuple[int, int, int] | None:
    """(fix, accept, defer) a triage entry's gatekeeper_answer states (None: it states none)."""
    m = _TRIAGE_COUNTS.search(str(entry.fields.get("gatekeeper_answer") or ""))
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def _triage_rounds(entries: list, by_round: dict[int, list], open_round: int) -> dict[int, list]:
    """round -> its triage entries: the round the answer names ("round R:"), else the round of
    the next round-continuation / safety-valve entry (seed 002: a round's triage comes before its
    continuation), else — after every round entry — the round after the last one named, or
    ``open_round`` when no entry names a round."""
    round_of = {id(e): n for n, es in by_round.items() for e in es}
    out: dict[int, list] = {}
    waiting: list = []
    last = 0
    for e in entries:
        if id(e) in round_of:
            last = round_of[id(e)]
            for t in waiting:
                out.setdefault(last, []).append(t)
            waiting = []
        elif entry_point(e) == TRIAGE_POINT:
            m = _ROUND_IN_ANSWER.search(str(e.fields.get("gatekeeper_answer") or ""))
            if m:
                out.setdefault(int(m.group(1)), []).append(e)
            else:
                waiting.append(e)
    for t in waiting:
        out.setdefault(last + 1 if last else open_round, []).append(t)
    return out


def _check_triage_counts(log, triages: dict[int, list], v: Verification) -> None:
    """The latest triage entry of each round states that round's own counts (the round's
    triage_result; a blocked fix reclassified as defer after the entry counts as the fix it was)."""
    for r in log.rounds:
        found = triages.get(r.round)
        if not found:
            continue
        e = found[-1]
        said = triage_counts(e)
        if said is None:
            continue
        logged = (len(r.fix), len(r.accept), len(r.defer))
        blocked = r.raw.get("blocked_fixes") if isinstance(r.raw, dict) else None
        k = sum(1 for b in blocked or () if isinstance(b, dict) and b.get("outcome") == "reclassify_as_defer")
        if said in (logged, (logged[0] + k, logged[1], logged[2] - k)):
            continue
        v.add(
            "failure",
            "auto-decisions.md",
            f"decision {e.number:03d} (iteration.triage) says fix {said[0]}, accept {said[1]}, defer {said[2]} but "
            f"iteration-log.yaml round {r.round} triaged fix {logged[0]}, accept {logged[1]}, defer {logged[2]}",
            e.line,
        )


def _first_auto_round(path: Path, triages: dict[int, list], entries: list, by_round: dict[int, list]) -> int | None:
    """The first round of the log decided in auto mode: the first round an entry is about (its
    round entry, its triage entry), or, by scars' journal, the first round closed after the
    earliest entry was written. None: no entry is about a round (nothing tells when the feature
    went auto)."""
    named = set(by_round) | set(triages)
    stamps = [t for t in (parse_time(e.fields.get("timestamp")) for e in entries) if t is not None]
    if stamps:
        first = min(stamps)
        after = [n for n, at in _journal_close_times(path).items() if at > first]
        if after:
            named.add(min(after))
    return min(named) if named else None


def _journal_open_round(path: Path) -> int | None:
    jp = journal_path(path)
    if not jp.is_file():
        return None
    start = replay(read_journal(jp).records).open_round
    n = start.get("round") if start else None
    return n if isinstance(n, int) else None


def _journal_close_times(path: Path) -> dict[int, Any]:
    jp = journal_path(path)
    if not jp.is_file():
        return {}
    out = {}
    for r in read_journal(jp).records:
        at = parse_time(r.get("at"))
        if r.get("type") == "round_close" and isinstance(r.get("round"), int) and at is not None:
            out[r["round"]] = at
    return out


def _check_logs_agree(feature, log, entries: list, v: Verification, path: Path | None = None) -> None:
    """In auto mode every done round has a round-continuation (or safety-valve) entry that agrees
    with it — but a round decided before the feature went auto (before the first round any entry
    is about) needs none: a note —, and each round's triage entry states its counts."""
    auto = feature.auto_mode
    conts = [e for e in entries if entry_point(e) in ROUND_POINTS]
    by_round: dict[int, list] = {}
    for e in conts:
        m = _ROUND_IN_PROMPT.search(str(e.fields.get("workflow_prompt", "")))
        if m:
            by_round.setdefault(int(m.group(1)), []).append(e)
        else:
            v.add(
                "unknown",
                "auto-decisions.md",
                f"decision {e.number:03d} cannot be matched to a round (its prompt names none)",
                e.line,
            )
    # A triage entry after every round entry, naming no round: the round scars' journal has open,
    # else the log's last round (unsure which: the one whose entries are checked).
    open_round = _journal_open_round(path) if path is not None else None
    triages = _triage_rounds(entries, by_round, open_round or max((r.round for r in log.rounds), default=1))
    _check_triage_counts(log, triages, v)
    first_auto = _first_auto_round(path, triages, entries, by_round) if auto and path is not None else None
    for r in log.rounds:
        if r.decision is None:
            continue
        found = by_round.get(r.round, [])
        if not found:
            if auto and first_auto is not None and r.round < first_auto:
                v.add(
                    "note",
                    "auto-decisions.md",
                    f"round {r.round} ({r.decision}) was decided before the feature went auto (its first auto "
                    f"round is {first_auto}): no round-continuation entry needed",
                )
            elif auto:
                v.add(
                    "failure",
                    "auto-decisions.md",
                    f"round {r.round} ({r.decision}) has no round-continuation / safety-valve entry",
                )
            continue
        e = found[-1]  # the latest entry for the round supersedes earlier ones
        d = e.fields.get("decision")
        chose = answer_choice(e)
        if chose is not None and r.decision in ("continue", "stop", "forced_stop"):
            wrote = "continue" if r.decision == "continue" else "stop"
            if chose != wrote:
                v.add(
                    "failure",
                    "auto-decisions.md",
                    f"decision {e.number:03d} answers {chose} ({str(e.fields.get('gatekeeper_answer', ''))[:40]!r}) "
                    f"but iteration-log.yaml round {r.round} decided {r.decision}",
                    e.line,
                )
        if r.decision == "interrupted" and d == "proceed":
            v.add(
                "failure",
                "auto-decisions.md",
                f"decision {e.number:03d} says proceed but round {r.round} was interrupted",
                e.line,
            )
        if r.decision in ("continue", "stop", "forced_stop") and d == "reject":
            v.add(
                "failure",
                "auto-decisions.md",
                f"decision {e.number:03d} says reject but round {r.round} decided {r.decision}",
                e.line,
            )
    rounds = {r.round for r in log.rounds}
    for num, es in by_round.items():
        if num not in rounds:
            for e in es:
                v.add(
                    "failure",
                    "auto-decisions.md",
                    f"decision {e.number:03d} is about round {num}, which iteration-log.yaml does not hold",
                    e.line,
                )
