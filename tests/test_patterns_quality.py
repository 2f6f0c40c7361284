"""The labelled set of possible patterns (bench/patterns_labels.yaml) read in place, every label
resolving to one text, and the rule's precision / recall on the groups present here."""

from __future__ import annotations

import importlib.util
import sys

import pytest
import yaml

from tests.factories import ROOT


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


sys.path.insert(0, str(ROOT / "bench"))
corpus = _load("patterns_corpus")
quality = _load("patterns_quality")


@pytest.fixture
def groups(upstream):
    gs, missing = corpus.load()
    assert {g.name for g in gs} >= {"demo-csv-export", "phase4-auto-iteration", "placement-consistency-gate"}
    return gs


def test_every_label_resolves_and_says_why(groups):
    spec = yaml.safe_load(corpus.LABELS.read_text(encoding="utf-8"))
    assert all(lab.get("reason") for g in spec["groups"] for lab in g.get("labels") or [])
    demo = next(g for g in groups if g.name == "demo-csv-export")
    assert len(demo.same) == 6 and demo.related


def test_a_label_that_matches_no_text_is_an_error(tmp_path, upstream):
    bad = tmp_path / "labels.yaml"
    bad.write_text(
        yaml.safe_dump(
            {
                "groups": [
                    {
                        "name": "demo",
                        "split": "tune",
                        "sources": ["demo:changes/2026-11-02_csv-export"],
                        "labels": [
                            {
                                "a": "task-1-scar.yaml: no such text",
                                "b": "task-2-scar.yaml: Upload",
                                "label": "same",
                                "reason": "x",
                            }
                        ],
                    }
                ]
            }
        ),
        encoding="utf-8",
    )
    with pytest.raises(corpus.CorpusError, match="matches 0 texts"):
        corpus.load(path=bad)


def test_precision_and_recall_meet_the_target_on_the_tune_groups_here(groups):
    tune = [g for g in groups if g.split == "tune"]
    s = quality.score(tune, quality.patterns.possible_patterns)
    assert s["precision"] >= quality.TARGET_PRECISION
    assert s["recall"] >= quality.TARGET_RECALL
    old = quality.score(tune, quality.baseline_patterns)
    assert old["recall"] < s["recall"]  # the rule it replaced finds fewer of the labelled pairs


def test_the_held_out_groups_here_meet_the_target(groups):
    # issue 29: precision ≥ 0.85 at recall ≥ 0.6 on the held-out split (the groups present here)
    held = [g for g in groups if g.split == "heldout"]
    assert {g.name for g in held} >= {"real-shaped-search-index", "real-shaped-report-cache", "real-shaped-audit-trail"}
    s = quality.score(held, quality.patterns.possible_patterns)
    assert s["tp"] + s["fn"] >= 30
    assert s["precision"] >= quality.TARGET_PRECISION == 0.85
    assert s["recall"] >= quality.TARGET_RECALL == 0.6


def _split(tp: int, fp: int, fn: int) -> dict:
    p = tp / (tp + fp) if tp + fp else None
    r = tp / (tp + fn) if tp + fn else None
    return {"groups": ["g"], "new": {"precision": p, "recall": r, "tp": tp, "fp": fp, "fn": fn}}


@pytest.mark.parametrize(
    ("tp", "fp", "fn", "met"),
    [
        (17, 3, 0, True),  # precision 0.85 exactly
        (16, 3, 0, False),  # 0.842
        (3, 0, 2, True),  # recall 0.6 exactly
        (5, 0, 4, False),  # 0.556
        (0, 0, 0, False),  # nothing to judge by
    ],
)
def test_the_held_out_target_is_precision_at_recall_inclusive(tp, fp, fn, met):
    v = quality.heldout_verdict(_split(tp, fp, fn), [])
    assert v["met"] is met and v["verdict"] == ("met" if met else "NOT met")
    assert v["same"] == tp + fn


def test_the_bench_prints_the_held_out_figures_and_the_target(groups, capsys):
    assert quality.main(["--no-time"]) == 0
    out = capsys.readouterr().out
    assert "target: precision ≥ 0.85 at recall ≥ 0.6 on the held-out split" in out
    (line,) = [ln for ln in out.splitlines() if "HELD OUT" in ln]
    held = [g for g in groups if g.split == "heldout"]
    s = quality.score(held, quality.patterns.possible_patterns)
    assert f"precision {s['precision']:.2f}, recall {s['recall']:.2f}" in line
    assert line.endswith("target met")
    assert "held-out groups not here: gemini-cli-integration" in out  # no --samsara checkout here
