"""loop-spec rules: verdict extraction, limit and record routes, floor, backlog, waiting."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from scars.core.loops.loopspec import reader as loopspec
from scars.core.loops.loopspec.reader import (
    converged_floor,
    extract_verdict,
    gap_id,
    harvest_warnings,
    iterate_block,
    limit_route,
    parse_backlog,
    parse_iteration_md,
    record_route,
)


def verdict(converged=False, gap=None, **extra):
    v = {
        "converged": converged,
        "deterministic_gate_passed": True,
        "summary": "s",
        "gap": gap,
        "remaining_gaps": [],
        "scores": [{"criterion": "c", "score": 6}],
    }
    v.update(extra)
    return v


def make_feature(root: Path, slug: str = "f1", **fields) -> Path:
    d = root / ".loop-spec" / "features" / slug
    d.mkdir(parents=True, exist_ok=True)
    data = {
        "schemaVersion": 7,
        "slug": slug,
        "feature_title": "goal",
        "execStyle": "step",
        "currentPhase": "iterate",
        "warnings": [],
    }
    data.update(fields)
    (d / "feature.json").write_text(json.dumps(data), encoding="utf-8")
    return d / "feature.json"


# --------------------------------------------------------------------------- extraction


def test_fenced_json_block_wins_over_other_braces():
    message = 'Thinking {not json}\n```json\n{"converged": true, "deterministic_gate_passed": true, "summary": "ok"}\n```\ntrailing }'
    got = extract_verdict(message)
    assert got.ok and got.source == "fenced" and got.verdict["converged"] is True


def test_greedy_brace_span_without_fence():
    message = (
        'Verdict: {"converged": false, "deterministic_gate_passed": true, "summary": "x", "gap": {"type": "plan"}} done'
    )
    got = extract_verdict(message)
    assert got.ok and got.source == "braces" and got.verdict["gap"]["type"] == "plan"


@pytest.mark.parametrize(
    "message, problem",
    [
        ('{"converged": true, "summary": "x"}', "deterministic_gate_passed"),
        ("no json at all", "no JSON object"),
        ("{broken", "no JSON object"),
        ('{"converged": true,}', "not valid JSON"),
        ('```json\n["a"]\n```', "no JSON object"),
    ],
)
def test_malformed_verdicts_are_never_converged(message, problem):
    got = extract_verdict(message)
    assert not got.ok and problem in got.problem
    assert loopspec.verdict_converged(got.verdict) is False


# --------------------------------------------------------------------------- limit / record


@pytest.mark.parametrize(
    "used, max_it, conf, route",
    [
        (0, 10, False, "judge"),
        (9, 10, False, "judge"),
        (10, 10, False, "confirmation"),
        (10, 10, True, "harvest"),
        (0, 0, False, "harvest"),  # used >= max but used == 0: no confirmation pass
        (12, 10, False, "confirmation"),
    ],
)
def test_limit_routes(used, max_it, conf, route):
    assert limit_route(used, max_it, conf) == route


def test_iterate_defaults_and_bad_values():
    block, problems = iterate_block({})
    assert (block["maxIterations"], block["used"], block["confirmationUsed"], block["history"]) == (10, 0, False, [])
    assert problems == []
    block, problems = iterate_block({"iterate": {"maxIterations": 500, "used": -1}})
    assert block["maxIterations"] == 10 and block["used"] == 0 and len(problems) == 2


def test_record_converged_with_floor_held_delivers():
    v = verdict(converged=True)
    assert record_route(v, [v])[0] == "deliver"


def test_floor_veto_rewrites_to_execute_on_fail_rows_and_verify_otherwise():
    v = verdict(converged=True)
    route, stored, gap = record_route(v, [v], floor=["FLOOR acceptance table row still FAIL: | x |"])
    assert route == "execute" and stored["converged"] is False and gap["type"] == "execute"
    assert gap["description"].startswith("converged floor: FLOOR acceptance")
    route, _, gap = record_route(v, [v], floor=["FLOOR GE-001 has no grounding row"])
    assert route == "verify" and gap["fix_first"] == "FLOOR GE-001 has no grounding row"


def test_record_default_gap_and_gap_types():
    v = verdict(gap=None, weakest="the writer")
    route, _, gap = record_route(v, [v])
    assert route == "execute" and gap == {"type": "execute", "description": "goal not met", "fix_first": "the writer"}
    for kind in ("plan", "spec", "verify", "execute"):
        v = verdict(gap={"type": kind, "description": "d", "fix_first": "f"})
        assert record_route(v, [v])[0] == kind
    v = verdict(gap={"type": "weird", "description": "d", "fix_first": "f"})
    assert record_route(v, [v])[0] == "execute"


def test_escalate_on_needs_operator_or_repeated_fix_first():
    v = verdict(gap={"type": "execute", "description": "d", "fix_first": "f", "needs_operator": True})
    assert record_route(v, [v])[0] == "escalate"
    first = verdict(gap={"type": "execute", "description": "d", "fix_first": "Rotate  the KEY"})
    second = verdict(gap={"type": "plan", "description": "d2", "fix_first": "rotate the key "})
    assert record_route(second, [first, second])[0] == "escalate"
    third = verdict(gap={"type": "plan", "description": "d2", "fix_first": "something else"})
    assert record_route(third, [first, third])[0] == "plan"


def test_confirmation_pass_routes_to_harvest():
    v = verdict(gap={"type": "execute", "description": "d", "fix_first": "f"})
    assert record_route(v, [v], confirmation=True)[0] == "harvest"


def test_harvest_warnings_and_terminal_rule():
    v = verdict(
        gap={"type": "execute", "description": "writer ignores flag", "fix_first": "pass the flag"},
        remaining_gaps=[{"type": "plan", "description": "docs"}],
    )
    warnings, terminal = harvest_warnings(v, "f1", None)
    assert warnings == [
        "iterate-budget-spent: writer ignores flag — fix first: pass the flag",
        "iterate-budget-spent: docs — fix first: docs",
    ]
    assert terminal is False
    warnings, terminal = harvest_warnings(v, "f1", gap_id("pass the flag"))
    assert terminal and warnings[0].startswith("iterate-terminal:")
    assert harvest_warnings(None, "f1", None)[0] == [
        "iterate-budget-spent: final remediation was never re-judged against the original goal"
    ]


# --------------------------------------------------------------------------- floor

SPEC = """# Spec
### Good Enough (acceptance)
- [ ] one
- [x] two
  - [X] three
