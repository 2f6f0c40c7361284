"""Reader rules on our own small fixtures (formats.md §1.2–1.3, §1.7, §1.9)."""

from __future__ import annotations

import pytest

from scars.core.errors import PathNotFound
from scars.core.samsara.feature import read_feature
from scars.core.storage import safe_read
from tests.factories import REGISTRY, report, write_feature

ALL_FORMS = report(
    "task-4",
    ks=[
        '"Retry count is hard-coded to 3"',
        'description: "Batch size fixed at 500"\ndeferred_to_feature_iteration: true',
        'description: "CSV export skips empty rows"\nstatus: resolved\nresolution: "fixed"',
        'systemic_ref: doc-only-guard\nnote: "step 2 checked by grep only"',
        'what: "Cache never expires"\nbites_when: "data changes"\nwhere: "src/cache.py:10"',
        'what: "Locale ignored"\nbites_when: "non-UTF-8 locale"\nwhere: "src/fmt.py:3"\nscar_id: SC-1\nstatus: accepted\niteration: {round: 1, action: accept}',
        'what: "Old fix"\nbites_when: "x"\nwhere: "y"\nscar_id: SC-2\nstatus: resolved\nresolution: done\niteration: null',
    ],
    sf=['"Timezone-naive timestamps compare as UTC"'],
    am=[
        'assumption: "Config is UTF-8"\nverified: true\nnote: "tests/test_cfg.py::test_utf8"',
        'assumption: "One writer at a time"\nverified: false\nnote: "lines interleave"',
        'assumption: "Clock is monotonic"',
    ],
)


def test_every_item_form_side_by_side(tmp_path):
    feat = write_feature(tmp_path, {"task-4-scar.yaml": ALL_FORMS}, registry=REGISTRY)
    f = read_feature(feat)
    assert f.parse_failures == ()
    forms = [(it.form, it.text) for it in f.items]
    assert forms == [
        ("gen1", "Retry count is hard-coded to 3"),
        ("gen2", "Batch size fixed at 500"),
        ("systemic_ref", "step 2 checked by grep only"),
        ("gen3", "Cache never expires"),
        ("lifecycle", "Locale ignored"),
        ("gen1", "Timezone-naive timestamps compare as UTC"),
        ("assumption", "One writer at a time"),
        ("assumption", "Clock is monotonic"),
    ]
    # resolved in place (gen2 and era D) and the verified assumption are excluded
    assert sorted(it.text for it in f.resolved) == ["CSV export skips empty rows", "Config is UTF-8", "Old fix"]
    assert f.counts == {"known_shortcuts": 5, "silent_failure_conditions": 1, "unverified_assumptions": 2}
    assert f.signal_lost == 8
    ref = next(it for it in f.items if it.form == "systemic_ref")
    assert ref.registry_state == "found" and ref.registry_description.startswith("A markdown rule")
    gen3 = next(it for it in f.items if it.form == "gen3")
    assert gen3.where == "src/cache.py:10" and gen3.bites_when == "data changes"
    gen1 = f.items[0]
    # The report's debt_location is the report's, never the item's own location (issue 14 point 8).
    assert gen1.where is None and gen1.debt_location == "src/x.py:1"
    life = next(it for it in f.items if it.form == "lifecycle")
    assert (life.status, life.scar_id) == ("accepted", "SC-1")
    # missing `verified`: counted, with a warning naming the item
    assert any("assumptions_made[2]" in str(w) and "verified" in str(w) for w in f.warnings)
    assert next(it for it in f.items if it.text == "Clock is monotonic").verified is None
    # lines point at each item in the file
    text = (feat / "scar-reports/task-4-scar.yaml").read_text().splitlines()
    lines = [it.line for it in f.report_items] if hasattr(f, "report_items") else [it.line for it in f.reports[0].items]
    assert lines == sorted(lines) and len(set(lines)) == len(lines) == 11
    assert all(text[n - 1].startswith("  - ") for n in lines)
    assert text[f.items[1].line - 1] == '  - description: "Batch size fixed at 500"'


def test_legacy_resolved_items_match_a_still_listed_item(tmp_path):
    rep = report(
        ks=['"Retry   count is HARD-coded"', '"Other shortcut"'],
        extra='resolved_items:\n  - original_section: known_shortcuts\n    original_description: "retry count is hard-coded"\n    resolution: "now configurable"\n  - original_section: known_shortcuts\n    original_description: "an item no longer listed"\n    resolution: "gone"',
    )
    f = read_feature(write_feature(tmp_path, {"a.yaml": rep}))
    assert [it.text for it in f.items] == ["Other shortcut"]
    assert f.resolved[0].resolution == "now configurable"
    assert f.signal_lost == 1


