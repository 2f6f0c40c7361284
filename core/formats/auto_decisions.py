"""auto-decisions.md (formats.md §1.6): the line-based parser and the entry writer.

Reading.

The entry body is not YAML of the intended shape (``uncertainty`` holds indented ``level`` /
``notes`` lines under a list item), so entries are read line by line. The parser never
raises on junk: everything odd is recorded in the entry's ``problems`` (missing or unknown
fields, fields out of template order, bad enum values, numbering out of order, a
``decision_id`` that does not repeat the heading's number); text outside any entry is
ignored (a file may start with a title or notes).

Writing. An entry is the heading ``## Decision NNN - <stage>.<gate-id>`` and the 13 fields in
template order, the ``uncertainty`` block indented under its list item. The file is an
append-only event log: entries are only ever appended (one ``os.write`` + fsync, under the
feature lock, numbering continuing from the highest entry on disk); a correction is a new
entry whose rationale names the decision it supersedes. Every free-text value is written as a
one-line double-quoted string: backslash, quote, newlines and every other line-breaking or
control character are escaped (``\\n``, ``\\"``, ``\\u2028`` …), so no value can start a line of
its own — no value can forge a heading or a field. Enum values (stage, prompt_type, decision,
level) and the gate id are checked against their allowed forms instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from scars.core.clock import now_iso
from scars.core.errors import DecisionRefused, FieldError
from scars.core.model import AutoDecisionEntry
from scars.core.storage.durable import append_record
from scars.core.text import is_meaningful, text_problem

# The 13 required fields, in template order (formats.md §1.6).
FIELD_ORDER: tuple[str, ...] = (
    "decision_id",
    "timestamp",
    "stage",
    "prompt_type",
    "workflow_prompt",
    "gatekeeper_answer",
    "decision",
    "rationale",
    "principles_used",
    "architecture_considerations",
    "evidence_checked",
    "uncertainty",
    "consequences",
)
LIST_FIELDS = frozenset({"principles_used", "architecture_considerations", "evidence_checked", "consequences"})
STAGES = frozenset(
    {"research", "pre-thinking", "planning", "implementation", "iteration", "validation", "security-privacy-review"}
)
PROMPT_TYPES = frozenset({"question", "confirmation"})
DECISIONS = frozenset({"proceed", "revise", "reject", "accept_gap"})
UNCERTAINTY_LEVELS = frozenset({"low", "medium", "high"})

_HEADING = re.compile(r"^##\s+Decision\s+(\S+)\s+-\s+(.*?)\s*$")
_FIELD = re.compile(r"^- ([A-Za-z_]+):(?:\s(.*))?$")
_SUBITEM = re.compile(r"^\s{2,}- (.*)$")
_UNCERTAINTY_SUB = re.compile(r"^\s{2,}(level|notes):(?:\s(.*))?$")


_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)")
_SIMPLE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\"}


def _unescape(m: re.Match) -> str:
    esc = m.group(1)
    if esc[0] == "u" and len(esc) == 5:
        return chr(int(esc[1:], 16))
    return _SIMPLE_ESCAPES.get(esc, "\\" + esc)  # unknown escapes (C:\dir) stay as written


def _unquote(value: str) -> str:
    """A double-quoted value with its escapes undone, in one pass: the inverse of the writer's
    quoting (``\\n``, ``\\"``, ``\\\\``, ``\\uXXXX``), so texts written by scars read back equal."""
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return _ESCAPE.sub(_unescape, value[1:-1])
    return value


def parse_auto_decisions(text: str) -> list[AutoDecisionEntry]:
    """Parse every ``## Decision NNN - <stage>.<gate-id>`` entry of ``text``."""
    if not isinstance(text, str):
        return []
    entries: list[AutoDecisionEntry] = []
    current: dict | None = None

    def finish() -> None:
        if current is not None:
            entries.append(_finish(current, entries))

    # Lines end at "\n" only (a trailing "\r" is stripped below): str.splitlines() would also
    # break at \x0b, \x0c, \x1c-\x1e, \x85, U+2028 and U+2029 inside a value, shifting line numbers.
    for lineno, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip()
        m = _HEADING.match(line)
        if m:
            finish()
            current = {"heading": m, "line": lineno, "fields": {}, "order": [], "problems": [], "last": None}
            continue
        if current is None:
            continue
        if line.startswith("## ") or line.startswith("# "):
            finish()  # another heading ends the entry; text until the next entry is ignored
            current = None
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fm = _FIELD.match(line)
        if fm:
            name, value = fm.group(1), (fm.group(2) or "")
            if name in current["fields"]:
                current["problems"].append(f"line {lineno}: field {name!r} repeated")
            current["order"].append(name)
            if name not in FIELD_ORDER:
                current["problems"].append(f"line {lineno}: unknown field {name!r}")
            if name in LIST_FIELDS:
                current["fields"][name] = []
                if value.strip():
                    current["problems"].append(f"line {lineno}: {name} must be a list of '  - \"…\"' lines")
                    current["fields"][name].append(_unquote(value))
            elif name == "uncertainty":
                current["fields"][name] = {}
                if value.strip():
                    current["problems"].append(f"line {lineno}: uncertainty takes indented level:/notes: lines")
            else:
                current["fields"][name] = _unquote(value)
            current["last"] = name
            continue
        last = current["last"]
        um = _UNCERTAINTY_SUB.match(line)
        if last == "uncertainty" and um:
            current["fields"]["uncertainty"][um.group(1)] = _unquote(um.group(2) or "")
            continue
        sm = _SUBITEM.match(line)
        if sm and last in LIST_FIELDS:
            current["fields"][last].append(_unquote(sm.group(1)))
            continue
        current["problems"].append(f"line {lineno}: unexpected line {line.strip()[:60]!r}")
    finish()
    return entries


def _finish(cur: dict, earlier: list[AutoDecisionEntry]) -> AutoDecisionEntry:
    m = cur["heading"]
    problems: list[str] = cur["problems"]
    fields: dict = cur["fields"]
    number_text, title = m.group(1), m.group(2)
    try:
        number = int(number_text)
    except ValueError:
        number = -1
        problems.append(f"heading number {number_text!r} is not a number")
    else:
        if not re.fullmatch(r"\d{3,}", number_text):
            problems.append(f"heading number {number_text!r} is not zero-padded to 3 digits")
    if "." in title:
        heading_stage, gate_id = title.split(".", 1)
    else:
        heading_stage, gate_id = title, ""
        problems.append(f"heading {title!r} is not <stage>.<gate-id>")
    if earlier and number >= 0:
        prev = max(e.number for e in earlier)
        if number <= prev:
            problems.append(f"decision {number:03d} is out of order (after {prev:03d})")
    for name in FIELD_ORDER:
        if name not in fields:
            problems.append(f"missing field {name!r}")
    known = [n for n in cur["order"] if n in FIELD_ORDER]
    if known != sorted(known, key=FIELD_ORDER.index):
        problems.append("fields are not in template order")
    did = fields.get("decision_id")
    if isinstance(did, str) and number >= 0 and did != f"decision-{number:03d}":
        problems.append(f"decision_id {did!r} does not match heading number {number:03d}")
    stage = fields.get("stage")
    if isinstance(stage, str):
        if stage not in STAGES:
            problems.append(f"stage {stage!r} is not one of {', '.join(sorted(STAGES))}")
        if stage != heading_stage:
            problems.append(f"stage {stage!r} differs from the heading's {heading_stage!r}")
    for name, allowed in (("prompt_type", PROMPT_TYPES), ("decision", DECISIONS)):
        value = fields.get(name)
        if isinstance(value, str) and value not in allowed:
            problems.append(f"{name} {value!r} is not one of {', '.join(sorted(allowed))}")
    unc = fields.get("uncertainty")
    if isinstance(unc, dict) and "uncertainty" in fields:
        if unc.get("level") not in UNCERTAINTY_LEVELS:
            problems.append(f"uncertainty level {unc.get('level')!r} is not low, medium or high")
        if "notes" not in unc:
            problems.append("uncertainty has no notes")
    answer = fields.get("gatekeeper_answer")
    if isinstance(answer, str) and (problem := text_problem(answer)):  # §1.6 validity: question-specific
        problems.append(f"gatekeeper_answer is not question-specific: {problem}")
    if fields.get("evidence_checked") == []:
        problems.append("evidence_checked is empty")
    return AutoDecisionEntry(
        number=number,
        heading_stage=heading_stage,
        gate_id=gate_id,
        line=cur["line"],
        fields=fields,
        problems=tuple(problems),
    )


FILE_NAME = "auto-decisions.md"


# The enums are the parser's (scars.core.formats.auto_decisions), so what is written is what verifies.
STAGE_CHOICES = tuple(sorted(STAGES))


PROMPT_TYPE_CHOICES = tuple(sorted(PROMPT_TYPES))


DECISION_CHOICES = tuple(sorted(DECISIONS))


LEVELS = ("low", "medium", "high")


_GATE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")


_HEADING_NUM = re.compile(r"^##[ \t]+Decision[ \t]+(\d+)\b", re.MULTILINE)


_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})")


