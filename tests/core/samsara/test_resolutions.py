"""Issue 29, fix rounds resolve items (formats.md §1.3 "Decided (from real repositories)"):
``resolved_items`` across reports through the one matcher, explicit pointers first, notes either
way; resolutions claimed in free text; Level-1 deferrals under keys no era defines."""

from __future__ import annotations

from scars.core.samsara import matching, resolutions
from scars.core.samsara.feature import read_feature
from scars.core.samsara.items import claimed_resolution
from scars.core.samsara.matching import match_log
from scars.core.samsara.resolutions import pointer_of
from tests.factories import report, write_feature

HOOK = "The hook template hook.sh.j2 is a structural stub: it never calls the validator, so a bad commit passes."
RETRY = "Retry count is hard-coded to 3 in the loader, with no backoff between attempts."


def _fix_report(section: str, desc: str, name_id: str = "iteration-fix-1") -> str:
    return f"""task_id: {name_id}
completion_status: done
known_shortcuts: []
resolved_items:
  - original_section: "{section}"
    original_description: "{desc}"
    resolution: "the hook now runs the validator"
"""


def _feature(tmp_path, reports, files=None):
    return read_feature(write_feature(tmp_path, reports, files=files))


def test_pointer_parsing():
    assert pointer_of("known_shortcuts (task-6-scar.yaml item 2)") == ("known_shortcuts", "task-6-scar.yaml", None, 2)
    assert pointer_of("silent_failure_conditions (task-3)") == ("silent_failure_conditions", None, "task-3", None)
    assert pointer_of("known_shortcuts") == ("known_shortcuts", None, None, None)


def test_a_fix_report_resolves_the_item_it_points_at_with_a_paraphrase(tmp_path):
    f = _feature(
        tmp_path,
        {
            "task-6-scar.yaml": report("task-6", ks=[f'"{HOOK}"', f'"{RETRY}"']),
            "iteration-fix-1-scar.yaml": _fix_report(
                "known_shortcuts (task-6-scar.yaml item 1)", "hook.sh.j2 stub never calls the validator"
            ),
        },
    )
    assert f.signal_lost == 1
    (it,) = f.resolved
    assert it.text == HOOK and it.resolution == "the hook now runs the validator"
    assert it.notes[0].startswith("resolved by scar-reports/iteration-fix-1-scar.yaml resolved_items[0] (similar")


def test_the_pointer_restricts_the_candidates_to_that_report(tmp_path):
    # The same text in task-2 and task-6: the pointer names task-6's.
    f = _feature(
        tmp_path,
        {
            "task-2-scar.yaml": report("task-2", ks=[f'"{HOOK}"']),
            "task-6-scar.yaml": report("task-6", ks=[f'"{HOOK}"']),
            "iteration-fix-1-scar.yaml": _fix_report("known_shortcuts (task-6-scar.yaml item 1)", HOOK),
        },
    )
    (it,) = f.resolved
    assert it.task_id == "task-6"
    assert [i.task_id for i in f.items] == ["task-2"]


def test_a_pointer_to_a_report_without_the_item_resolves_nothing_there(tmp_path):
    f = _feature(
        tmp_path,
        {
            "task-2-scar.yaml": report("task-2", ks=[f'"{HOOK}"']),
            "task-6-scar.yaml": report("task-6", ks=[f'"{RETRY}"']),
            "iteration-fix-1-scar.yaml": _fix_report("known_shortcuts (task-6-scar.yaml item 1)", HOOK),
        },
    )
    assert f.signal_lost == 2 and f.resolved == ()


def test_a_task_report_entry_without_a_pointer_needs_the_same_text(tmp_path):
    # A task report's entry is its own item removed from its section (the legacy form): a
    # paraphrase of another report's item must not resolve it …
    paraphrase = "hook.sh.j2 stub never calls the validator"
    reports = {
        "task-1-scar.yaml": report("task-1", ks=[f'"{HOOK}"']),
        "task-5-scar.yaml": report(
            "task-5",
            ks=[f'"{RETRY}"'],
            extra=f"""
            resolved_items:
              - original_section: known_shortcuts
                original_description: "{paraphrase}"
                resolution: "x"
            """,
        ),
    }
    assert _feature(tmp_path / "a", reports).signal_lost == 2
    # … unless its text names the task ("… (task-1 scar)"), as real task reports do.
    reports["task-5-scar.yaml"] = reports["task-5-scar.yaml"].replace(paraphrase, paraphrase + " (task-1 scar)")
    f = _feature(tmp_path / "b", reports)
    assert f.signal_lost == 1 and f.resolved[0].task_id == "task-1"
    # … and the same text resolves it across reports without any pointer.
    reports["task-5-scar.yaml"] = reports["task-5-scar.yaml"].replace(paraphrase + " (task-1 scar)", HOOK)
    assert _feature(tmp_path / "c", reports).signal_lost == 1