def test_report_file_names_are_free_and_yml_is_read(tmp_path):
    feat = write_feature(
        tmp_path,
        {
            "iter-fix-A-scar.yaml": report("iteration-r1", ks=['"a1 thing"']),
            "free name.yml": report("gen3-demo", sf=['"b1 thing"']),
            "notes.txt": "x",
        },
    )
    f = read_feature(feat)
    assert sorted(it.task_id for it in f.items) == ["gen3-demo", "iteration-r1"]
    # Any other file of scar-reports/ is a non-conforming report: listed, never skipped (issue 14).
    assert [pf.file for pf in f.parse_failures] == ["scar-reports/notes.txt"]
    assert f.entry.verdict == "unknown"


def test_unknown_keys_cjk_block_scalars_and_comments(tmp_path):
    rep = """\
    # header comment
    task_id: task-9   # inline comment
    completion_status: done
    future_key: {nested: [1, 2]}
    known_shortcuts:
      - description: >-
          中文描述，跨行的
          folded scalar
        owner_hint: "kept"
    silent_failure_conditions:
      - |
        literal block
        two lines
    assumptions_made: []
    structural_decisions: []
    debt_registered: true
    debt_location: null
    """
    f = read_feature(write_feature(tmp_path, {"t.yaml": rep}))
    assert f.parse_failures == ()
    assert f.items[0].text == "中文描述，跨行的 folded scalar"
    assert f.items[0].extra == {"owner_hint": "kept"}  # shown in status --json and the JSON export
    assert f.items[1].text == "literal block\ntwo lines\n"
    assert f.reports[0].extra["future_key"] == {"nested": [1, 2]}


@pytest.mark.parametrize(
    "text, line, words",
    [
        ("task_id: [unclosed\n", 1, "not YAML"),
        ("# Scar report\n\n- just a list\n", 1, "not a mapping"),
        ("# A markdown report\n\nSome **text** here: with colon\n", 1, "missing task_id"),
        ("## Known shortcuts\n\n- one\n\nA paragraph.\n", 5, "not YAML"),
        ("", None, "empty report"),
    ],
)
def test_unusable_reports_are_parse_failures(tmp_path, text, line, words):
    feat = write_feature(tmp_path, {"bad.yaml": text, "good.yaml": report(ks=['"fine"'])})
    f = read_feature(feat)
    (pf,) = f.parse_failures
    assert pf.file == "scar-reports/bad.yaml" and words in pf.message
    if line is not None:
        assert pf.line == line
    assert f.signal_lost == 1 and f.entry.verdict == "unknown"


def test_unrecognised_item_shape_names_key_and_line_and_stays_readable(tmp_path):
    rep = report(ks=['"ok item"', 'title: "no description key"\nseverity: high'], sf=['"other"'])
    f = read_feature(write_feature(tmp_path, {"t.yaml": rep}))
    (pf,) = f.parse_failures
    assert "known_shortcuts[1]" in pf.message and "title" in pf.message
    assert pf.line == 5
    assert len(f.items) == 3 and not any(it.counted for it in f.items)
    assert f.signal_lost == 0 and f.groups["unaddressed"] == ()


def test_section_that_is_not_a_list(tmp_path):
    rep = 'task_id: t\nknown_shortcuts: "one string"\nsilent_failure_conditions: []\n'
    (pf,) = read_feature(write_feature(tmp_path, {"t.yaml": rep})).parse_failures
    assert "known_shortcuts" in pf.message and pf.line == 2


def test_missing_task_id_is_a_parse_failure(tmp_path):
    f = read_feature(write_feature(tmp_path, {"t.yaml": report(None, ks=['"x"'])}))
    (pf,) = f.parse_failures
    assert "task_id" in pf.message
    assert f.items[0].counted is False


def test_duplicate_key_is_a_parse_failure_naming_key_and_line(tmp_path):
    rep = 'task_id: t\nknown_shortcuts: ["a"]\nsilent_failure_conditions: []\nknown_shortcuts: ["b"]\n'
    (pf,) = read_feature(write_feature(tmp_path, {"t.yaml": rep})).parse_failures
    assert "duplicate key 'known_shortcuts'" in pf.message and pf.line == 4 and "line 2" in pf.message


