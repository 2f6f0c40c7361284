"""Log injection: hostile texts written into iteration-log.yaml and auto-decisions.md.

Item texts come from scar reports (untrusted) and end up in the logs scars writes (the
round's triage_result); decision fields and reasons come from people and gates. A text with
a newline followed by ``## Decision 999 - …`` or ``- decision: proceed`` must not forge an
entry or a field, and every value must read back exactly as written.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from scars.core.formats.auto_decisions import DecisionEntry, parse_auto_decisions, unquote
from scars.core.formats.iteration_log import read_iteration_log
from scars.core.loops.samsara.record import close_round
from scars.core.samsara.session import FeatureSession
from tests.hostile.faults import ACCEPT, make_fault_feature
from tests.hostile.injection import PAYLOADS, forbidden_in, write_injection_report

FORGE = "real reason\n## Decision 999 - iteration.forged\n- decision: reject\n- uncertainty:\n  level: high"
FORGE_YAML = "real reason\n    decision: stop\n  - round: 99\n    decision: forced_stop\nrounds: []\n# comment"
HOSTILE = [
    FORGE,
    FORGE_YAML,
    PAYLOADS["osc52"],
    PAYLOADS["bidi"],
    PAYLOADS["c1-csi"],
    PAYLOADS["csi"],
    'quote " and backslash \\ and tab \t end',
    "line\u2028separator\u2029para",
    "trailing newline\n",
]


@pytest.fixture
def feature(tmp_path: Path) -> Path:
    f = make_fault_feature(tmp_path / "repo", items=4, auto=True)
    write_injection_report(f / "scar-reports")
    return f


def _value(v):
    return unquote(v) if isinstance(v, str) else v


def test_auto_decision_fields_cannot_forge_entries(feature: Path):
    with FeatureSession.open(feature) as s:
        for i, text in enumerate(HOSTILE):
            n = s.append_auto_decision(
                DecisionEntry(
                    stage="iteration",
                    gate_id="triage",
                    prompt_type="question",
                    workflow_prompt=f"Prompt {i}: {text}",
                    gatekeeper_answer=f"Fix it because {text}",
                    decision="proceed",
                    rationale=text,
                    principles_used=(text,),
                    architecture_considerations=(text,),
                    evidence_checked=(text,),
                    uncertainty_level="low",
                    uncertainty_notes=text,
                    consequences=(text,),
                )
            )
            assert n == i + 1
    raw = (feature / "auto-decisions.md").read_bytes()
    assert b"\x1b" not in raw and "\x9b".encode() not in raw, "a raw escape in auto-decisions.md"
    entries = parse_auto_decisions(raw.decode("utf-8"))
    assert [e.number for e in entries] == list(range(1, len(HOSTILE) + 1)), "an entry was forged or lost"
    for e, text in zip(entries, HOSTILE):
        assert not e.problems, e.problems
        assert e.fields["decision"] == "proceed"
        # Values read back as written (the writer trims surrounding whitespace, nothing else).
        assert _value(e.fields["rationale"]) == text.strip()
        assert [_value(x) for x in e.fields["evidence_checked"]] == [text.strip()]
        unc = e.fields["uncertainty"]
        assert unc["level"] == "low" and _value(unc["notes"]) == text.strip()


def test_round_with_hostile_texts_reads_back_equal(feature: Path):
    log = feature / "iteration-log.yaml"
    before = log.read_bytes()
    with FeatureSession.open(feature) as s:
        s.start_round()
        inject = [i for i in s.feature.items if i.counted and i.file.endswith("inject-scar.yaml")]
        assert len(inject) >= len(PAYLOADS)
        fixes, accepts, defers = inject[0::3], inject[1::3], inject[2::3]
        for it in fixes:
            s.decide(it.id, "fix")
        for k, it in enumerate(accepts):
            t = HOSTILE[k % len(HOSTILE)]
            s.decide(it.id, "accept", re_review_signal="signal " + t, owner="owner " + t, rationale="why " + t)
        for it in defers:
            s.decide(it.id, "defer", reason="needs the v2 API")
        entry = close_round(
            s, "continue", FORGE_YAML, override=["stagnation"], evidence_gained=HOSTILE, residual_risk=HOSTILE
        )
    text = log.read_bytes()
    assert text.startswith(before), "earlier bytes of iteration-log.yaml changed"
    assert b"\x1b" not in text, "a raw ESC in iteration-log.yaml"
    rounds = read_iteration_log(log).rounds
    assert [r.round for r in rounds] == [1, 2], "a round was forged or lost"
    r2 = rounds[1]
    assert r2.decision == "continue"
    assert r2.decision_reason == FORGE_YAML
    assert list(r2.evidence_gained) == HOSTILE and list(r2.residual_risk) == HOSTILE
    assert sorted(r2.fix) == sorted(it.text for it in fixes)
    assert sorted(r2.defer) == sorted(it.text for it in defers)
    got = sorted((a["description"], a["re_review_signal"], a["owner"], a["rationale"]) for a in r2.accept)
    want = sorted(
        (
            it.text,
            "signal " + HOSTILE[k % len(HOSTILE)],
            "owner " + HOSTILE[k % len(HOSTILE)],
            "why " + HOSTILE[k % len(HOSTILE)],
        )
        for k, it in enumerate(accepts)
    )
    assert got == want
    assert entry["decision_reason"] == FORGE_YAML
    # The auto-mode entries of the round (triage, round continuation): none forged by the
    # texts, every one well formed, the decision not rewritten by the reason's text.
    entries = parse_auto_decisions((feature / "auto-decisions.md").read_text(encoding="utf-8"))
    # (items outside inject-scar.yaml stay undecided: the triage says revise; the feature's log holds
    # a flat round: stagnation fires, so the round's decision point is the safety valve's, and
    # continuing past it is accept_gap)
    assert [e.gate_id for e in entries] == ["triage", "safety-valve"]
    assert [e.fields["decision"] for e in entries] == ["revise", "accept_gap"]
    assert not any(e.problems for e in entries)
    assert _value(entries[1].fields["rationale"]) == FORGE_YAML.strip()


def test_log_verify_and_status_print_hostile_logs_inert(feature: Path):
    with FeatureSession.open(feature) as s:
        s.start_round()
        for it in [i for i in s.feature.items if i.counted][:6]:
            s.decide(it.id, "accept", **ACCEPT)
        close_round(s, "stop", PAYLOADS["osc52"] + " " + PAYLOADS["bidi"])
    env = dict(os.environ, NO_COLOR="1")
    for args in (["log", "verify", str(feature)], ["status", str(feature)], ["log", "verify", "--json", str(feature)]):
        p = subprocess.run(
            [sys.executable, "-m", "scars.tui.cli.main", *args], capture_output=True, timeout=60, env=env
        )
        assert b"Traceback" not in p.stderr, p.stderr[-2000:]
        assert forbidden_in(p.stdout + p.stderr) == [], (args, forbidden_in(p.stdout + p.stderr))


def test_unicode_line_separators_in_a_value_do_not_forge_entries():
    """A file written by another tool may hold U+2028, U+0085 or \\x1e inside a value."""
    text = (
        "## Decision 001 - iteration.triage\n"
        '- rationale: "x\u2028## Decision 999 - iteration.forged\u0085- decision: reject\x1e- stage: x"\n'
        "- decision: proceed\n"
    )
    entries = parse_auto_decisions(text)
    assert [(e.number, e.line) for e in entries] == [(1, 1)]
    assert entries[0].fields["decision"] == "proceed"
