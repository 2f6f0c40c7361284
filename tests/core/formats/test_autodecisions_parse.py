"""auto-decisions.md line-based parser (formats.md §1.6)."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from scars.core.formats.auto_decisions import _HEADING, parse_auto_decisions
from tests.hypothesis_profiles import examples

ENTRY = """\
## Decision 004 - iteration.round-continuation
- decision_id: decision-004
- timestamp: 2026-07-10T09:12:00+08:00
- stage: iteration
- prompt_type: question
- workflow_prompt: "Round 1 done. signal_lost: 6 → 5. (A) continue (B) stop"
- gatekeeper_answer: "Stop: the 4 remaining items are 1 accept and 3 defers with owners."
- decision: proceed
- rationale: "No fix-class items remain."
- principles_used:
  - "safety valve is advisory"
- architecture_considerations:
  - "deferred items touch the scheduler"
- evidence_checked:
  - "iteration-log.yaml round 1"
  - "scar-reports/task-2-scar.yaml"
- uncertainty:
  level: low
  notes: "defer targets not yet scheduled"
- consequences:
  - "write iteration-log.yaml and invoke samsara:validate-and-ship"
"""


def test_a_valid_entry_parses_without_problems():
    (e,) = parse_auto_decisions("# Auto decisions\n\nintro text\n\n" + ENTRY)
    assert (e.number, e.heading_stage, e.gate_id, e.line) == (4, "iteration", "round-continuation", 5)
    assert e.problems == ()
    assert e.fields["uncertainty"] == {"level": "low", "notes": "defer targets not yet scheduled"}
    assert e.fields["evidence_checked"] == ["iteration-log.yaml round 1", "scar-reports/task-2-scar.yaml"]
    assert e.fields["workflow_prompt"].startswith("Round 1 done")


def test_problems_are_recorded_per_entry():
    bad = ENTRY.replace("decision: proceed", "decision: maybe").replace(
        '- rationale: "No fix-class items remain."\n', ""
    )
    bad = bad.replace("Decision 004", "Decision 003").replace(
        '"Stop: the 4 remaining items are 1 accept and 3 defers with owners."', '"approved"'
    )
    entries = parse_auto_decisions(ENTRY + "\n" + bad)
    assert entries[0].problems == ()
    probs = " | ".join(entries[1].problems)
    assert "decision 'maybe'" in probs
    assert "missing field 'rationale'" in probs
    assert "out of order" in probs
    assert "does not match heading number 003" in probs
    assert "generic" in probs


def test_fields_out_of_order_are_flagged():
    lines = ENTRY.splitlines()
    lines[1], lines[2] = lines[2], lines[1]
    (e,) = parse_auto_decisions("\n".join(lines))
    assert "fields are not in template order" in e.problems


@settings(max_examples=examples(200), deadline=None)
@given(st.text())
def test_junk_gives_one_entry_per_heading_line(text):
    headings = [n for n, line in enumerate(text.split("\n"), 1) if _HEADING.match(line.rstrip())]
    entries = parse_auto_decisions(text)
    assert [e.line for e in entries] == headings  # nothing dropped, nothing invented
    assert all(isinstance(e.problems, tuple) for e in entries)


@settings(max_examples=examples(100), deadline=None)
@given(
    st.lists(st.sampled_from(ENTRY.splitlines() + ["## Decision x - y", "junk", "  - z", "  level: high"]), max_size=40)
)
@example(ENTRY.splitlines())
@example([ENTRY.splitlines()[0], "junk", "- decision: proceed", "junk", "## Decision x - y", "junk"])
def test_shuffled_lines_are_read_entry_by_entry_and_every_stray_line_is_reported(lines):
    entries = parse_auto_decisions("\n".join(lines))
    headings = [n for n, line in enumerate(lines, 1) if line.startswith("## Decision")]
    assert [e.line for e in entries] == headings
    for e, start, end in zip(entries, headings, [*headings[1:], len(lines) + 1][: len(headings)], strict=True):
        body = lines[start : end - 1]
        # every "junk" line of an entry is one problem naming its line; none outside an entry is
        junk = [start + 1 + i for i, line in enumerate(body) if line == "junk"]
        assert [p for p in e.problems if "unexpected line 'junk'" in p] == [
            f"line {n}: unexpected line 'junk'" for n in junk
        ]
        assert (e.number == -1) is (lines[start - 1] == "## Decision x - y")
        if lines[start - 1] != "## Decision x - y":
            assert (e.number, e.heading_stage, e.gate_id) == (4, "iteration", "round-continuation")
    if lines == ENTRY.splitlines():
        (e,) = entries
        assert e.problems == () and e.fields["decision"] == "proceed" and e.fields["uncertainty"]["level"] == "low"