def test_dangling_ref_with_registry_present(tmp_path):
    rep = report(ks=['systemic_ref: no-such-id\nnote: "x"', '"plain"'])
    f = read_feature(write_feature(tmp_path, {"t.yaml": rep}, registry=REGISTRY))
    assert f.dangling_refs == (("scar-reports/t.yaml", "no-such-id"),)
    (pf,) = f.parse_failures
    assert "no-such-id" in pf.message and pf.line == 4
    assert f.signal_lost == 0 and f.entry.verdict == "unknown"


def test_registry_missing_marks_refs_unknown_but_counted(tmp_path):
    rep = report(ks=['systemic_ref: whatever\nnote: "x"'])
    f = read_feature(write_feature(tmp_path, {"t.yaml": rep}))
    assert f.registry.state == "missing"
    assert f.items[0].registry_state == "unknown" and f.items[0].counted
    assert f.parse_failures == () and f.signal_lost == 1


def test_hostile_yaml_is_a_parse_failure_not_a_crash(tmp_path):
    laughs = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
    )
    deep = "task_id: t\nknown_shortcuts: " + "[" * 200 + "]" * 200 + "\n"
    feat = write_feature(tmp_path, {"laughs.yaml": laughs, "deep.yaml": deep, "ok.yaml": report(ks=['"x"'])})
    (feat / "scar-reports" / "badutf.yaml").write_bytes(b"task_id: t\nknown_shortcuts: ['\xff\xfe']\n")
    f = read_feature(feat)
    reasons = {pf.file.split("/")[-1]: pf for pf in f.parse_failures}
    assert "alias expansion" in reasons["laughs.yaml"].message
    assert "nesting" in reasons["deep.yaml"].message
    assert "invalid UTF-8" in reasons["badutf.yaml"].message and reasons["badutf.yaml"].line == 2
    assert f.signal_lost == 1


def test_cyclic_alias_is_rejected():
    with pytest.raises(safe_read.Unreadable, match="cyclic"):
        safe_read.loads("a: &x [1, *x]\n")


def test_shared_aliases_below_the_limit_load():
    loaded = safe_read.loads("base: &b {k: v}\nitems: [*b, *b, *b]\n")
    assert loaded.value["items"] == [{"k": "v"}] * 3 and loaded.problems == []


def test_bom_and_size_cap(tmp_path, monkeypatch):
    feat = write_feature(tmp_path, {"ok.yaml": report(ks=['"x"'])})
    p = feat / "scar-reports" / "bom.yaml"
    p.write_bytes(b"\xef\xbb\xbf" + report("bom", ks=['"y"']).encode())
    big = feat / "scar-reports" / "big.yaml"
    big.write_text(report("big", ks=['"z"']) + "#" * 5000)
    monkeypatch.setattr(safe_read, "YAML_MAX_BYTES", 4096)
    f = read_feature(feat)
    (pf,) = f.parse_failures
    assert pf.file == "scar-reports/big.yaml" and "limit" in pf.message
    assert sorted(it.task_id for it in f.items if it.counted) == ["bom", "task-1"]


def test_symlinked_report_outside_the_repository_is_not_read(tmp_path):
    outside = tmp_path / "outside.yaml"
    outside.write_text(report(ks=['"secret"']))
    repo = tmp_path / "repo"
    feat = write_feature(repo, {"ok.yaml": report(ks=['"x"'])})
    (feat / "scar-reports" / "link.yaml").symlink_to(outside)
    f = read_feature(feat)
    (pf,) = f.parse_failures
    assert pf.file == "scar-reports/link.yaml" and "outside" in pf.message
    assert all(it.text != "secret" for it in f.items)


def test_not_a_feature_directory(tmp_path):
    with pytest.raises(PathNotFound):
        read_feature(tmp_path / "missing")
    with pytest.raises(PathNotFound):
        read_feature(tmp_path)  # exists, but holds nothing of a feature
    (tmp_path / "f.yaml").write_text("a: 1")
    with pytest.raises(PathNotFound):
        read_feature(tmp_path / "f.yaml")


