"""Hostile loop state files: each becomes a listed parse failure, never a crash or an escape."""

from __future__ import annotations

import json

from scars.core.loops import discover_loops
from scars.core.loops.base import read_json


def test_json_edge_cases(tmp_path):
    f = tmp_path / "x.json"
    f.write_text('{"a": NaN}')
    assert read_json(f, tmp_path)[1].message.startswith("invalid JSON: non-standard JSON constant")
    f.write_text("[" * 100_000 + "]" * 100_000)
    value, failure = read_json(f, tmp_path)
    assert value is None and "nested too deeply" in failure.message
    f.write_bytes(b'{"a": "\xff\xfe"}')
    assert "invalid UTF-8" in read_json(f, tmp_path)[1].message
    f.write_bytes(b'\xef\xbb\xbf{"a": 1}')  # a UTF-8 BOM is accepted
    assert read_json(f, tmp_path) == ({"a": 1}, None)
    assert "not found" in read_json(tmp_path / "missing.json", tmp_path)[1].message
    assert "not a regular file" in read_json(tmp_path, tmp_path)[1].message


def test_symlinks_out_of_the_scanned_tree_are_not_read(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.json").write_text(json.dumps({"features": {"stolen": {"matchRate": 1}}}))
    repo = tmp_path / "repo"
    state_dir = repo / ".bkit" / "state"
    state_dir.mkdir(parents=True)
    (state_dir / "pdca-status.json").symlink_to(outside / "secret.json")
    # A symlinked directory is not followed at all.
    (repo / "docs").mkdir()
    (repo / "docs" / "loop").symlink_to(outside, target_is_directory=True)
    states = discover_loops(repo)
    assert len(states) == 1
    assert "points outside the repository; not read (a symlink leads out)" in states[0].parse_failures[0].message
    assert all("stolen" not in s.name for s in states)


def test_directory_symlink_loop_terminates(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "loop").symlink_to(tmp_path, target_is_directory=True)
    assert discover_loops(tmp_path) == []


def test_wrong_shapes_everywhere(tmp_path):
    lf = tmp_path / ".loop-spec/features/odd"
    lf.mkdir(parents=True)
    (lf / "feature.json").write_text(
        json.dumps(
            {
                "iterate": {"maxIterations": "ten", "used": "x", "history": {}, "lastVerdict": [1], "lastRoute": 7},
                "warnings": "nope",
                "artifacts": [],
                "pendingRemediationTasks": 3,
            }
        )
    )
    stage = tmp_path / "review-stage"
    stage.mkdir()
    (stage / "REVIEW_STATE.json").write_text(
        json.dumps({"round": "four", "last_score": True, "last_verdict": 3, "rounds": "none", "status": ["x"]})
    )
    sprints = tmp_path / ".bkit/state/sprints"
    sprints.mkdir(parents=True)
    (sprints / "s.json").write_text(json.dumps({"iterateHistory": [1, {"matchRate": "high"}], "config": "x"}))
    states = {s.kind: s for s in discover_loops(tmp_path)}
    spec = states["loop-spec"]
    assert spec.budget.limit == 10 and spec.budget.used == 0
    assert len(spec.parse_failures) >= 4
    review = states["aris"]
    assert review.budget.used is None and review.stop_rule.met is False
    assert any("not a round number" in f.message for f in review.parse_failures)
    sprint = states["bkit-sprint"]
    assert sprint.budget.used == 1 and sprint.trend == ()
    assert json.dumps([s.to_dict() for s in states.values()])  # always serialisable


def test_hostile_names_reach_the_report_inert(tmp_path, capsys):
    from scars.tui.cli.main import main

    name = "evil\x1b[2J\x1b]0;title\x07[red]x[/red]\u202e"
    d = tmp_path / ".loop-spec/features/evil"
    d.mkdir(parents=True)
    (d / "feature.json").write_text(json.dumps({"slug": name}))
    assert main(["loops", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "[red]x[/red]" in out and "<U+202E>" in out
