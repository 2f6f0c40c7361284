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
from pathlib import Path
from typing import Any

from scars.core.clock import now_iso
from scars.core.errors import DecisionRefused, FieldError
from scars.core.model import AutoDecisionEntry
from scars.core.records import field, fields, record
from scars.core.storage import confine, paths
from scars.core.storage.durable import append_record
from scars.core.text import is_meaningful, text_problem

# The 13 fields of an entry, in template order (formats.md §1.6), each with its kind: how it is
# written and read. The parser, the validator and the renderer all walk this one table.
#   id — decision-NNN; bare — a timestamp or an enum value, unquoted; text — one double-quoted
#   line; list — indented "  - \"…\"" lines; uncertainty — the indented level:/notes: block.
FIELDS: tuple[tuple[str, str], ...] = (
    ("decision_id", "id"),
    ("timestamp", "bare"),
    ("stage", "bare"),
    ("prompt_type", "bare"),
    ("workflow_prompt", "text"),
    ("gatekeeper_answer", "text"),
    ("decision", "bare"),
    ("rationale", "text"),
    ("principles_used", "list"),
    ("architecture_considerations", "list"),
    ("evidence_checked", "list"),
    ("uncertainty", "uncertainty"),
    ("consequences", "list"),
)
FIELD_ORDER: tuple[str, ...] = tuple(name for name, _ in FIELDS)
LIST_FIELDS = frozenset(name for name, kind in FIELDS if kind == "list")
_KIND = dict(FIELDS)
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


def unquote(value: str) -> str:
    """A double-quoted value with its escapes undone, in one pass: the inverse of :func:`quote`
    (``\\n``, ``\\"``, ``\\\\``, ``\\uXXXX``), so texts written by scars read back equal. Lenient:
    an unquoted value is returned stripped, unknown escapes are kept as written."""
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
            kind = _KIND.get(name)
            if kind == "list":
                current["fields"][name] = []
                if value.strip():
                    current["problems"].append(f"line {lineno}: {name} must be a list of '  - \"…\"' lines")
                    current["fields"][name].append(unquote(value))
            elif kind == "uncertainty":
                current["fields"][name] = {}
                if value.strip():
                    current["problems"].append(f"line {lineno}: uncertainty takes indented level:/notes: lines")
            else:
                current["fields"][name] = unquote(value)
            current["last"] = name
            continue
        last = current["last"]
        um = _UNCERTAINTY_SUB.match(line)
        if last == "uncertainty" and um:
            current["fields"]["uncertainty"][um.group(1)] = unquote(um.group(2) or "")
            continue
        sm = _SUBITEM.match(line)
        if sm and last in LIST_FIELDS:
            current["fields"][last].append(unquote(sm.group(1)))
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


def heading_title(stage: str, gate_id: str) -> str:
    """``<stage>.<gate-id>``; a gate id that already starts with the stage is used as is."""
    return gate_id if gate_id.startswith(stage + ".") else f"{stage}.{gate_id}"


