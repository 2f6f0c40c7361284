"""The gate model: answers and their keys, reasons, the auto-decisions entry format."""

from __future__ import annotations

import re

import pytest

from scars.core.errors import DecisionRefused
from scars.core.gate_state import canonical_verdict, gap_id
from scars.core.gate_samsara import edit_skip_record
from scars.core.gates import (
    DECISIONS,
    GATES,
    Evidence,
    env_var,
    format_auto_decision,
    generic_reason_problem,
    next_decision_number,
    quote,
    validate_answer,
)


def test_every_gate_has_single_distinct_keys_and_known_decisions():
    assert set(GATES) == {"entry", "triage", "round-continue", "safety-valve", "blocked-fix", "spec",
                          "review-continue", "pdca-continue"}
    for gate in GATES.values():
        keys = [a.key for a in gate.answers]
        assert all(len(k) == 1 for k in keys)
        assert len(set(keys)) == len(keys)
        assert all(a.decision in DECISIONS for a in gate.answers)
        assert all(k not in "jk" for k in keys)  # j/k move the pointer in questionary


def test_answers_are_found_by_value_key_letter_and_label_case_insensitively():
    rc = GATES["round-continue"]
    assert rc.answer("stop").value == "stop"
    assert rc.answer("B").value == "stop"
    assert rc.answer("  Continue ").value == "continue"
    assert rc.answer("(A) 繼續下一輪").value == "continue"
    assert rc.answer("maybe") is None
    spec = GATES["spec"]
    assert spec.answer("Ship as-is").value == "ship"
    assert spec.answer("h").value == "stop"


def test_upstream_mappings_of_answers_to_decisions():
    d = {g: {a.value: a.decision for a in gate.answers} for g, gate in GATES.items()}
    assert d["spec"] == {"reopen": "revise", "ship": "accept_gap", "stop": "reject"}
    assert d["blocked-fix"] == {"retry": "revise", "defer": "accept_gap"}
    assert d["pdca-continue"] == {"iterate": "proceed", "partial": "accept_gap", "stop": "reject"}
    assert d["entry"] == {"enter": "proceed", "skip": "accept_gap"}


@pytest.mark.parametrize("reason", ["ok", "OK.", "approved", "Looks good!", "continue", "yes", "  lgtm ",
                                    "stop", "B", "ship it", "", "   ", "no"])
def test_generic_reasons_are_refused(reason):
    assert generic_reason_problem(reason, GATES["round-continue"]) is not None


def test_a_specific_reason_is_accepted():
    assert generic_reason_problem("the 4 remaining items are 1 accept and 3 defers with owners",
                                  GATES["round-continue"]) is None


def _ev(gate_id: str, **kw) -> Evidence:
    return Evidence(gate=GATES[gate_id], target=None, state_file=None, workflow_prompt="p", **kw)


def test_validate_answer_lists_the_valid_answers_when_invalid():
    with pytest.raises(DecisionRefused) as exc:
        validate_answer(_ev("spec"), "later", None)
    assert "reopen (r), ship (s), stop (h)" in str(exc.value)
    assert exc.value.exit_code == 4


def test_validate_answer_requires_reason_where_the_gate_or_the_evidence_says():
    with pytest.raises(DecisionRefused, match="needs a reason"):
        validate_answer(_ev("spec"), "ship", "ok")
    ans, reason = validate_answer(_ev("spec"), "reopen", None)
    assert ans.value == "reopen" and reason is None
    with pytest.raises(DecisionRefused, match="needs a reason"):
        validate_answer(_ev("review-continue", reason_required={"continue"}), "continue", None)
    with pytest.raises(DecisionRefused, match="refused: budget spent"):
        validate_answer(_ev("review-continue", refused={"continue": "budget spent"}), "a", None)


def test_env_var_names():
    assert env_var("round-continue") == "SCARS_ANSWER_ROUND_CONTINUE"
    assert env_var("spec", "REASON") == "SCARS_REASON_SPEC"