def test_item_ids_are_stable(tmp_path):
    a = report("task-1", ks=['"alpha shortcut"', '"beta shortcut"', '"alpha shortcut"'], sf=['"gamma"'])
    feat = write_feature(tmp_path, {"task-1-scar.yaml": a, "task-2-scar.yaml": report("task-2", ks=['"delta"'])})
    before = read_feature(feat)
    ids = [it.id for it in before.items]
    assert ids == [it.id for it in read_feature(feat).items]  # same input, same ids
    assert len(set(ids)) == 5 and all(len(i) == 13 for i in ids)
    assert [i[:3] for i in ids] == ["ks-", "ks-", "ks-", "sf-", "ks-"]
    # Add items (also before the old ones) and a report that sorts first.
    b = report(
        "task-1",
        ks=['"new first"', '"beta shortcut"', '"alpha shortcut"', '"alpha shortcut"'],
        sf=['"gamma"', '"more"'],
    )
    (feat / "scar-reports" / "task-1-scar.yaml").write_text(b)
    (feat / "scar-reports" / "a-first-scar.yaml").write_text(report("task-0", ks=['"beta shortcut"']))
    after = read_feature(feat)
    after_ids = {it.id for it in after.items}
    assert set(ids) <= after_ids
    assert len(after_ids) == len(after.items) == 8
    for old in before.items:
        assert after.item(old.id).text == old.text and after.item(old.id).file == old.file


def test_iteration_log_partial_round_and_unknown_keys(tmp_path):
    log = """\
    feature: demo
    signal_lost_initial: 4
    custom_top: kept
    rounds:
      - round: 1
        signal_lost_before: 4
        budget_context: {remaining_rounds_at_start: 2, stagnation_count_at_start: 0, net_rot_previous_round: 0, strategy_hint: explore}
        triage_result:
          fix: ["a"]
          accept:
            - {description: "b", re_review_signal: "s", owner: "o", rationale: "r"}
          defer: []
        signal_lost_after: 3
        decision: continue
        decision_reason: "go on"
        reviewer_notes: "unknown key kept"
      - round: 2
        signal_lost_before: 3
        decision: interrupted
    """
    feat = write_feature(tmp_path, {}, files={"iteration-log.yaml": log})
    f = read_feature(feat)
    log = f.iteration_log
    assert (log.max_rounds, log.budget_present) == (3, False)
    r1, r2 = log.rounds
    assert r1.era == "B" and r1.raw["reviewer_notes"] == "unknown key kept"
    assert r2.decision == "interrupted" and r2.signal_lost_after is None
    assert log.warnings == ()  # an interrupted round may be partial


def test_broken_iteration_log_is_listed(tmp_path):
    feat = write_feature(tmp_path, {"t.yaml": report(ks=['"x"'])}, files={"iteration-log.yaml": "rounds: [\n"})
    f = read_feature(feat)
    assert [pf.file for pf in f.parse_failures] == ["iteration-log.yaml"]
    assert f.iteration_log is None and f.signal_lost == 1


def test_contract_and_execution_mode(tmp_path):
    pre = """\
    # Pre-thinking: demo

    ## Session: 2026-11-02T10:00:00Z
    Execution mode: auto

    ## Evaluation Contract

    **Primary evaluator:** pytest tests/test_export.py
    **Agent can perform it by:** running
    1. `pytest -q`
    2. reading the output
    **Pass signal:** all green
    > amended: include the round-trip test
    **Fail signal:** any red
    **Feedback loop:** fix and rerun
    **Out of scope validation:** none

    ## Step C — Commitment
    **Decision:** Proceed
    """
    f = read_feature(write_feature(tmp_path, {}, files={"1.5-pre-thinking.md": pre}))
    c = f.contract
    assert c.file == "1.5-pre-thinking.md" and f.execution_mode == "auto"
    assert c.agent_can_perform_it_by == "running\n1. `pytest -q`\n2. reading the output"
    assert c.pass_signal == "all green\n> amended: include the round-trip test"
    assert c.out_of_scope_validation == "none"


def test_duplicate_key_inside_an_item_is_found_with_and_without_anchors(tmp_path):
    rep = 'task_id: t\nknown_shortcuts:\n  - description: "a"\n    description: "b"\n'
    (pf,) = read_feature(write_feature(tmp_path, {"t.yaml": rep})).parse_failures
    assert "duplicate key 'description'" in pf.message and pf.line == 4
    with_alias = rep + 'silent_failure_conditions: &s ["x"]\nextra: *s\n'
    (pf,) = read_feature(write_feature(tmp_path / "b", {"t.yaml": with_alias})).parse_failures
    assert "duplicate key 'description'" in pf.message and pf.line == 4