@record(slots=True)
class DecisionEntry:
    """One auto-decisions.md entry to write: the §1.6 fields (``FIELDS``) but ``decision_id``,
    which the number on disk gives when the entry is appended.

    ``supersedes`` names an earlier decision this one corrects (its rationale then starts
    ``supersedes decision-NNN:``). ``timestamp`` is fixed when the entry is built, so an entry
    written again after a crash (``FeatureSession``) is the same entry.
    """

    stage: str
    gate_id: str
    prompt_type: str
    workflow_prompt: str
    gatekeeper_answer: str
    decision: str
    rationale: str
    principles_used: tuple[str, ...] = ()
    architecture_considerations: tuple[str, ...] = ()
    evidence_checked: tuple[str, ...] = ()
    uncertainty_level: str = "low"
    uncertainty_notes: str = ""
    consequences: tuple[str, ...] = ()
    timestamp: str = field(default_factory=now_iso)
    supersedes: int | None = None

    def problems(self) -> list[FieldError]:
        """Every field that cannot be written, each with why (formats.md §1.6 validity)."""
        errors: list[FieldError] = []
        for name, allowed in (("stage", STAGES), ("prompt_type", PROMPT_TYPES), ("decision", DECISIONS)):
            if getattr(self, name) not in allowed:
                errors.append(FieldError(name, f"must be one of {', '.join(sorted(allowed))}"))
        if not isinstance(self.gate_id, str) or not _GATE_ID.fullmatch(self.gate_id):
            errors.append(FieldError("gate_id", "must be letters, digits, '.', '_' or '-' (e.g. round-continuation)"))
        if self.uncertainty_level not in LEVELS:
            errors.append(FieldError("uncertainty_level", "must be low, medium or high"))
        if not is_meaningful(self.workflow_prompt):
            errors.append(FieldError("workflow_prompt", "the original workflow prompt must be preserved"))
        if problem := text_problem(self.gatekeeper_answer):
            errors.append(FieldError("gatekeeper_answer", f"must be question-specific: {problem}"))
        if problem := text_problem(self.rationale):
            errors.append(FieldError("rationale", problem))
        if not any(is_meaningful(e) for e in self.evidence_checked):
            errors.append(FieldError("evidence_checked", "must list the evidence checked"))
        if not any(is_meaningful(c) for c in self.consequences):
            errors.append(FieldError("consequences", "must name the next consequence"))
        if not isinstance(self.timestamp, str) or not _TIMESTAMP.fullmatch(self.timestamp):
            errors.append(FieldError("timestamp", "must be ISO 8601 with a zone"))
        if self.supersedes is not None and (not isinstance(self.supersedes, int) or self.supersedes < 1):
            errors.append(FieldError("supersedes", "must be the number of an earlier decision"))
        return errors

    def check(self) -> None:
        """Raise DecisionRefused naming every field that cannot be written."""
        errors = self.problems()
        if errors:
            raise DecisionRefused("auto-decisions.md entry refused: " + "; ".join(map(str, errors)), errors)

    def values(self, number: int) -> dict[str, Any]:
        """The value of each of the 13 fields (``FIELDS``) as entry ``number``."""
        rationale = self.rationale
        if self.supersedes is not None:
            rationale = f"supersedes decision-{self.supersedes:03d}: {rationale}"
        return {
            "decision_id": f"decision-{number:03d}",
            "timestamp": self.timestamp,
            "stage": self.stage,
            "prompt_type": self.prompt_type,
            "workflow_prompt": self.workflow_prompt,
            "gatekeeper_answer": self.gatekeeper_answer,
            "decision": self.decision,
            "rationale": rationale,
            "principles_used": list(self.principles_used),
            "architecture_considerations": list(self.architecture_considerations),
            "evidence_checked": list(self.evidence_checked),
            "uncertainty": {"level": self.uncertainty_level, "notes": self.uncertainty_notes or ""},
            "consequences": list(self.consequences),
        }

    def render(self, number: int) -> str:
        """The entry's text as entry ``number`` (ending with a newline). Raises DecisionRefused."""
        errors = self.problems()
        if not isinstance(number, int) or number < 1:
            errors.insert(0, FieldError("number", "must be a positive integer"))
        if errors:
            raise DecisionRefused("auto-decisions.md entry refused: " + "; ".join(map(str, errors)), errors)
        values = self.values(number)
        lines = [f"## Decision {number:03d} - {heading_title(self.stage, self.gate_id)}"]
        for name, kind in FIELDS:
            value = values[name]
            if kind == "list":
                lines.append(f"- {name}:")
                lines.extend(f"  - {quote(str(v))}" for v in value)
            elif kind == "uncertainty":
                lines += [f"- {name}:", f"  level: {value['level']}", f"  notes: {quote(value['notes'])}"]
            elif kind == "text":
                lines.append(f"- {name}: {quote(value)}")
            else:
                lines.append(f"- {name}: {value}")
        return "\n".join(lines) + "\n"

    def is_written_as(self, parsed: AutoDecisionEntry) -> bool:
        """True when ``parsed`` (read back from the file) is this entry, whatever its number."""
        f = parsed.fields
        return (
            parsed.gate_id == self.gate_id
            and f.get("timestamp") == self.timestamp
            and f.get("gatekeeper_answer") == self.gatekeeper_answer
            and f.get("workflow_prompt") == self.workflow_prompt
        )

    def to_record(self) -> dict[str, Any]:
        """A JSON-able mapping (kept in the journal until the entry is on disk)."""
        out: dict[str, Any] = {}
        for name in fields(self):
            value = getattr(self, name)
            out[name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> DecisionEntry:
        """The entry :meth:`to_record` gave (raises TypeError / ValueError on a foreign shape)."""
        unknown = set(record) - set(fields(cls))
        if unknown:
            raise ValueError(f"unknown entry field(s) {', '.join(sorted(unknown))}")
        values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in record.items()}
        return cls(**values)


def last_number(text: str) -> int:
    """The highest entry number on disk (0 when there is none)."""
    return max((int(m.group(1)) for m in _HEADING_NUM.finditer(text)), default=0)


def read_entries_text(feature_dir: str | Path, *, root: str | Path | None = None) -> str:
    """The text of ``<feature_dir>/auto-decisions.md`` ('' when there is none), read by the read
    rule inside ``root`` (``storage/safe_read``; None: the feature directory): one the rule refuses
    (a link leading out of the repository) is never opened and reads as '' — its append is refused
    by the write rule."""
    try:
        data, _fp = paths.read_with_fingerprint(
            Path(feature_dir) / FILE_NAME, root=feature_dir if root is None else root, what=FILE_NAME
        )
    except paths.Unreadable:
        return ""
    return "" if data is None else data.decode("utf-8", "replace")


def entry_bytes(existing: str, entry: DecisionEntry) -> tuple[int, bytes]:
    """(number, bytes appended) of ``entry`` appended to an auto-decisions.md holding ``existing``
    ('' when there is none: the file gets its title)."""
    number = last_number(existing) + 1
    text = entry.render(number)
    if not existing:
        prefix = "# Auto Decisions\n\n"
    elif existing.endswith("\n\n"):
        prefix = ""
    elif existing.endswith("\n"):
        prefix = "\n"
    else:
        prefix = "\n\n"
    return number, (prefix + text).encode("utf-8")


def append_entry(feature_dir: str | Path, entry: DecisionEntry, *, root: str | Path | None = None) -> int:
    """Append ``entry`` to ``<feature_dir>/auto-decisions.md``; returns its number.

    The caller holds the lock of the directory (numbering is read-modify-write). The file is
    created with a title when absent; earlier bytes are never rewritten. ``root``: the repository
    the write stays in (``storage/confine``; None: the feature directory is its own).
    """
    path, where = Path(feature_dir) / FILE_NAME, feature_dir if root is None else root
    confine.check(path, where)  # refused before a byte of it is read (storage/confine)
    number, data = entry_bytes(read_entries_text(feature_dir, root=where), entry)
    append_record(path, data, root=where)
    return number