def test_a_weak_match_resolves_nothing_and_is_listed(tmp_path):
    f = _feature(
        tmp_path,
        {
            "task-6-scar.yaml": report("task-6", ks=[f'"{HOOK}"']),
            "iteration-fix-1-scar.yaml": _fix_report("known_shortcuts", "the hook validator was slow"),
        },
    )
    assert f.signal_lost == 1
    assert any("resolved_items[0]" in str(w) and "weak" in str(w) and "resolves nothing" in str(w) for w in f.warnings)


def test_the_similar_threshold_decides_both_sides(tmp_path, monkeypatch):
    reports = {
        "task-6-scar.yaml": report("task-6", ks=[f'"{HOOK}"']),
        "iteration-fix-1-scar.yaml": _fix_report("known_shortcuts", "hook.sh.j2 stub never calls the validator"),
    }
    assert _feature(tmp_path / "a", reports).signal_lost == 0  # 1.00 of its weight: taken
    monkeypatch.setenv("SCARS_NO_CACHE", "1")
    monkeypatch.setattr(matching, "SIMILAR", 1.01)  # the same score below the threshold: weak, not taken
    assert _feature(tmp_path / "b", reports).signal_lost == 1


def test_an_ambiguous_match_resolves_nothing_and_notes_its_candidates(tmp_path):
    a = "The exporter drops blank rows in the ledger export silently."
    b = "The importer drops blank rows in the ledger import silently."
    f = _feature(
        tmp_path,
        {
            "task-1-scar.yaml": report("task-1", ks=[f'"{a}"', f'"{b}"']),
            "iteration-fix-1-scar.yaml": _fix_report("known_shortcuts", "drops blank rows in the ledger silently"),
        },
    )
    assert f.signal_lost == 2
    assert all(any("may name this item (ambiguous match)" in n for n in it.notes) for it in f.items)


def test_two_entries_naming_one_item_resolve_it_once(tmp_path):
    fix = _fix_report("known_shortcuts (task-6-scar.yaml)", HOOK) + (
        f'  - original_section: "known_shortcuts (task-6-scar.yaml)"\n    original_description: "{HOOK}"\n'
        '    resolution: "again"\n'
    )
    f = _feature(
        tmp_path,
        {"task-6-scar.yaml": report("task-6", ks=[f'"{HOOK}"', f'"{RETRY}"']), "iteration-fix-1-scar.yaml": fix},
    )
    assert f.signal_lost == 1 and len(f.resolved) == 1 and f.resolved[0].resolution == "the hook now runs the validator"


LOG = """feature: demo
signal_lost_initial: 2
rounds:
  - round: 1
    signal_lost_before: 2
    triage_result:
      fix:
        - "hook.sh.j2 stub never calls the validator: now it does"
      accept: []
      defer: []
    fixes_applied: 1
    signal_lost_after: 1
    decision: stop
"""


def test_the_log_gives_a_fix_to_the_item_its_fix_report_resolved_not_the_entry(tmp_path):
    f = _feature(
        tmp_path,
        {
            "task-6-scar.yaml": report("task-6", ks=[f'"{HOOK}"', f'"{RETRY}"']),
            "iteration-fix-1-scar.yaml": _fix_report(
                "known_shortcuts (task-6-scar.yaml item 1)", "hook.sh.j2 stub never calls the validator"
            ),
        },
        files={"iteration-log.yaml": LOG},
    )
    (m,) = match_log(f)
    assert m.target == f.resolved[0].id  # the item, never "resolved_items:…"
    assert m.confidence in ("exact", "normalized", "similar")


