"""Recorded vs recounted signal_lost (issue 14 point 2) and the seed's net rot (point 3)."""

from __future__ import annotations

import json

import pytest
import yaml

from scars.core.advice.feature import advise_feature, samsara_history
from scars.core.samsara.feature import read_feature
from scars.core.samsara.reconcile import reconcile
from scars.core.samsara.rounds import (
    advice_series,
    evaluate_valves,
    round_rot,
    round_start_snapshot,
    signal_series,
    split_rounds,
)
from scars.core.samsara.session import FeatureSession
from scars.core.samsara.status import feature_to_json
from tests.core.samsara.test_carry_over import REAL, real_copy


def _starts(feature, ids, *starts):
    """The items ``ids`` are exactly those whose text starts with ``starts`` (one each)."""
    texts = sorted(" ".join(it.text.split()) for it in feature.items if it.id in set(ids))
    return len(texts) == len(starts) and all(t.startswith(st) for t, st in zip(texts, sorted(starts)))


def test_search_index_differs_by_six_and_says_which_items(tmp_path):
    f = read_feature(REAL / "changes" / "2026-08-04_search-index")
    rec = reconcile(f)
    assert (rec.recorded_latest, rec.recounted, rec.difference) == (10, 16, 6)
    assert rec.recorded == (("start", 12), ("round 1", 10))
    why = {e["id"]: e for e in rec.explanations}
    assert _starts(f, why["fixed_still_listed"]["items"], "A normalisation rule", "The index is written")
    assert _starts(f, why["informal_resolved"]["items"], "[RESOLVED] Empty documents")
    assert _starts(f, why["never_triaged"]["items"], "Crawl depth", "The stop-word list", "Two pages with the same")
    assert rec.accounted == 6 and "scars counts 6 more" in rec.summary()
    assert "These account for" not in rec.summary()  # all of it derived


def test_report_cache_loop_stopped_counting_its_accepts():
    f = read_feature(REAL / "changes" / "2026-08-11_report-cache")
    rec = reconcile(f)
    # 10, not 11: task-1's resolved_items[0] is a copy of an item's text cut short ("…"), which
    # resolves it (formats.md §1.3, the one matcher's normalised stage)
    assert (rec.recorded_latest, rec.recounted) == (7, 10)
    (e,) = rec.explanations
    assert e["id"] == "accepted_not_counted" and e["count"] == 4
    assert e["categories"] == {"known_shortcuts": 2, "unverified_assumptions": 1, "silent_failure_conditions": 1}


def test_a_consistent_log_agrees():
    rec = reconcile(read_feature(REAL / "changes" / "2026-08-18_audit-trail"))
    assert rec.difference == 0 and rec.explanations == () and rec.summary().endswith("they agree.")


def test_upstream_placement_counts_fewer_and_says_why(upstream):
    f = read_feature(upstream / "samsara/changes/2026-06-30_placement-consistency-gate")
    rec = reconcile(f)
    assert (rec.recorded_latest, rec.recounted, rec.difference) == (3, 1, -2)
    assert rec.explanations == () and rec.not_found == 5
    assert "scars counts 2 fewer" in rec.summary() and "fewer remaining items than the loop counted" in rec.summary()


def test_no_recorded_figure_no_difference(tmp_path):
    from tests.factories import csv_feature

    rec = reconcile(read_feature(csv_feature(tmp_path)))
    assert rec.recorded_latest is None and rec.difference is None


def test_the_series_is_labelled_and_a_scars_round_is_a_recount(tmp_path):
    feat = real_copy(tmp_path, "2026-08-04_search-index")
    f = read_feature(feat)
    assert [(p.label, p.value, p.basis) for p in signal_series(f.iteration_log, f.signal_lost)] == [
        ("start", 12, "recorded"),
        ("round 1", 10, "recorded"),
        ("now", 16, "recounted"),
    ]
    with FeatureSession.open(feat, user="alice") as s:
        s.start_round()
        s.close_round("stop", "nothing actionable this round; the docs move decides the defers")
    log = yaml.safe_load((feat / "iteration-log.yaml").read_text(encoding="utf-8"))
    assert log["rounds"][1]["counted_by"] == "scars"
    f = read_feature(feat)
    assert [(p.label, p.value, p.basis) for p in signal_series(f.iteration_log, f.signal_lost)] == [
        ("start", 12, "recorded"),
        ("round 1", 10, "recorded"),
        ("round 2", 16, "recounted"),
    ]
    # The advisor reasons on one count: scars' round 2 from its own start, never 10 -> 16.
    assert [(p.label, p.value) for p in advice_series(f.iteration_log, f.signal_lost)] == [
        ("start", 16),
        ("round 2", 16),
    ]
    points, _, _ = samsara_history(f)
    assert [p.count for p in points] == [16, 16]
    advice = advise_feature(f)
    assert not any("grew from 10 to 16" in r.message for r in advice.recommendations)
    assert not any(fm.active and fm.name == "trigger_cascade" for fm in advice.failure_modes)
    assert advice.notes and "scars counts 6 more" in advice.notes[0]
    assert "recounted by scars" in advice.notes[0]


