"""Properties of the loop parsers: total on any text, results inside their documented ranges."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from scars.core.loops.loopspec.reader import converged_floor, extract_verdict, gap_id, parse_backlog, parse_iteration_md
from scars.core.loops.review.auto_review import parse_auto_review, parse_reviewer_memory
from scars.core.loops.review.verdicts import canonical_verdict
from scars.core.loops.review.verify import parse_verify_buckets
from tests.hypothesis_profiles import examples

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400)
MARKDOWNISH = st.lists(
    st.sampled_from(
        [
            "## Round 1",
            "## Iteration 2 (x)",
            "# Night",
            "```",
            "- Score: 7/10",
            "- **Verdict:** Almost",
            "| a | b | FAIL |",
            "- [ ] x",
            "### Good Enough",
            "- criterion: GE-001",
            "text",
            "",
        ]
    ),
    max_size=30,
).map("\n".join)


@settings(max_examples=examples(100), deadline=None)
@given(st.one_of(TEXT, st.sampled_from(["not ready", "Ready", "almost ready", "No", "accept", "NOT READY!!"])))
def test_canonical_verdict_is_one_of_three(text):
    assert canonical_verdict(text) in (None, "ready", "almost", "not ready")
    if "not ready" in " ".join(text.lower().split()):
        assert canonical_verdict(text) == "not ready"


@settings(max_examples=examples(100), deadline=None)
@given(st.one_of(TEXT, MARKDOWNISH))
def test_parsers_are_total(text):
    got = extract_verdict(text)
    assert got.ok == (got.problem is None)
    if got.ok:
        assert {"converged", "deterministic_gate_passed", "summary"} <= set(got.verdict)
    for run in parse_auto_review(text):
        numbers = [s["number"] for s in run["sections"]]
        assert numbers == sorted(set(numbers))  # a run's sections strictly grow
        for s in run["sections"]:
            assert s["verdict"] in (None, "ready", "almost", "not ready")
    parse_reviewer_memory(text)
    assert all(v >= 0 for v in parse_verify_buckets(text).values())
    parse_backlog(text)
    parse_iteration_md(text)
    code, lines = converged_floor(text, text)
    assert code == (1 if lines else 0)


@given(TEXT)
def test_gap_id_is_eight_hex_and_normalisation_invariant(text):
    gid = gap_id(text)
    assert len(gid) == 8 and all(c in "0123456789abcdef" for c in gid)
    if text.isascii():
        assert gap_id(text.upper()) == gid
    assert gap_id(f"  {text} !! ") == gid
