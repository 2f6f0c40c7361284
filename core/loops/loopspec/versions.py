"""Which loop-spec a feature was written by, and the rules that differ by version.

loop-spec's feature state has had three shapes on disk, and real repositories hold all of them:

* **4.x** — ``.loop-spec/features/<slug>/feature.json`` (schemaVersion 7) as 4.3.0 writes it
  (the shared oracle, aztechead/loop-spec @560b980): ITERATE is skill prose; the converged floor
  (``lib/converged-floor.sh``) is *fail-open* on the SPEC side and vetoes on a missing grounding
  row or a ``FAIL`` in any table's third column.
* **6.x** — the same file, with ITERATE's bookkeeping in ``lib/iterate-judged.sh`` (the seed,
  ``cycle-driver.sh iterate limit|record|harvest``; index commit 0713b45): record stores
  ``iterate.lastJudgeHash``; the floor *fails closed* (an unreadable SPEC, or one without Good
  Enough checkboxes, is a violation) and needs exactly one PASS row per criterion in
  ``## Acceptance criteria`` (the table grammar of the 6.x floor with ``--shape``, the one the
  seed's VERIFY exit runs; read at index commit 2485c00 and the later ``--shape`` version).
* **7.x** — state outside the repository (``scars.core.loops.loopspec.v7``).

A feature.json says which line wrote it only by what it holds (formats.md §6.1: detect by shape):
a ``result.json`` beside it names ``loopSpecVersion``; ``iterate.lastJudgeHash`` is written only
by 6.x's ``iterate record``; ``requirementsContract`` only by 6.x's feature init. Without either,
the 4.x rules are assumed — and every reader says which line it assumed, and why.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from scars.core.records import record
from scars.core.values import as_dict

LINE_4 = "4.x"
LINE_6 = "6.x"
LINE_7 = "7.x"


@record(slots=True)
class Assumed:
    """The loop-spec line whose rules a feature is read by, and the evidence for it."""

    line: str
    why: str
    version: str | None = None  # the exact version when a file names it

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "version": self.version, "why": self.why}

    def describe(self) -> str:
        return f"loop-spec {self.version or self.line} rules assumed ({self.why})"


_VERSION = re.compile(r"^\s*(\d+)\.(\d+)(?:\.(\d+))?")


def version_line(version: Any) -> str | None:
    """The line of a version string (``"6.3.1"`` → ``6.x``); None when it is not one."""
    m = _VERSION.match(version) if isinstance(version, str) else None
    if not m:
        return None
    major = int(m.group(1))
    if major >= 7:
        return LINE_7
    if major >= 5:
        return LINE_6
    return LINE_4


def version_tuple(version: Any) -> tuple[int, int, int] | None:
    m = _VERSION.match(version) if isinstance(version, str) else None
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)) if m else None


def feature_line(data: dict[str, Any], result: Any = None) -> Assumed:
    """The line a ``feature.json`` (``data``) was written by; ``result`` is the ``result.json``
    beside it when there is one (``lib/cycle-result.sh``, which stamps ``loopSpecVersion``)."""
    if isinstance(result, dict):
        line = version_line(result.get("loopSpecVersion"))
        if line is not None and line != LINE_7:
            version = str(result["loopSpecVersion"]).strip()
            return Assumed(line, f"result.json: loopSpecVersion {version}", version)
    block = as_dict(data.get("iterate"))
    if "lastJudgeHash" in block:
        return Assumed(LINE_6, "iterate.lastJudgeHash: written only by 6.x's lib/iterate-judged.sh record")
    if "requirementsContract" in data:
        return Assumed(LINE_6, "requirementsContract: written only by 6.x's feature init")
    return Assumed(LINE_4, "no 6.x mark (iterate.lastJudgeHash, requirementsContract, result.json)")


# --------------------------------------------------------------------------- backlog types

# lib/backlog.sh never checks a type (``type="${3:-manual}"``, every version read): the types a
# version defines are the ones its usage text lists and the ones its own skills write.
BACKLOG_TYPES: dict[str, tuple[str, ...]] = {
    # backlog.sh usage @560b980, and skills/debug/SKILL.md's `backlog.sh add "$slug" new-mechanism`.
    LINE_4: ("verify-deferred", "iterate-gap", "manual", "watch-regression", "new-mechanism"),
    # loop-spec's own .loop-spec/BACKLOG.md @ee0b583 (written by 6.x): a done `plan-pruning` entry.
    LINE_6: ("verify-deferred", "iterate-gap", "manual", "watch-regression", "new-mechanism", "plan-pruning"),
}


def backlog_types(line: str) -> tuple[str, ...]:
    return BACKLOG_TYPES.get(line, BACKLOG_TYPES[LINE_6])


# --------------------------------------------------------------------------- converged floor


def awk_lines(text: str) -> list[str]:
    """Lines as awk and grep see them: split on LF only (a CR stays in the line)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


