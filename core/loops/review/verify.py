"""Mechanist's claim buckets: ``verify/VERIFY_REPORT.md`` read into each claim's final state (the
template's table, marked states, counts) and the lines whose state cannot be read."""

from __future__ import annotations

import re

from scars.core.loops.review.auto_review import FENCE
from scars.core.records import record

VERIFY_REPORT = "verify/VERIFY_REPORT.md"  # the claim buckets, next to the review stage
BLOCKING_BUCKETS = ("FAIL", "INCONCLUSIVE", "ZERO_ELIGIBLE_VARIANTS")
BUCKETS = ("PASS",) + BLOCKING_BUCKETS + ("INTEGRITY_ONLY",)


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


@record(slots=True)
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
        if FENCE.match(line):
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
