"""Mechanist: a VERIFY_REPORT.md built from the Summary table of the loop's own template
(``mechanist/skills/auto-verify/SKILL.md``, Phase 11, read in place) blocks the STOP.

The template's table has eleven example claims with several state tokens per row (main-experiment
integrity, variant integrity, the final State column); only the State column decides a claim.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

from scars.core import gates
from scars.core.loops.review import reader as review
from scars.core.loops.review.verify import BUCKETS, read_verify_claims

TEMPLATE = "mechanist/skills/auto-verify/SKILL.md"


def template_summary(oracles) -> str:
    """The Summary table of the template's VERIFY_REPORT.md (header, separator and rows)."""
    text = (oracles / TEMPLATE).read_text(encoding="utf-8")
    section = text[text.index("### Phase 11: Write VERIFY_REPORT") :]
    section = section[section.index("## Summary") :]
    lines = []
    for line in section.splitlines()[1:]:
        if line.startswith("|"):
            lines.append(line)
        elif lines:
            break
    assert len(lines) > 5, "the template's Summary table moved"
    return "\n".join(lines) + "\n"


def expected_states(table: str) -> dict[str, str]:
    """Each row's state as the template's own State column marks it (✅ ❌ 🟡 🟠 ⚪)."""
    out = {}
    for line in table.splitlines()[2:]:
        claim = line.split("|")[1].strip()
        m = re.search(r"(✅|❌|🟡|🟠|⚪) (PASS|FAIL|INCONCLUSIVE|ZERO_ELIGIBLE_VARIANTS|INTEGRITY_ONLY)", line)
        out[claim] = m.group(2)
    return out


def test_template_rows_block_the_stop(oracles, tmp_path):
    table = template_summary(oracles)
    expected = expected_states(table)
    assert set(expected.values()) == set(BUCKETS)  # all five states are in the template
    claims = read_verify_claims("# Verification Report\n\n## Summary\n\n" + table)
    assert claims.claims == expected and claims.known

    stage = tmp_path / "review-stage"
    stage.mkdir()
    (stage / "REVIEW_STATE.json").write_text(
        json.dumps(
            {
                "iterations_consumed": 1,
                "claim_reentries_consumed": 0,
                "status": "in_progress",
                "last_score": 9,
                "last_verdict": "ready",
                "consecutive_noop_count": 0,
                "timestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S"),
            }
        )
    )
    (tmp_path / "verify").mkdir()
    (tmp_path / "verify" / "VERIFY_REPORT.md").write_text("# Verification Report\n\n## Summary\n\n" + table)
    state = review.read_review_dir(stage, tmp_path)
    assert state.stop_rule.met is False and state.stop_rule.outcome is None
    ev = gates.gather("review-continue", stage)
    assert ev.default == "continue" and "stop" not in ev.decision_overrides
