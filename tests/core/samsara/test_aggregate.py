"""Aggregation rules (formats.md §1.3–1.4) on our own small fixtures."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from scars.core.model import GROUPS
from scars.core.samsara.aggregate import entry_verdict
from scars.core.samsara.feature import read_feature
from scars.core.samsara.status import feature_to_json
from scars.core.text import tokens
from tests.factories import REGISTRY, report, write_feature
from tests.hypothesis_profiles import examples


def test_literal_cross_task_pattern_by_normalised_text(tmp_path):
    feat = write_feature(
        tmp_path,
        {
            "task-1-scar.yaml": report("task-1", ks=['"Retry count is  hard-coded"', '"only here"']),
            "task-2-scar.yaml": report("task-2", sf=['"retry COUNT is hard-coded"']),
        },
    )
    f = read_feature(feat)
    (pat,) = f.cross_task_patterns
    assert {f.item(i).file for i in pat} == {"scar-reports/task-1-scar.yaml", "scar-reports/task-2-scar.yaml"}
    assert set(f.groups["cross_task_patterns"]) == set(pat)
    assert f.entry.verdict == "gate"  # a pattern asks the gate even with signal_lost 3 < 5
    assert "1 cross-task pattern" in f.entry.record


def test_same_text_twice_in_one_report_is_not_a_pattern(tmp_path):
    feat = write_feature(tmp_path, {"t.yaml": report(ks=['"same"', '"same"'])})
    f = read_feature(feat)
    assert f.cross_task_patterns == () and f.entry.verdict == "skip"


def test_systemic_ref_pattern_across_reports(tmp_path):
    ref = 'systemic_ref: doc-only-guard\nnote: "{}"'
    feat = write_feature(
        tmp_path,
        {
            "a.yaml": report("a", ks=[ref.format("lands in step 2")]),
            "b.yaml": report("b", sf=[ref.format("lands elsewhere")]),
        },
        registry=REGISTRY,
    )
    f = read_feature(feat)
    assert len(f.cross_task_patterns) == 1 and len(f.cross_task_patterns[0]) == 2


def test_groups_partition_counted_items(tmp_path):
    feat = write_feature(
        tmp_path,
        {
            "a.yaml": report(
                "a", ks=['"shared rot"', 'description: "later"\ndeferred_to_feature_iteration: true', '"plain"']
            ),
            "b.yaml": report("b", ks=['description: "shared rot"\ndeferred_to_feature_iteration: true']),
            "c.yaml": "- not a mapping\n",
        },
    )
    f = read_feature(feat)
    grouped = [i for g in GROUPS for i in f.groups[g]]
    counted = [it.id for it in f.items if it.counted]
    assert sorted(grouped) == sorted(counted) and len(grouped) == len(set(grouped)) == 4
    # a deferred item that is part of a pattern is in the pattern group only
    assert [f.item(i).text for i in f.groups["deferred_from_level_1"]] == ["later"]
    assert len(f.groups["cross_task_patterns"]) == 2
    assert f.entry.verdict == "unknown"


def test_entry_verdicts_and_records():
    assert entry_verdict(4, 0, 0).verdict == "skip"
    assert (
        entry_verdict(4, 0, 0).record == "signal_lost=4, no cross-task pattern, iteration skipped (reply to override)"
    )
    assert entry_verdict(5, 0, 0).verdict == "gate"
    assert entry_verdict(0, 2, 0).verdict == "gate"
    v = entry_verdict(9, 1, 2)
    assert v.verdict == "unknown" and "2 parse failure" in v.record


def test_possible_patterns_are_separate_from_the_literal_rule(tmp_path):
    feat = write_feature(
        tmp_path,
        {
            "a.yaml": report("a", ks=['"Export retries are hard-coded to three attempts in the uploader"']),
            "b.yaml": report("b", sf=['"The uploader hard-codes export retries at three attempts"']),
            "c.yaml": report("c", ks=['"Completely unrelated logging gap in scheduler"']),
        },
    )
    f = read_feature(feat)
    assert f.cross_task_patterns == ()
    (pp,) = f.possible_patterns
    assert {f.item(i).file for i in pp["ids"]} == {"scar-reports/a.yaml", "scar-reports/b.yaml"}
    assert pp["similarity"] >= 0.5
    assert f.groups["cross_task_patterns"] == ()  # never counted as the literal rule


def test_possible_patterns_skip_literal_duplicates_and_same_report(tmp_path):
    text = '"Export retries are hard-coded to three attempts in the uploader"'
    feat = write_feature(
        tmp_path,
        {
            "a.yaml": report("a", ks=[text, '"Export retries hard-coded to three attempts in uploader code"']),
            "b.yaml": report("b", ks=[text]),
        },
    )
    f = read_feature(feat)
    assert len(f.cross_task_patterns) == 1
    # the paraphrase in a.yaml is similar to the pattern member in b.yaml -> one possible pattern
    (pp,) = f.possible_patterns
    assert len({f.item(i).file for i in pp["ids"]}) == 2


def test_tokens_handle_cjk():
    assert {"系統", "統性"} <= tokens("系統性 category")
    assert "the" not in tokens("the cache")


def test_feature_json_shape(tmp_path):
    feat = write_feature(tmp_path, {"a.yaml": report("a", ks=['"x"'], am=['assumption: "y"\nverified: false'])})
    d = feature_to_json(read_feature(feat))
    for key in (
        "feature",
        "signal_lost",
        "counts",
        "groups",
        "possible_patterns",
        "parse_failures",
        "dangling_refs",
        "entry",
        "items",
        "rounds",
    ):
        assert key in d
    assert d["counts"] == {"known_shortcuts": 1, "silent_failure_conditions": 0, "unverified_assumptions": 1}
    assert set(d["groups"]) == set(GROUPS)
    for key in ("id", "category", "text", "task_id", "file", "line", "deferred", "systemic_ref", "counted"):
        assert key in d["items"][0]


@settings(max_examples=examples(40), deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["ks", "sf", "am_f", "am_t", "res", "def"]), st.integers(0, 5)),
        max_size=12,
    )
)
def test_signal_lost_is_the_sum_of_counted_remaining_items(tmp_path_factory, spec):
    ks, sf, am = [], [], []
    expected = {"known_shortcuts": 0, "silent_failure_conditions": 0, "unverified_assumptions": 0}
    for n, (kind, word) in enumerate(spec):
        text = f"item {n} word{word}"
        if kind == "ks":
            ks.append(f'"{text}"')
            expected["known_shortcuts"] += 1
        elif kind == "sf":
            sf.append(f'"{text}"')
            expected["silent_failure_conditions"] += 1
        elif kind == "am_f":
            am.append(f'assumption: "{text}"\nverified: false')
            expected["unverified_assumptions"] += 1
        elif kind == "am_t":
            am.append(f'assumption: "{text}"\nverified: true')
        elif kind == "res":
            ks.append(f'description: "{text}"\nstatus: resolved\nresolution: ok')
        else:
            sf.append(f'what: "{text}"\nbites_when: x\nwhere: y\ndeferred_to_feature_iteration: true')
            expected["silent_failure_conditions"] += 1
    feat = write_feature(tmp_path_factory.mktemp("f"), {"t.yaml": report(ks=ks, sf=sf, am=am)})
    f = read_feature(feat)
    assert f.counts == expected
    assert f.signal_lost == sum(expected.values()) == sum(len(v) for v in f.groups.values())


EVALUATOR_INDEX = (
    "feature: demo\nstatus: in_progress\niteration_entry:\n  route: unknown\n  evaluator: {value}\n  signal_lost: 1\n"
)


def test_a_failing_primary_evaluator_is_a_cross_task_pattern_for_the_entry(tmp_path):
    """Seed 002 Step 1: a failing Primary evaluator joins the remaining set as a cross-task
    pattern, so 1 item (< 5, no literal pattern) still asks the gate — never a default skip."""
    reports = {"task-1-scar.yaml": report("task-1", ks=['"only here"'])}
    failing = read_feature(
        write_feature(tmp_path / "fail", reports, files={"index.yaml": EVALUATOR_INDEX.format(value="fail")})
    )
    assert failing.entry.verdict == "gate"
    assert "the Primary evaluator fails (index.yaml iteration_entry.evaluator: fail)" in failing.entry.reasons[-1]
    assert "1 cross-task pattern(s)" in failing.entry.record
    for value in ("pass", "unknown"):
        other = read_feature(
            write_feature(tmp_path / value, reports, files={"index.yaml": EVALUATOR_INDEX.format(value=value)})
        )
        assert other.entry.verdict == "skip"


def test_entry_verdict_with_a_failing_evaluator():
    assert entry_verdict(0, 0, 0, evaluator_fails=True).verdict == "gate"
    assert entry_verdict(0, 0, 1, evaluator_fails=True).verdict == "unknown"  # parse failures first
