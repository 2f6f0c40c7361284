"""Fuzz targets (hypothesis) for the scar-report reader and the auto-decisions.md parser.

The default suite runs a short pass (``SCARS_FUZZ_EXAMPLES``, default 25 examples per
target). For a long run::

    SCARS_FUZZ_EXAMPLES=20000 pytest tests/hostile/test_hostile_fuzz.py -p no:randomly
    pytest -m slow tests/hostile/test_hostile_fuzz.py      # 3,000 examples per target

Invariants: reading never raises; every report file is either read or listed as a parse
failure with a reason (never dropped silently); every counted item comes from a report that
was read; the parser never raises and returns entries in file order.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scars.core.formats.auto_decisions import parse_auto_decisions
from scars.core.samsara.feature import read_feature
from tests.hostile.corpus import build_base
from tests.hypothesis_profiles import examples

QUICK = int(os.environ.get("SCARS_FUZZ_EXAMPLES", "25"))
LONG = int(os.environ.get("SCARS_FUZZ_EXAMPLES_SLOW", "3000"))
COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def feature(tmp_path_factory) -> Path:
    return build_base(tmp_path_factory.mktemp("fuzz") / "repo")


def _check_report(feature: Path, data: bytes) -> None:
    path = feature / "scar-reports" / "fuzz-scar.yaml"
    path.write_bytes(data)
    f = read_feature(feature)  # must not raise
    failed = {Path(pf.file).name: pf for pf in f.parse_failures}
    read = {Path(r.file).name for r in f.reports if r.parse_failure is None}
    assert "fuzz-scar.yaml" in failed or "fuzz-scar.yaml" in read, "report dropped silently"
    if "fuzz-scar.yaml" in failed:
        assert failed["fuzz-scar.yaml"].message.strip()
    for it in f.items:
        if it.counted:
            assert Path(it.file).name in read, f"counted item from an unread report: {it.file}"
    assert f.signal_lost == sum(1 for it in f.items if it.counted)
    assert isinstance(f.signal_lost, int) and f.signal_lost >= 0


# --- structured, YAML-ish reports: the schema's keys with values of any shape ---

KEYS = st.sampled_from(
    [
        "task_id",
        "completion_status",
        "known_shortcuts",
        "silent_failure_conditions",
        "assumptions_made",
        "debt_registered",
        "debt_location",
        "narrative",
        "resolved_items",
        "description",
        "deferred_to_feature_iteration",
        "status",
        "resolution",
        "systemic_ref",
        "note",
        "what",
        "bites_when",
        "where",
        "accepted_because",
        "scar_id",
        "iteration",
        "assumption",
        "verified",
        "original_section",
        "original_description",
        "x",
    ]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True),
    st.text(max_size=30),
    st.sampled_from(["resolved", "open", "accepted", "known-systemic-fact", "SC-1", "done"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=5)),
    max_leaves=25,
)
REPORTS = st.dictionaries(KEYS, VALUES, max_size=9)


def _dump(doc) -> bytes:
    return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False).encode("utf-8")


@st.composite
def mutated(draw):
    """A dumped structured report with a few bytes replaced, inserted or cut."""
    data = bytearray(_dump(draw(REPORTS)))
    for _ in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(["replace", "insert", "cut"]))
        pos = draw(st.integers(0, max(len(data) - 1, 0)))
        chunk = draw(
            st.sampled_from(
                [
                    b"[",
                    b"{",
                    b"&a ",
                    b"*a",
                    b"!!python/object ",
                    b"\t",
                    b"\x00",
                    b"\xff",
                    b"- ",
                    b": ",
                    b"\n",
                    b"'",
                    b'"',
                    b"? ",
                    b"---\n",
                    b"%YAML 1.1\n",
                ]
            )
        )
        if op == "replace" and data:
            data[pos : pos + len(chunk)] = chunk
        elif op == "insert":
            data[pos:pos] = chunk
        elif data:
            del data[pos : pos + draw(st.integers(1, 20))]
    return bytes(data)


@settings(max_examples=examples(QUICK), **COMMON)
@given(doc=REPORTS)
def test_fuzz_reader_structured(feature, doc):
    _check_report(feature, _dump(doc))


@settings(max_examples=examples(QUICK), **COMMON)
@given(data=mutated())
def test_fuzz_reader_mutated(feature, data):
    _check_report(feature, data)


@settings(max_examples=examples(QUICK), **COMMON)
@given(data=st.binary(max_size=2000))
def test_fuzz_reader_bytes(feature, data):
    _check_report(feature, data)


# --- auto-decisions.md ---

LINES = st.one_of(
    st.sampled_from(
        [
            "## Decision 001 - iteration.triage",
            "## Decision 002 - iteration.round-continuation",
            "## Decision 1 - x",
            "## Decision 999999999999999999999999 - a.b",
            "## Decision abc - x",
            "## Decision 003 -",
            "## Decision",
            "- decision_id: decision-001",
            "- timestamp: 2026-01-01T00:00:00Z",
            "- stage: iteration",
            "- prompt_type: question",
            '- workflow_prompt: "Round 1 done"',
            '- gatekeeper_answer: "Stop"',
            "- decision: proceed",
            "- decision: nonsense",
            '- rationale: "r"',
            "- principles_used:",
            '  - "p"',
            "- architecture_considerations:",
            "- evidence_checked:",
            "- uncertainty:",
            "  level: low",
            "  level: [",
            '  notes: "n"',
            "- consequences:",
            "  -",
            "- ",
            "-",
            "",
            "# heading",
            "```",
            "\t- decision: reject",
            "- decision_id:",
            "- uncertainty: high",
            "    level: medium",
        ]
    ),
    st.text(max_size=60).map(lambda s: s.replace("\n", " ")),
)


def _check_parse(text: str) -> None:
    entries = parse_auto_decisions(text)
    lines = [e.line for e in entries]
    assert lines == sorted(lines), "entries out of file order"
    n = len(re.split(r"\r\n|\r|\n", text))  # lines as an editor counts them
    for e in entries:
        assert 1 <= e.line <= n
        assert isinstance(e.number, int)
        assert isinstance(e.fields, dict)


@settings(max_examples=examples(QUICK), **COMMON)
@given(lines=st.lists(LINES, max_size=60), crlf=st.booleans())
def test_fuzz_autodecisions_structured(lines, crlf):
    _check_parse(("\r\n" if crlf else "\n").join(lines))


@settings(max_examples=examples(QUICK), **COMMON)
@given(text=st.text(max_size=3000))
def test_fuzz_autodecisions_text(text):
    _check_parse(text)


# --- long runs on demand ---


@pytest.mark.slow
@settings(max_examples=LONG, **COMMON)
@given(data=st.one_of(mutated(), st.binary(max_size=4000), REPORTS.map(_dump)))
def test_fuzz_reader_long(feature, data):
    _check_report(feature, data)


@pytest.mark.slow
@settings(max_examples=LONG, **COMMON)
@given(lines=st.lists(LINES, max_size=200))
def test_fuzz_autodecisions_long(lines):
    _check_parse("\n".join(lines))