def test_an_entry_that_resolved_nothing_stays_a_target_of_the_log(tmp_path):
    f = _feature(
        tmp_path,
        {
            "task-6-scar.yaml": report("task-6", ks=[f'"{RETRY}"']),
            "iteration-fix-1-scar.yaml": _fix_report("known_shortcuts (task-6-scar.yaml item 1)", HOOK),
        },
        files={"iteration-log.yaml": LOG},
    )
    (m,) = match_log(f)
    assert m.target == "resolved_items:scar-reports/iteration-fix-1-scar.yaml#0"


def test_upstream_placement_fix_report_resolves_nothing_of_its_own(upstream):
    # Its entry names a task-2 item that the fixture does not hold; its own item is another text.
    f = read_feature(upstream / "samsara/changes/2026-06-30_placement-consistency-gate")
    assert f.signal_lost == 1 and not any("resolved by" in n for it in f.items for n in it.notes)


# ------------------------------------------------------------------ claimed in the text


def test_claimed_resolution_words():
    assert claimed_resolution("FIXED (see resolved_items): the hook runs") == "FIXED"
    assert claimed_resolution("MITIGATED: a guard bounds it") == "MITIGATED"
    assert claimed_resolution("Fixed: skipped") == "FIXED"
    assert claimed_resolution("[RESOLVED] done") == "[RESOLVED]"
    assert claimed_resolution("Fixed-size buffers overflow on long names") is None
    assert claimed_resolution("Fixed at 500 rows") is None
    assert claimed_resolution("The fix is MITIGATED: later") is None  # only at the start


def test_a_claimed_fix_is_counted_and_noted_unless_an_entry_covers_it(tmp_path):
    claimed = "FIXED (see resolved_items): the hook template never called the validator"
    f = _feature(
        tmp_path / "a", {"task-1-scar.yaml": report("task-1", ks=[f'"{claimed}"', '"MITIGATED: a guard bounds it"'])}
    )
    assert f.signal_lost == 2
    assert [it.notes[0].split(" but ")[0] for it in f.items] == [
        "its text is marked FIXED",
        "its text is marked MITIGATED",
    ]
    assert sum("is marked" in str(w) for w in f.warnings) == 2
    covered = _feature(
        tmp_path / "b",
        {
            "task-1-scar.yaml": report("task-1", ks=[f'"{claimed}"']),
            "iteration-fix-1-scar.yaml": _fix_report("known_shortcuts (task-1)", claimed),
        },
    )
    assert covered.signal_lost == 0 and not any("is marked" in str(w) for w in covered.warnings)


# ------------------------------------------------------------------ deferrals under other keys


def test_a_top_level_deferral_list_is_warned_not_skipped(tmp_path):
    fix = """task_id: iteration-fix-1
completion_status: done
known_shortcuts:
  - description: "The retry loop still has no backoff"
deferred_to_feature_iteration:
  - "The retry loop still has no backoff"
"""
    f = _feature(tmp_path, {"iteration-fix-1-scar.yaml": fix})
    assert f.signal_lost == 1 and not f.items[0].deferred
    assert any("top-level deferred_to_feature_iteration (a list of 1)" in str(w) for w in f.warnings)


def test_an_item_level_deferral_note_key_is_warned_with_its_flag(tmp_path):
    f = _feature(
        tmp_path,
        {
            "task-1-scar.yaml": report(
                "task-1",
                ks=[
                    'description: "a b c d"\ndeferred_to_feature_iteration: true\ndeferred_to_feature_iteration_notes: "later"',
                    'description: "e f g h"\ndeferred_to_feature_iteration_notes: "later"',
                ],
            )
        },
    )
    said = [str(w) for w in f.warnings if "deferred_to_feature_iteration_notes" in str(w)]
    assert len(said) == 2
    assert "known_shortcuts[0]" in said[0] and "is deferred by its" in said[0]
    assert "known_shortcuts[1]" in said[1] and "not deferred" in said[1]
    assert [it.deferred for it in f.items] == [True, False]


def test_the_standard_flag_alone_says_nothing(tmp_path):
    f = _feature(
        tmp_path,
        {"task-1-scar.yaml": report("task-1", ks=['description: "a b c d"\ndeferred_to_feature_iteration: true'])},
    )
    assert not f.warnings