## Next
- [ ] not a criterion
"""


def test_floor_counts_good_enough_checkboxes_and_checks_grounding_and_fail_rows():
    ok = "- criterion: GE-001\n- criterion: GE-002\n  - criterion: GE-003\n| a | b | PASS |\n"
    assert converged_floor(SPEC, ok) == (0, [])
    code, lines = converged_floor(SPEC, "- criterion: GE-001\n- criterion: GE-003\n| GE-1 | x | FAIL |\n")
    assert code == 1
    assert lines[0].startswith("FLOOR GE-002")
    assert lines[1] == "FLOOR acceptance table row still FAIL: | GE-1 | x | FAIL |"
    # "- criterion: GE-0010" must not ground GE-001 (word boundary).
    assert converged_floor("### Good Enough\n- [ ] a\n", "- criterion: GE-0010\n")[0] == 1


def test_floor_fails_open_on_spec_and_closed_on_verification():
    assert converged_floor(None, None) == (0, [])
    assert converged_floor("# no section\n- [ ] x\n", None) == (0, [])
    code, lines = converged_floor(SPEC, None)
    assert code == 1 and len(lines) == 1 and "not readable" in lines[0]


# --------------------------------------------------------------------------- backlog / ITERATION.md


def test_gap_id_normalises_then_hashes():
    expected = hashlib.sha256(b"add the json flag").hexdigest()[:8]
    assert gap_id("Add the --json flag!") == expected
    assert gap_id("  add THE json   flag ") == expected


def test_backlog_lines():
    text = (
        "# BACKLOG.md\n\nHeader.\n\n"
        "- [ ] (2026-08-01 f1 iterate-gap id=0123abcd) writer ignores flag — fix first: pass it\n"
        "- [x] (2026-08-02 f2 manual) done thing\n"
        "- [x] (2026-08-03 f1 iterate-gap id=89abcdef) old gap -- TERMINAL: approach wrong\n"
        "- [ ] broken line\n"
    )
    entries, failures = parse_backlog(text)
    assert [(e.slug, e.type, e.id, e.done, e.terminal) for e in entries] == [
        ("f1", "iterate-gap", "0123abcd", False, False),
        ("f2", "manual", None, True, False),
        ("f1", "iterate-gap", "89abcdef", True, True),
    ]
    assert entries[2].text == "old gap" and entries[2].terminal_note == "approach wrong"
    assert len(failures) == 1 and failures[0].line == 8


def test_iteration_md_sections():
    text = """# Iteration