_GE_HEADING = re.compile(r"^###[ \t\r\n\v\f]+Good Enough")
_ANY_HEADING = re.compile(r"^#{1,6}[ \t\r\n\v\f]")
_CHECKBOX = re.compile(r"^[ \t\r\n\v\f]*- \[[ xX]\]")


def good_enough_count(spec_text: str) -> int:
    """The Good Enough criteria of SPEC.md, as every version's floor counts them (gawk:
    ``/^###[[:space:]]+Good Enough/{flag=1; next} flag && /^#{1,6}[[:space:]]/{flag=0} flag``
    piped to ``grep -cE '^\\s*- \\[[ xX]\\]'``). mawk reads ``#{1,6}`` literally and counts the
    checkboxes of every later section too; this is the gawk count."""
    count, inside = 0, False
    for line in awk_lines(spec_text):
        if _GE_HEADING.match(line):
            inside = True
            continue
        if inside and _ANY_HEADING.match(line):
            inside = False
        if inside and _CHECKBOX.match(line):
            count += 1
    return count


def has_grounding_row(verification_text: str, ge: str) -> bool:
    return bool(re.search(rf"^[ \t\r\v\f]*- criterion:[ \t\r\v\f]*{ge}\b", verification_text, re.MULTILINE))


_ACCEPTANCE = re.compile(r"^##[ \t\r\n\v\f]+Acceptance criteria[ \t\r\n\v\f]*$")


def acceptance_rows(verification_text: str) -> list[str]:
    """The table rows of every ``## Acceptance criteria`` section (until a line starting ``#``)."""
    rows, active = [], False
    for line in awk_lines(verification_text):
        if _ACCEPTANCE.match(line):
            active = True
            continue
        if active and line.startswith("#"):
            active = False
        if active and line.startswith("|"):
            rows.append(line)
    return rows


def _trim(cell: str) -> str:
    cell = re.sub(r"^[ \t]+|[ \t]+$", "", cell)
    return re.sub(r"^[*`]+|[*`]+$", "", cell)


def _ascii_lower(text: str) -> str:
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in text)


_KEY_HEADER = re.compile(r"^(#|id|no\.?|criterion id|ge id)$")
_STATUS_HEADER = re.compile(r"^(status|result|outcome|verdict)$")
_SEPARATOR = re.compile(r"^:?-+:?$")
_STATUS_WORDS = (("PASS", "PASS"), ("FAIL", "FAIL"), ("BLOCKED", "BLOCKED"), ("N/A", "N/A"))


def table_rows(rows: list[str]) -> list[tuple[str, str, str]]:
    """(key, status, evidence) per acceptance row, by the 6.x floor's grammar: the first row is
    the header naming the key column (``#``, ``ID``, ``No.``, ``Criterion ID``, ``GE ID``; else the
    first) and the status column (``Status``, ``Result``, ``Outcome``, ``Verdict``; else the third);
    a status cell *beginning* with PASS / FAIL / BLOCKED / N/A reads as that word; ``\\|`` is a
    literal pipe; separator rows are skipped. The evidence is the cell after the status."""
    out: list[tuple[str, str, str]] = []
    key_col = status_col = 0
    for number, row in enumerate(rows):
        c = row.replace("\\|", "\x01").split("|")
        n = len(c)  # awk's split: c[1] .. c[n]; cells are c[2] .. c[n-1]

        def cell(k: int, c: list[str] = c) -> str:
            return c[k - 1] if 1 <= k <= len(c) else ""

        if number == 0:
            for k in range(2, n):
                h = _ascii_lower(_trim(cell(k)))
                if not key_col and _KEY_HEADER.match(h):
                    key_col = k
                if not status_col and _STATUS_HEADER.match(h):
                    status_col = k
            key_col = key_col or 2
            status_col = status_col or 4
            continue
        if all(_SEPARATOR.match(_trim(cell(k))) for k in range(2, n)):
            continue
        key = _trim(cell(key_col))
        status = _trim(cell(status_col)).replace("\x01", "|")
        evidence = _ascii_lower(_trim(cell(status_col + 1))).replace("\x01", "|")
        for word, value in _STATUS_WORDS:
            if re.match(rf"^{re.escape(word)}([^A-Za-z]|$)", status):
                status = value
                break
        else:
            status = status or "empty"
        out.append((key, status, evidence))
    return out