# ------------------------------------------------------------------ ambiguity, whatever the order

EXPORTER = "The exporter drops blank rows in the ledger export silently."
IMPORTER = "The importer drops blank rows in the ledger import silently."


def _accepts(*descriptions: str) -> str:
    lines = "\n".join(f'        - description: "{d}"\n          rationale: "r"' for d in descriptions)
    return f"""feature: demo
rounds:
  - round: 1
    triage_result:
      fix: []
      accept:
{lines}
      defer: []
    decision: stop
"""


def _targets(tmp_path, *descriptions: str) -> list[str | None]:
    f = _feature(
        tmp_path,
        {"task-1-scar.yaml": report("task-1", ks=[f'"{EXPORTER}"', f'"{IMPORTER}"', f'"{RETRY}"'])},
        files={"iteration-log.yaml": _accepts(*descriptions)},
    )
    text = {it.id: it.text for it in f.items}
    return [text.get(m.target) if m.target else None for m in match_log(f)]


def test_a_later_description_naming_the_runner_up_settles_an_earlier_ambiguous_one(tmp_path):
    got = _targets(tmp_path, "drops blank rows in the ledger silently", RETRY, IMPORTER)
    assert got == [EXPORTER, RETRY, IMPORTER]


def test_the_same_when_the_naming_description_comes_first(tmp_path):
    got = _targets(tmp_path, IMPORTER, RETRY, "drops blank rows in the ledger silently")
    assert got == [IMPORTER, RETRY, EXPORTER]


def test_an_ambiguous_description_alone_stays_ambiguous(tmp_path):
    assert _targets(tmp_path, "drops blank rows in the ledger silently", RETRY) == [None, RETRY]


def test_a_round_whose_fix_report_resolved_its_item_counts_the_fix_applied(tmp_path):
    from scars.core.samsara.rounds import round_figures

    reports = {"task-6-scar.yaml": report("task-6", ks=[f'"{HOOK}"', f'"{RETRY}"'])}
    before = _feature(tmp_path / "a", reports)
    hook = next(it.id for it in before.items if it.text == HOOK)
    triage = {hook: {"action": "fix"}}
    start = {"round": 1, "signal_lost_before": 2, "item_ids": [it.id for it in before.items]}
    assert (round_figures(before, start, triage).fixed, len(round_figures(before, start, triage).fix_open)) == (0, 1)
    reports["iteration-fix-1-scar.yaml"] = _fix_report(
        "known_shortcuts (task-6-scar.yaml item 1)", "hook.sh.j2 stub never calls the validator"
    )
    after = _feature(tmp_path / "b", reports)
    fig = round_figures(after, start, triage)
    assert (fig.fixed, fig.fix_open, fig.signal_lost_after) == (1, (), 1)


# The task-2 report the upstream placement feature's fix report resolves is not in the fixture:
# ours, of its shape (the index's comment names its three shortcuts), beside the real fix report.
PLACEMENT_TASK2 = """task_id: task-2
completion_status: done_with_concerns
known_shortcuts:
  - description: >-
      doc-presence != runtime judgement: the reviewer placement dimension is prose only, nothing
      checks that a reviewer applies it.
  - description: >-
      Two sources of truth: the three-state placement model is written in planning Gate 1 and
      again in the reviewer's Gate 2, with diverged wording for the third state ("out of scope" vs
      "not a placement decision") and no canonical anchor.
  - description: >-
      iteration-test _iteration_fix_section anchors on '## Step 3: Fix' / '## Step 4'; a renumber
      could silently widen the scoped section.
silent_failure_conditions: []
assumptions_made: []
"""


def test_upstream_placement_fix_report_resolves_the_task_item_it_fixed(upstream_copy):
    feat = upstream_copy / "changes/2026-06-30_placement-consistency-gate"
    (feat / "scar-reports/task-2-scar.yaml").write_text(PLACEMENT_TASK2, encoding="utf-8")
    f = read_feature(feat)
    (dry,) = [it for it in f.resolved if it.task_id == "task-2"]
    assert dry.text.startswith("Two sources of truth")
    assert "iteration-r1-three-state-scar.yaml resolved_items[0] (similar" in dry.notes[0]
    (fix,) = [m for m in match_log(f) if m.action == "fix"]
    assert fix.target == dry.id  # the round's fix names the item it fixed, not the fix report's entry