def test_entry_format_is_the_exact_template_order():
    text = format_auto_decision(
        7, stage="iteration", gate_id="round-continue", prompt_type="question",
        workflow_prompt="Round 1 完成。signal_lost: 6 → 5。\n\n(A) 繼續下一輪 (B) 停止，進入 Validation",
        answer="(B) stop: nothing actionable remains", decision="proceed", rationale="no fix items remain",
        principles=["p1"], considerations=["c1"], evidence=["iteration-log.yaml"],
        uncertainty_level="medium", uncertainty_notes="n", consequences=["invoke validate-and-ship"],
        timestamp="2026-07-10T09:12:00+08:00")
    lines = text.splitlines()
    assert lines[0] == "## Decision 007 - iteration.round-continue"
    fields = [re.match(r"^- (\w+):", ln).group(1) for ln in lines if ln.startswith("- ")]
    assert fields == ["decision_id", "timestamp", "stage", "prompt_type", "workflow_prompt", "gatekeeper_answer",
                      "decision", "rationale", "principles_used", "architecture_considerations",
                      "evidence_checked", "uncertainty", "consequences"]
    assert "- decision_id: decision-007" in lines
    assert "- timestamp: 2026-07-10T09:12:00+08:00" in lines
    i = lines.index("- uncertainty:")
    assert lines[i + 1] == "  level: medium" and lines[i + 2] == '  notes: "n"'
    # The prompt's newlines are escaped: one line per field.
    assert lines[5].startswith('- workflow_prompt: "Round 1 完成。') and "\\n\\n(A)" in lines[5]


def test_a_value_cannot_forge_a_heading_or_field():
    evil = 'x"\n## Decision 999 - iteration.fake\n- decision: proceed\r\u2028'
    q = quote(evil)
    assert "\n" not in q and "\r" not in q and "\u2028" not in q
    text = format_auto_decision(1, stage="iteration", gate_id="spec", prompt_type="question", workflow_prompt=evil,
                                answer=evil, decision="reject", rationale=evil, evidence=["f"], consequences=["c"])
    assert len(re.findall(r"^## Decision", text, re.M)) == 1
    assert next_decision_number(text) == 2


def test_next_decision_number_continues_from_the_highest_on_disk():
    assert next_decision_number("") == 1
    assert next_decision_number("## Decision 004 - iteration.x\n\n## Decision 002 - iteration.y\n") == 5


@pytest.mark.parametrize("raw,canon", [
    ("Ready", "ready"), ("accept", "ready"), ("`Almost`", "almost"), ("minor revision", "almost"),
    ("not ready", "not ready"), ("No", "not ready"), ("major revision", "not ready"),
    ("not ready / almost", "not ready"), ("nearly ready", "almost"), (None, "not ready"),
    ("**Ready for submission**", "ready"), ("needs major work", "not ready"),
])
def test_verdict_canonicalization(raw, canon):
    assert canonical_verdict(raw) == canon


def test_gap_id_normalises_before_hashing():
    assert gap_id("Add the --json flag!") == gap_id("add the json flag")
    assert re.fullmatch(r"[0-9a-f]{8}", gap_id("x"))


def test_skip_record_edit_keeps_every_other_byte_and_is_reversible():
    text = "feature: x  # the feature\nstatus: done\ntasks:\n  - id: task-1\n"
    added = edit_skip_record(text, 'signal_lost=3, "no" pattern')
    assert added.startswith(text)
    assert added.endswith('iteration_skip_record: "signal_lost=3, \\"no\\" pattern"\n')
    replaced = edit_skip_record(added, "second")
    assert replaced == text + 'iteration_skip_record: "second"\n'
    assert edit_skip_record(replaced, None) == text
    no_newline = edit_skip_record("feature: x", "r")
    assert no_newline == 'feature: x\niteration_skip_record: "r"\n'