## Iteration 1 — not converged
- Converged: no (deterministic gate passed: yes)
- Scores:
  | criterion | score | weak point |
  |---|---|---|
  | CLI accepts --json | 6 | ignored |
  | docs | 8 | |
- Route: execute
## Iteration 2 — converged
- Converged: yes
"""
    sections = parse_iteration_md(text)
    assert [(s["iteration"], s["converged"], s["scores"], s["route"]) for s in sections] == [
        (1, False, [6.0, 8.0], "execute"),
        (2, True, [], None),
    ]


# --------------------------------------------------------------------------- whole features


def test_spec_route_waits_in_step_mode_and_not_unattended(tmp_path):
    gap = {"type": "spec", "description": "goal needs a new boundary", "fix_first": "re-scope"}
    v = verdict(gap=gap)
    path = make_feature(
        tmp_path, iterate={"maxIterations": 3, "used": 1, "lastVerdict": v, "history": [v], "lastRoute": "spec"}
    )
    state = loopspec.read_feature(path, tmp_path)
    assert state.route == "spec" and state.waiting_for_human
    assert "Re-open SPEC/DISCUSS" in state.reason and "goal needs a new boundary" in state.reason
    assert state.details["gate_options"] == ["Re-open SPEC/DISCUSS", "Ship as-is", "Stop - hand back"]
    path = make_feature(
        tmp_path,
        execStyle="auto",
        iterate={"maxIterations": 3, "used": 1, "lastVerdict": v, "history": [v], "lastRoute": "spec"},
    )
    state = loopspec.read_feature(path, tmp_path)
    assert state.route == "spec" and not state.waiting_for_human
    # Once DISCUSS runs, the rewind happened: no longer waiting.
    path = make_feature(
        tmp_path, currentPhase="discuss", iterate={"used": 1, "lastVerdict": v, "history": [v], "lastRoute": "spec"}
    )
    assert not loopspec.read_feature(path, tmp_path).waiting_for_human


def test_escalate_derived_without_last_route_waits(tmp_path):
    g = {"type": "execute", "description": "locked credential", "fix_first": "unlock the vault"}
    h = [verdict(gap=g, iteration=1), verdict(gap=dict(g), iteration=2)]
    path = make_feature(tmp_path, iterate={"used": 2, "lastVerdict": h[-1], "history": h})
    state = loopspec.read_feature(path, tmp_path)
    assert state.route == "escalate" and state.waiting_for_human
    assert "unlock the vault" in state.reason
    assert state.trend == (6.0, 6.0) and [p.label for p in state.history()] == ["iteration 1", "iteration 2"]


def test_converged_with_floor_documents(tmp_path):
    v = verdict(converged=True, gap=None, scores=[{"criterion": "a", "score": 9}, {"criterion": "b", "score": 8}])
    path = make_feature(tmp_path, iterate={"used": 1, "lastVerdict": v, "history": [v], "lastRoute": "deliver"})
    docs = tmp_path / "docs/loop-spec/features/f1"
    docs.mkdir(parents=True)
    (docs / "SPEC.md").write_text(SPEC)
    (docs / "VERIFICATION.md").write_text("- criterion: GE-001\n- criterion: GE-002\n- criterion: GE-003\n")
    state = loopspec.read_feature(path, tmp_path)
    assert state.route == "deliver" and state.stop_rule.met and state.stop_rule.outcome == "converged"
    assert state.trend == (8.5,)
    # The verification record loses a grounding row: the floor now vetoes (verify gap).
    (docs / "VERIFICATION.md").write_text("- criterion: GE-001\n")
    state = loopspec.read_feature(path, tmp_path)
    assert state.route == "verify" and state.stop_rule.met is False
    assert any("converged floor vetoed" in r for r in state.stop_rule.reasons)


def test_budget_spent_and_harvested(tmp_path):
    v = verdict(gap={"type": "execute", "description": "d", "fix_first": "f"})
    path = make_feature(
        tmp_path, iterate={"maxIterations": 2, "used": 2, "confirmationUsed": True, "lastVerdict": v, "history": [v, v]}
    )
    state = loopspec.read_feature(path, tmp_path)
    assert (
        state.details["limit_route"] == "harvest" and state.stop_rule.met and state.stop_rule.outcome == "budget_spent"
    )
    path = make_feature(
        tmp_path,
        warnings=["iterate-budget-spent: d — fix first: f"],
        iterate={
            "maxIterations": 2,
            "used": 2,
            "confirmationUsed": True,
            "lastVerdict": v,
            "history": [v, v],
            "lastRoute": "harvest",
        },
    )
    state = loopspec.read_feature(path, tmp_path)
    assert state.route == "deliver" and state.stop_rule.outcome == "budget_spent"
    (tmp_path / ".loop-spec/BACKLOG.md").write_text(
        "# BACKLOG.md\n\n- [ ] (2026-08-01 f1 iterate-gap id={}) d — fix first: f\n"
        "- [ ] (2026-08-01 other manual) not ours\n".format(gap_id("f"))
    )
    state = loopspec.read_feature(path, tmp_path)
    assert [e["id"] for e in state.details["backlog"]] == [gap_id("f")]


def test_confirmation_left(tmp_path):
    v = verdict(gap={"type": "plan", "description": "d", "fix_first": "f"})
    path = make_feature(
        tmp_path, iterate={"maxIterations": 1, "used": 1, "lastVerdict": v, "history": [v], "lastRoute": "plan"}
    )
    state = loopspec.read_feature(path, tmp_path)
    assert state.route == "plan" and state.details["limit_route"] == "confirmation"
    assert any("one confirmation pass left" in r for r in state.stop_rule.reasons)


def test_unusable_files_are_parse_failures(tmp_path):
    d = tmp_path / ".loop-spec/features/bad"
    d.mkdir(parents=True)
    (d / "feature.json").write_text('{\n  "slug": "bad",\n  "iterate": {,}\n}\n')
    state = loopspec.read_feature(d / "feature.json", tmp_path)
    assert state.parse_failures[0].line == 3 and "invalid JSON" in state.parse_failures[0].message
    assert state.stop_rule.met is None and not state.waiting_for_human
    (d / "feature.json").write_text("[1, 2]")
    assert "not a JSON object" in loopspec.read_feature(d / "feature.json", tmp_path).parse_failures[0].message
    (d / "feature.json").write_bytes(b'{"slug": "' + b"x" * (9 * 1024 * 1024) + b'"}')
    assert (
        "over the 8,388,608-byte limit" in loopspec.read_feature(d / "feature.json", tmp_path).parse_failures[0].message
    )


def test_malformed_judge_output_and_outside_artifact_are_listed(tmp_path):
    path = make_feature(
        tmp_path, artifacts={"spec": "../../etc/SPEC.md", "iteration": "/abs/ITERATION.md"}, iterate={"used": 0}
    )
    (path.parent / ".iterate-judge.out").write_text("the judge forgot its JSON")
    state = loopspec.read_feature(path, tmp_path)
    reasons = [f.message for f in state.parse_failures]
    assert any("judge output malformed" in r for r in reasons)
    assert sum("points outside the repository" in r for r in reasons) == 2
    assert state.stop_rule.met is False


def test_iteration_md_gives_the_trend_without_history(tmp_path):
    path = make_feature(tmp_path, iterate={"used": 1})
    docs = tmp_path / "docs/loop-spec/features/f1"
    docs.mkdir(parents=True)
    (docs / "ITERATION.md").write_text(
        "## Iteration 1 — not converged\n- Converged: no\n| a | 4 | w |\n| b | 6 | w |\n"
    )
    state = loopspec.read_feature(path, tmp_path)
    assert state.trend == (5.0,) and state.details["iteration_md"][0]["iteration"] == 1


def test_scanning_only_the_feature_directory_still_reads_its_documents(tmp_path):
    from scars.core.loops import discover_loops

    v = verdict(converged=True, gap=None)
    path = make_feature(tmp_path, iterate={"used": 1, "lastVerdict": v, "history": [v], "lastRoute": "deliver"})
    docs = tmp_path / "docs/loop-spec/features/f1"
    docs.mkdir(parents=True)
    (docs / "SPEC.md").write_text(SPEC)
    (docs / "VERIFICATION.md").write_text("- criterion: GE-001\n")
    (state,) = discover_loops(path.parent)
    assert state.parse_failures == ()
    assert state.route == "verify"  # the floor was read and vetoes: GE-002 and GE-003 ungrounded
