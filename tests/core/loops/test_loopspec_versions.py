"""loop-spec's versions: which line wrote a feature.json, and the rules that differ (the 6.x floor,
the backlog types).

Fixtures are ours, in the shapes read upstream (aztechead/loop-spec):
* the 6.x floor — ``lib/converged-floor.sh`` as the 6.x line has it (index commit 2485c00: fails
  closed on SPEC, one PASS row per criterion; and the later ``--shape`` version, whose table
  grammar names the key and status columns by header — the one seed 004's VERIFY exit runs);
* ``lib/iterate-judged.sh`` (index commit 0713b45): ``record`` stores ``iterate.lastJudgeHash`` and
  runs the floor on ``<top>/docs/loop-spec/features/<slug>/{SPEC,VERIFICATION}.md``;
* loop-spec's own ``.loop-spec/BACKLOG.md`` @ee0b583 (a done ``plan-pruning`` entry) and 4.3.0's
  ``skills/debug/SKILL.md`` (``backlog.sh add "$slug" new-mechanism``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scars.core.loops.loopspec import versions as v
from scars.core.loops.loopspec.reader import converged_floor, parse_backlog, read_feature

SPEC = """# Sync

### Good Enough
- [ ] notes sync between two devices
- [x] a conflict keeps both versions

### Exceptional
- [ ] live cursors
"""

TABLE_HEAD = "## Acceptance criteria\n| # | criterion | status | evidence |\n|---|---|---|---|\n"
GROUNDING = "- criterion: GE-001 | t1\n- criterion: GE-002 | t2\n\n"


def verification(*rows: str, grounding: str = GROUNDING) -> str:
    return grounding + TABLE_HEAD + "".join(r + "\n" for r in rows)


OK = verification("| GE-001 | two devices | PASS | 12 passed |", "| GE-002 | conflicts | PASS | 3 passed |")


def floor6(spec, verif):
    return v.converged_floor_v6(spec, verif, "SPEC.md", "VERIFICATION.md")


def test_the_6x_floor_holds_on_one_pass_row_per_criterion():
    assert floor6(SPEC, OK) == (0, [])


def test_the_6x_floor_fails_closed_on_the_spec_side():
    assert floor6(None, OK) == (1, ["FLOOR spec is not readable: SPEC.md"])
    assert floor6("# Sync\n- [ ] x\n", OK) == (1, ["FLOOR no Good Enough checkbox criteria in SPEC.md"])
    # 4.x skips both (fail-open): the rule that changed.
    assert converged_floor(None, OK) == (0, []) and converged_floor("# Sync\n- [ ] x\n", OK) == (0, [])


def test_a_criterion_needs_exactly_one_pass_row():
    missing = verification("| GE-001 | two devices | PASS | 12 passed |")
    assert floor6(SPEC, missing) == (
        1,
        ["FLOOR GE-002 acceptance result is missing (no acceptance row keyed GE-002 or 2) in VERIFICATION.md"],
    )
    twice = verification(
        "| GE-001 | a | PASS | ok |", "| 2 | b | PASS | ok |", "| GE-002 | b | PASS | ok |"
    )  # keyed by number or id: both count
    assert floor6(SPEC, twice)[1] == [
        "FLOOR GE-002 acceptance result is duplicate (2 acceptance rows keyed GE-002 or 2) in VERIFICATION.md"
    ]
    na = verification("| GE-001 | a | PASS | ok |", "| GE-002 | b | N/A | not applicable |")
    assert floor6(SPEC, na)[1] == ["FLOOR GE-002 acceptance result is non-PASS (N/A) in VERIFICATION.md"]
    # The same record holds under 4.x: no row requirement there (what scars missed on real pairs).
    assert converged_floor(SPEC, missing) == (0, []) and converged_floor(SPEC, na) == (0, [])


def test_the_table_grammar_reads_headers_prefixes_and_markup():
    # Status column named by its header, not the third; "PASS (12 passed)" and "**PASS**" read PASS.
    named = (
        GROUNDING + "## Acceptance criteria\n| Criterion ID | Result | what |\n|:--|:-:|--|\n"
        "| GE-001 | PASS (12 passed) | x |\n| **GE-002** | **PASS** | y |\n"
    )
    assert floor6(SPEC, named) == (0, [])
    # A number key is compared as awk compares numbers: "01" is criterion 1.
    numbered = verification("| 01 | a | PASS | ok |", "| 2.0 | b | PASS | ok |")
    assert floor6(SPEC, numbered) == (0, [])
    # PASSED is not PASS (the word must end), an escaped pipe stays in its cell.
    passed = verification("| GE-001 | a | PASSED | ok |", "| GE-002 | b \\| c | PASS | ok |")
    assert floor6(SPEC, passed)[1] == ["FLOOR GE-001 acceptance result is non-PASS (PASSED) in VERIFICATION.md"]


def test_fail_blocked_and_a_pass_that_never_ran_veto():
    rows = verification(
        "| GE-001 | a | FAIL | 1 failed |",
        "| GE-002 | b | PASS | plan invocation is blocked by the reauth lock |",
        "| GE-003 | c | BLOCKED | credentials expired |",
    )
    code, lines = floor6(SPEC, rows)
    assert code == 1
    assert "FLOOR acceptance table row still FAIL: GE-001" in lines
    assert (
        "FLOOR acceptance table row is PASS but its evidence says the check did not run (mark it BLOCKED): GE-002"
        in lines
    )
    assert "FLOOR acceptance table row BLOCKED (an operator must clear it before this can converge): GE-003" in lines
    # "unblocked" is not "blocked": the word must stand alone.
    fine = verification("| GE-001 | a | PASS | unblocked run |", "| GE-002 | b | PASS | ok |")
    assert floor6(SPEC, fine) == (0, [])


def test_only_the_acceptance_section_counts():
    outside = (
        GROUNDING
        + "## Other\n| GE-001 | a | FAIL | x |\n"
        + TABLE_HEAD
        + ("| GE-001 | a | PASS | ok |\n| GE-002 | b | PASS | ok |\n")
    )
    assert floor6(SPEC, outside) == (0, [])
    ended = verification("| GE-001 | a | PASS | ok |") + "### Notes\n| GE-002 | b | PASS | ok |\n"
    assert floor6(SPEC, ended)[0] == 1


def test_grounding_rows_are_still_required():
    no_ground = verification("| GE-001 | a | PASS | ok |", "| GE-002 | b | PASS | ok |", grounding="")
    assert floor6(SPEC, no_ground)[1] == [
        f"FLOOR GE-00{n} has no grounding row in VERIFICATION.md — unverified Good Enough scope cannot converge"
        for n in (1, 2)
    ]


@pytest.mark.parametrize(
    ("data", "result", "line"),
    [
        ({"iterate": {"used": 1}}, None, v.LINE_4),
        ({"iterate": {"used": 1, "lastJudgeHash": "123"}}, None, v.LINE_6),
        ({"requirementsContract": {"format": "legacy"}}, None, v.LINE_6),
        ({"iterate": {"lastJudgeHash": "1"}}, {"loopSpecVersion": "4.3.0"}, v.LINE_4),
        ({}, {"loopSpecVersion": "6.3.1"}, v.LINE_6),
        ({}, {"loopSpecVersion": "not a version"}, v.LINE_4),
    ],
)
def test_the_line_a_feature_json_was_written_by(data, result, line):
    assumed = v.feature_line(data, result)
    assert assumed.line == line and assumed.why


def test_backlog_types_each_version_defines():
    text = (
        "- [x] (2026-09-10 fastapi-audit-fixes plan-pruning) Declined removal of a PLAN paragraph\n"
        "- [ ] (2026-08-01 sync new-mechanism) a second mechanism\n"
        "- [ ] (2026-08-01 sync made-up) odd\n"
    )
    entries, problems = parse_backlog(text, "BACKLOG.md", v.backlog_types(v.LINE_6))
    assert len(entries) == 3
    assert [(p.line, p.severity) for p in problems] == [(3, "warning")]  # kept, and --strict passes
    _, problems4 = parse_backlog(text, "BACKLOG.md", v.backlog_types(v.LINE_4))
    assert [p.line for p in problems4] == [1, 3]


def converged_feature(root: Path, *, hash_mark: bool) -> Path:
    fdir = root / ".loop-spec" / "features" / "sync"
    fdir.mkdir(parents=True)
    verdict = {"iteration": 1, "converged": True, "deterministic_gate_passed": True, "summary": "done"}
    block = {"maxIterations": 10, "used": 1, "lastVerdict": verdict, "history": [verdict], "lastRoute": "deliver"}
    if hash_mark:
        block["lastJudgeHash"] = "3015617425"
    data = {"schemaVersion": 7, "slug": "sync", "currentPhase": "iterate", "iterate": block}
    (fdir / "feature.json").write_text(json.dumps(data))
    return fdir / "feature.json"


def test_the_reader_follows_the_version_and_says_which(tmp_path):
    # No SPEC.md at all: 4.x's floor skips (converged), 6.x's vetoes (a verify gap).
    four = read_feature(converged_feature(tmp_path / "four", hash_mark=False))
    assert four.stop_rule.outcome == "converged" and four.details["loop_spec_version"]["line"] == "4.x"
    assert any("loop-spec 4.x rules assumed" in r for r in four.stop_rule.reasons)
    six = read_feature(converged_feature(tmp_path / "six", hash_mark=True))
    assert six.details["loop_spec_version"]["line"] == "6.x"
    assert six.route == "verify" and not six.details["converged"]
    assert six.details["floor"] == ["FLOOR spec is not readable: docs/loop-spec/features/sync/SPEC.md"]
    assert any("loop-spec 6.x rules assumed (iterate.lastJudgeHash" in r for r in six.stop_rule.reasons)


def test_the_6x_reader_reads_the_default_docs_path_not_artifacts(tmp_path):
    fj = converged_feature(tmp_path, hash_mark=True)
    data = json.loads(fj.read_text())
    data["artifacts"] = {"spec": "elsewhere/SPEC.md", "verification": "elsewhere/VERIFICATION.md"}
    fj.write_text(json.dumps(data))
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "SPEC.md").write_text(SPEC)
    (tmp_path / "elsewhere" / "VERIFICATION.md").write_text(OK)
    assert read_feature(fj).route == "verify"  # iterate-judged.sh reads docs/loop-spec/features/<slug>
    docs = tmp_path / "docs" / "loop-spec" / "features" / "sync"
    docs.mkdir(parents=True)
    (docs / "SPEC.md").write_text(SPEC)
    (docs / "VERIFICATION.md").write_text(OK)
    state = read_feature(fj)
    assert state.route == "deliver" and state.stop_rule.outcome == "converged"
    assert "converged floor held" in state.stop_rule.reasons