def test_status_json_keys(tmp_path):
    out = feature_to_json(read_feature(REAL / "changes" / "2026-08-04_search-index"))
    assert [p["basis"] for p in out["signal_lost_series"]] == ["recorded", "recorded", "recounted"]
    r = out["signal_lost_reconciliation"]
    assert (r["recorded_latest"], r["recounted"], r["difference"], r["accounted"]) == (10, 16, 6, 6)
    assert r["counts"] == {"known_shortcuts": 7, "silent_failure_conditions": 5, "unverified_assumptions": 4}
    json.dumps(out)


def test_status_summary_labels_both_series(capsys):
    from scars.tui.cli.main import main

    assert main(["status", str(REAL / "changes" / "2026-08-04_search-index")]) == 0
    out = capsys.readouterr().out
    assert "signal_lost recorded by the loop (iteration-log.yaml): 12 → 10" in out
    assert "signal_lost recounted by scars (seed 002 Step 1 rules): 16" in out
    assert "scars counts 6 more" in out


def test_advise_prints_the_difference(capsys):
    from scars.tui.cli.main import main

    assert main(["advise", str(REAL / "changes" / "2026-08-04_search-index")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Note: signal_lost 16 recounted by scars" in out and "scars counts 6 more" in out


# ------------------------------------------------------------------ the seed's net rot


def test_report_cache_round_1_warns_by_the_seed_rule():
    f = read_feature(REAL / "changes" / "2026-08-11_report-cache")
    r1, r2 = split_rounds(f.iteration_log)[0]
    rot = round_rot(r1)
    # 1 fix resolved 1 item and introduced 3: net rot 2, although signal_lost fell 10 -> 8.
    assert (rot["new"], rot["resolved"], rot["net_rot"], rot["signal_delta"]) == (3, 1, 2, -2)
    assert round_rot(r2)["net_rot"] == -1
    # The loop's own round-2 budget_context was computed by the rule: it agrees.
    assert r2.budget_context["net_rot_previous_round"] == rot["net_rot"]
    first = type(f.iteration_log)(file="iteration-log.yaml", rounds=(r1,), max_rounds=3)
    assert round_start_snapshot(first, 8)["net_rot_previous_round"] == 2
    assert round_start_snapshot(first, 8)["strategy_hint"] == r2.budget_context["strategy_hint"] == "minimal_fix"


def test_report_cache_valve_after_round_1_fires():
    from scars.core.records import replace

    f = read_feature(REAL / "changes" / "2026-08-11_report-cache")
    r1 = split_rounds(f.iteration_log)[0][0]
    only_r1 = replace(f, iteration_log=replace(f.iteration_log, rounds=(r1,)))
    v = next(v for v in evaluate_valves(only_r1) if v.id == "net_rot")
    assert v.active and "produced 3 new scar items and resolved 1" in v.message


@pytest.mark.parametrize(
    "name",
    [
        "2026-05-20_extract-pre-thinking-step",
        "2026-06-30_placement-consistency-gate",
        "2026-07-02_workflow-subtraction-optimization",
    ],
)
def test_upstream_budget_contexts_agree_with_the_rule(upstream, name):
    """Every round's recorded net_rot_previous_round is the rule's figure for the round before it
    (0 before any round); so are the stagnation count and the remaining rounds."""
    from scars.core.records import replace

    f = read_feature(upstream / "samsara" / "changes" / name)
    log = f.iteration_log
    for r in log.rounds:
        earlier = replace(log, rounds=tuple(x for x in log.rounds if x.round < r.round))
        snap = round_start_snapshot(earlier, r.signal_lost_before)
        for key in ("net_rot_previous_round", "stagnation_count_at_start", "remaining_rounds_at_start"):
            assert snap[key] == r.budget_context[key], (name, r.round, key)


def test_upstream_placement_round_1_net_rot_is_zero(upstream):
    f = read_feature(upstream / "samsara/changes/2026-06-30_placement-consistency-gate")
    rot = round_rot(f.iteration_log.rounds[0])
    assert (rot["new"], rot["resolved"], rot["net_rot"]) == (1, 1, 0)  # after - before would say -3