_AWK_NUMBER = re.compile(r"^[ \t\n]*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?[ \t\n]*$")


def _same_key(key: str, ge: str, number: int) -> bool:
    """awk's ``$1 == id || $1 == number``: a numeric-looking key compares as a number."""
    if key == ge:
        return True
    return bool(_AWK_NUMBER.match(key)) and float(key) == number


def _read_fields(key: str, status: str, evidence: str) -> tuple[str, str, str]:
    """``IFS=$'\\t' read -r key status evidence`` on ``key\\tstatus\\tevidence``: a tab is IFS
    white space, so empty fields collapse (an empty key shifts the status into its place)."""
    parts = f"{key}\t{status}\t{evidence}".strip("\t")
    fields = re.split(r"\t+", parts, maxsplit=2) if parts else []
    fields += [""] * (3 - len(fields))
    return fields[0], fields[1], fields[2].rstrip("\t")


_BLOCKED_EVIDENCE = re.compile(
    r"(^|[^a-z])(blocked|could not run|not run|never ran|did not run|unable to run|skipped|reauth|"
    r"credentials? (expired|locked)|not verified|unverified)([^a-z]|$)"
)


def converged_floor_v6(
    spec_text: str | None, verification_text: str | None, spec_name: str, verification_name: str
) -> tuple[int, list[str]]:
    """The 6.x ``lib/converged-floor.sh <spec> <verification>`` (its legacy grammar: a feature
    without a v1 requirements contract, as ``iterate-judged.sh record`` calls it): (exit code,
    FLOOR lines). ``*_name`` are the paths the messages name."""
    if spec_text is None:
        return 1, [f"FLOOR spec is not readable: {spec_name}"]
    criteria = good_enough_count(spec_text)
    if criteria == 0:
        return 1, [f"FLOOR no Good Enough checkbox criteria in {spec_name}"]
    if verification_text is None:
        return 1, [
            f"FLOOR VERIFICATION.md is not readable ({verification_name}) — a converged verdict needs the "
            "verification record"
        ]
    rows = table_rows(acceptance_rows(verification_text))
    lines: list[str] = []
    for i in range(1, criteria + 1):
        ge = f"GE-{i:03d}"
        if not has_grounding_row(verification_text, ge):
            lines.append(
                f"FLOOR {ge} has no grounding row in {verification_name} — unverified Good Enough scope cannot converge"
            )
        matches = [status for key, status, _ in rows if _same_key(key, ge, i)]
        if len(matches) != 1:
            result = (
                f"missing (no acceptance row keyed {ge} or {i})"
                if not matches
                else f"duplicate ({len(matches)} acceptance rows keyed {ge} or {i})"
            )
        else:
            result = "PASS" if matches[0] == "PASS" else f"non-PASS ({matches[0]})"
        if result != "PASS":
            lines.append(f"FLOOR {ge} acceptance result is {result} in {verification_name}")
    for row in rows or [("", "", "")]:
        key, status, evidence = _read_fields(*row)
        if status == "FAIL":
            lines.append(f"FLOOR acceptance table row still FAIL: {key}")
        elif status == "BLOCKED":
            lines.append(
                f"FLOOR acceptance table row BLOCKED (an operator must clear it before this can converge): {key}"
            )
        elif status == "PASS" and _BLOCKED_EVIDENCE.search(evidence):
            lines.append(
                f"FLOOR acceptance table row is PASS but its evidence says the check did not run (mark it BLOCKED): {key}"
            )
    return (1 if lines else 0), lines


def docs_dir(project: Path, slug: str) -> Path:
    """Where 6.x's ``iterate record`` takes SPEC.md and VERIFICATION.md for the floor:
    ``<git top>/docs/loop-spec/features/<slug>`` — the default, never ``artifacts.*``."""
    return project / "docs" / "loop-spec" / "features" / slug