def test_an_unpointed_fix_entry_needs_unpointed_similar_both_sides(tmp_path, monkeypatch):
    # "stub never calls the validator" shares 0.x of its weight with HOOK: taken at the bound,
    # not just above it; a pointer brings back the matcher's own SIMILAR.
    monkeypatch.setenv("SCARS_NO_CACHE", "1")
    reports = {
        "task-6-scar.yaml": report("task-6", ks=[f'"{HOOK}"']),
        "iteration-fix-1-scar.yaml": _fix_report(
            "known_shortcuts", "hook stub never calls the validator, bad commits pass review"
        ),
    }
    f = _feature(tmp_path / "a", reports)
    (score,) = {float(n.split(", ")[1].split(":")[0]) for it in f.resolved for n in it.notes}
    assert matching.SIMILAR <= resolutions.UNPOINTED_SIMILAR <= score < 1.0
    monkeypatch.setattr(resolutions, "UNPOINTED_SIMILAR", score + 0.01)
    g = _feature(tmp_path / "b", reports)
    assert g.signal_lost == 1 and any("needs" in str(w) and "weak" in str(w) for w in g.warnings)
    reports["iteration-fix-1-scar.yaml"] = reports["iteration-fix-1-scar.yaml"].replace(
        '"known_shortcuts"', '"known_shortcuts (task-6-scar.yaml)"'
    )
    assert _feature(tmp_path / "c", reports).signal_lost == 0  # pointed: SIMILAR applies


BENCH_ITEM = (
    "The batched batch scheduler swallows the error of currency rounding in encode_render_emit() when two writers "
    "run at once (src/export/m71.py:99). The fallback feature-flag client silently drops null foreign keys in "
    "window_shard_prune()；在高並發下重試計數器可能溢出. The versioned audit logger double counts concurrent writers "
    "in fetch_window_offset(). The shared migration runner caches forever half-open connections in store_lease_index()."
)
BENCH_ENTRY = (
    "The bulk migration runner caches forever concurrent writers in slot_bucket_event() (src/search/m265.py:21)"
)


def test_the_bench_feature_s_random_fix_entry_resolves_nothing(tmp_path):
    # bench/generate.py small (seed 7): a fix report's random sentence and another task's item
    # (texts as generated) share 0.5 of the entry's weight: not a paraphrase of it.
    fix = _fix_report("silent_failure_conditions", BENCH_ENTRY, "iteration-fix-2")
    task = report("task-4", sf=[f'"{BENCH_ITEM}"', '"Other words entirely here"'])
    f = _feature(tmp_path, {"task-4-scar.yaml": task, "iteration-fix-2-scar.yaml": fix})
    assert f.signal_lost == 2
    assert any("needs 0.6" in str(w) for w in f.warnings)


def _many_fix_reports(n: int) -> dict[str, str]:
    """``n`` task reports of one item each and ``n`` fix reports whose entry names one of them by its
    text under a section that names no report (so every entry is matched against the whole pool)."""
    reports = {}
    for i in range(n):
        text = f"Upload worker {i} retries {i + 3} times without any backoff between the attempts"
        reports[f"task-{i}-scar.yaml"] = report(f"task-{i}", ks=[f'"{text}"'])
        reports[f"iteration-fix-{i}-scar.yaml"] = _fix_report("known_shortcuts", text, f"iteration-fix-{i}")
    return reports


def test_the_targets_are_read_once_per_pool_not_once_per_entry(tmp_path, monkeypatch):
    """Before: each resolved_items entry made the matcher read every target again (65 s for a
    cold `status --json` of 5,000 reports, 9 s after, the same output): at 12 entries over one pool,
    12 passes where 1 does."""
    passes = []
    look_for = matching.Matcher._look_for

    def counted(self, keys, heads):
        passes.append(len(self.targets))
        return look_for(self, keys, heads)

    monkeypatch.setattr(matching.Matcher, "_look_for", counted)
    f = _feature(tmp_path, _many_fix_reports(12))
    assert len(f.resolved) == 12 and f.signal_lost == 0  # every entry still resolves its own item
    assert passes.count(12) == 1, passes  # one pass over the pool of 12 targets
