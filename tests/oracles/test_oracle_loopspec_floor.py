"""loop-spec 4.3.0's own ``lib/converged-floor.sh`` (the oracle, aztechead/loop-spec @560b980, run
in place with gawk as ``awk``) against scars' 4.x floor (``scars.core.loops.loopspec.converged_floor``)
on the same SPEC.md / VERIFICATION.md: the same exit code and the same FLOOR lines, word for word.

The cases are our own, in the shapes the floor reads (checkbox criteria under ``### Good Enough``,
``- criterion: GE-NNN`` grounding rows, an acceptance table with a status column). One case is the
reason for gawk: a later ``## …`` heading ends the Good Enough section only for an awk that knows
``#{1,6}``; mawk counts the next section's checkboxes too (shown when mawk is installed).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from scars.core.loops.loopspec.reader import converged_floor
from tests.oracles.conftest import awk_env, gawk_env, need

SPEC = """# Sync

### Good Enough
- [ ] notes sync between two devices
- [x] a conflict keeps both versions

### Exceptional
- [ ] live cursors

## Out of scope
- [ ] three devices
"""

GROUNDED = """# Verification
- criterion: GE-001 | tests/test_sync.py::test_two_devices
- criterion: GE-002 | tests/test_sync.py::test_conflict

## Acceptance criteria
| # | criterion | status | evidence |
|---|---|---|---|
| GE-001 | two devices | PASS | 12 passed |
| GE-002 | conflicts | PASS | 3 passed |
"""

CASES = {
    "held": (SPEC, GROUNDED),
    "a grounding row missing": (
        SPEC,
        GROUNDED.replace("- criterion: GE-002 | tests/test_sync.py::test_conflict\n", ""),
    ),
    "a FAIL row": (SPEC, GROUNDED.replace("| 3 passed |", "| 3 passed |\n| GE-003 | cursors |  FAIL | x |")),
    "GE-0010 is not GE-001": (SPEC, GROUNDED.replace("GE-001 |", "GE-0010 |")),
    "a grounding row across a line break": (SPEC, GROUNDED.replace("criterion: GE-002", "criterion:\nGE-002")),
    "no Good Enough section (fail-open)": ("# Sync\n- [ ] x\n", None),
    "an indented heading is not the section": ("  ### Good Enough\n- [ ] x\n", None),
    "an indented heading does not end it": (SPEC.replace("### Exceptional", "   ### Exceptional"), GROUNDED),
    "verification unreadable": (SPEC, None),
    "a CR at line ends": (SPEC.replace("\n", "\r\n"), GROUNDED.replace("\n", "\r\n")),
}


def run_floor(oracles: Path, tmp_path: Path, spec: str | None, verification: str | None, env) -> tuple[int, list[str]]:
    need("bash")
    spec_path, verif_path = tmp_path / "SPEC.md", tmp_path / "VERIFICATION.md"
    for path, text in ((spec_path, spec), (verif_path, verification)):
        if text is not None:
            path.write_bytes(text.encode())
    proc = subprocess.run(
        ["bash", str(oracles / "loop-spec/lib/converged-floor.sh"), str(spec_path), str(verif_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    return proc.returncode, [line for line in proc.stdout.splitlines() if line.startswith("FLOOR")]


@pytest.mark.parametrize("case", sorted(CASES))
def test_scars_4x_floor_is_the_oracles(oracles, tmp_path, case):
    spec, verification = CASES[case]
    upstream = run_floor(oracles, tmp_path, spec, verification, gawk_env(tmp_path))
    name = str(tmp_path / "VERIFICATION.md")
    assert converged_floor(spec, verification, name) == upstream


def test_mawk_miscounts_the_good_enough_section(oracles, tmp_path):
    """Why the oracle tests run gawk: with mawk the section never ends at ``## Out of scope``."""
    spec, verification = CASES["held"]
    assert run_floor(oracles, tmp_path, spec, verification, gawk_env(tmp_path)) == (0, [])
    code, lines = run_floor(oracles, tmp_path, spec, verification, awk_env(tmp_path, "mawk"))
    assert code == 1 and any("GE-003" in line or "GE-004" in line for line in lines)