# Characters that str.splitlines() (and so a line-based reader) treats as line breaks, plus
# every other control: all are escaped.
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def quote(value: str) -> str:
    """``value`` as a one-line double-quoted string (JSON-style escapes)."""
    out = ['"']
    for ch in value:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F or ch in "\u2028\u2029\ufeff":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


_UNESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)")


def unquote(value: str) -> str:
    """Inverse of :func:`quote` (lenient: unknown escapes are kept as written)."""
    value = value.strip()
    if not (len(value) >= 2 and value[0] == value[-1] == '"'):
        return value
    inner = value[1:-1]

    def sub(m: re.Match) -> str:
        esc = m.group(1)
        if esc[0] == "u" and len(esc) == 5:
            return chr(int(esc[1:], 16))
        return {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\"}.get(esc, "\\" + esc)

    return _UNESCAPE.sub(sub, inner)


def heading_title(stage: str, gate_id: str) -> str:
    """``<stage>.<gate-id>``; a gate id that already starts with the stage is used as is."""
    return gate_id if gate_id.startswith(stage + ".") else f"{stage}.{gate_id}"


def validate_entry(
    *,
    stage: str,
    gate_id: str,
    prompt_type: str,
    workflow_prompt: str,
    answer: str,
    decision: str,
    rationale: str,
    evidence: Iterable[str],
    uncertainty_level: str,
    consequences: Iterable[str],
    timestamp: str | None = None,
    supersedes: int | None = None,
) -> list[FieldError]:
    errors: list[FieldError] = []
    if stage not in STAGE_CHOICES:
        errors.append(FieldError("stage", f"must be one of {', '.join(STAGE_CHOICES)}"))
    if not isinstance(gate_id, str) or not _GATE_ID.fullmatch(gate_id):
        errors.append(FieldError("gate_id", "must be letters, digits, '.', '_' or '-' (e.g. round-continuation)"))
    if prompt_type not in PROMPT_TYPE_CHOICES:
        errors.append(FieldError("prompt_type", "must be question or confirmation"))
    if decision not in DECISION_CHOICES:
        errors.append(FieldError("decision", f"must be one of {', '.join(DECISION_CHOICES)}"))
    if uncertainty_level not in LEVELS:
        errors.append(FieldError("uncertainty_level", "must be low, medium or high"))
    if not is_meaningful(workflow_prompt):
        errors.append(FieldError("workflow_prompt", "the original workflow prompt must be preserved"))
    if problem := text_problem(answer):
        errors.append(FieldError("gatekeeper_answer", f"must be question-specific: {problem}"))
    if problem := text_problem(rationale):
        errors.append(FieldError("rationale", problem))
    if not any(is_meaningful(e) for e in evidence):
        errors.append(FieldError("evidence_checked", "must list the evidence checked"))
    if not any(is_meaningful(c) for c in consequences):
        errors.append(FieldError("consequences", "must name the next consequence"))
    if timestamp is not None and not _TIMESTAMP.fullmatch(timestamp):
        errors.append(FieldError("timestamp", "must be ISO 8601 with a zone"))
    if supersedes is not None and (not isinstance(supersedes, int) or supersedes < 1):
        errors.append(FieldError("supersedes", "must be the number of an earlier decision"))
    return errors


def format_entry(
    number: int,
    *,
    stage: str,
    gate_id: str,
    prompt_type: str,
    workflow_prompt: str,
    answer: str,
    decision: str,
    rationale: str,
    principles: Iterable[str] = (),
    considerations: Iterable[str] = (),
    evidence: Iterable[str] = (),
    uncertainty_level: str = "low",
    uncertainty_notes: str = "",
    consequences: Iterable[str] = (),
    timestamp: str | None = None,
    supersedes: int | None = None,
) -> str:
    """One entry's text (ending with a newline). Raises DecisionRefused naming bad fields."""
    principles, considerations, evidence, consequences = (
        list(x) for x in (principles, considerations, evidence, consequences)
    )
    errors = validate_entry(
        stage=stage,
        gate_id=gate_id,
        prompt_type=prompt_type,
        workflow_prompt=workflow_prompt,
        answer=answer,
        decision=decision,
        rationale=rationale,
        evidence=evidence,
        uncertainty_level=uncertainty_level,
        consequences=consequences,
        timestamp=timestamp,
        supersedes=supersedes,
    )
    if not isinstance(number, int) or number < 1:
        errors.insert(0, FieldError("number", "must be a positive integer"))
    if errors:
        raise DecisionRefused("auto-decisions.md entry refused: " + "; ".join(map(str, errors)), errors)
    if supersedes is not None:
        rationale = f"supersedes decision-{supersedes:03d}: {rationale}"
    lines = [
        f"## Decision {number:03d} - {heading_title(stage, gate_id)}",
        f"- decision_id: decision-{number:03d}",
        f"- timestamp: {timestamp or now_iso()}",
        f"- stage: {stage}",
        f"- prompt_type: {prompt_type}",
        f"- workflow_prompt: {quote(workflow_prompt)}",
        f"- gatekeeper_answer: {quote(answer)}",
        f"- decision: {decision}",
        f"- rationale: {quote(rationale)}",
    ]
    for name, values in (
        ("principles_used", principles),
        ("architecture_considerations", considerations),
        ("evidence_checked", evidence),
    ):
        lines.append(f"- {name}:")
        lines.extend(f"  - {quote(str(v))}" for v in values)
    lines.append("- uncertainty:")
    lines.append(f"  level: {uncertainty_level}")
    lines.append(f"  notes: {quote(uncertainty_notes or '')}")
    lines.append("- consequences:")
    lines.extend(f"  - {quote(str(v))}" for v in consequences)
    return "\n".join(lines) + "\n"


def last_number(text: str) -> int:
    """The highest entry number on disk (0 when there is none)."""
    return max((int(m.group(1)) for m in _HEADING_NUM.finditer(text)), default=0)


def append_entry(feature_dir: str | Path, **fields) -> int:
    """Append one entry to ``<feature_dir>/auto-decisions.md``; returns its number.

    The caller holds the feature lock (numbering is read-modify-write). The file is
    created with a title when absent; earlier bytes are never rewritten.
    """
    path = Path(feature_dir) / FILE_NAME
    try:
        existing = path.read_bytes().decode("utf-8", "replace")
    except FileNotFoundError:
        existing = ""
    number = last_number(existing) + 1
    entry = format_entry(number, **fields)
    if not existing:
        prefix = "# Auto Decisions\n\n"
    elif existing.endswith("\n\n"):
        prefix = ""
    elif existing.endswith("\n"):
        prefix = "\n"
    else:
        prefix = "\n\n"
    append_record(path, (prefix + entry).encode("utf-8"))
    return number
