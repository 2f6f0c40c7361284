"""Appending entries to ``auto-decisions.md`` in the exact format of formats.md §1.6.

An entry is the heading ``## Decision NNN - <stage>.<gate-id>`` and the 13 fields in
template order, the ``uncertainty`` block indented under its list item. The file is an
append-only event log: entries are only ever appended (one ``os.write`` + fsync, under the
feature lock, numbering continuing from the highest entry on disk); a correction is a new
entry whose rationale names the decision it supersedes.

Every free-text value is written as a one-line double-quoted string: backslash, quote,
newlines and every other line-breaking or control character are escaped (``\\n``,
``\\"``, ``\\u2028`` …), so no value can start a line of its own — no value can forge a
heading or a field. Enum values (stage, prompt_type, decision, level) and the gate id are
checked against their allowed forms instead.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable

from scars.core import autodecisions as _P
from scars.core.decisions import FieldError, is_meaningful, now_iso
from scars.core.durable import append_record
from scars.core.errors import DecisionRefused

FILE_NAME = "auto-decisions.md"
# The enums are the parser's (scars.core.autodecisions), so what is written is what verifies.
STAGES = tuple(sorted(_P.STAGES))
PROMPT_TYPES = tuple(sorted(_P.PROMPT_TYPES))
DECISIONS = tuple(sorted(_P.DECISIONS))
LEVELS = ("low", "medium", "high")
# Answers that are not question-specific (§1.6 validity rules), compared case-insensitively
# after trimming whitespace and end punctuation: the parser's list and a few more.
GENERIC_ANSWERS = frozenset(_P.GENERIC_ANSWERS) | {"approve", "okay", "fine", "done"}

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


_UNESCAPE = re.compile(r'\\(u[0-9a-fA-F]{4}|.)')


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
    if stage not in STAGES:
        errors.append(FieldError("stage", f"must be one of {', '.join(STAGES)}"))
    if not isinstance(gate_id, str) or not _GATE_ID.fullmatch(gate_id):
        errors.append(FieldError("gate_id", "must be letters, digits, '.', '_' or '-' (e.g. round-continuation)"))
    if prompt_type not in PROMPT_TYPES:
        errors.append(FieldError("prompt_type", "must be question or confirmation"))
    if decision not in DECISIONS:
        errors.append(FieldError("decision", f"must be one of {', '.join(DECISIONS)}"))
    if uncertainty_level not in LEVELS:
        errors.append(FieldError("uncertainty_level", "must be low, medium or high"))
    if not is_meaningful(workflow_prompt):
        errors.append(FieldError("workflow_prompt", "the original workflow prompt must be preserved"))
    if not is_meaningful(answer):
        errors.append(FieldError("gatekeeper_answer", "is required"))
    elif answer.strip().strip(".!").strip().casefold() in GENERIC_ANSWERS:
        errors.append(FieldError("gatekeeper_answer", f"{answer.strip()!r} alone is generic; the answer must be question-specific"))
    if not is_meaningful(rationale):
        errors.append(FieldError("rationale", "is required"))
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
    principles, considerations, evidence, consequences = (list(x) for x in (principles, considerations, evidence, consequences))
    errors = validate_entry(
        stage=stage, gate_id=gate_id, prompt_type=prompt_type, workflow_prompt=workflow_prompt, answer=answer,
        decision=decision, rationale=rationale, evidence=evidence, uncertainty_level=uncertainty_level,
        consequences=consequences, timestamp=timestamp, supersedes=supersedes,
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
