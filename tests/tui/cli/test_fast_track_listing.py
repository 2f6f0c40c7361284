"""A changes/ directory holding only fast-track artefacts is listed as what it is (issue 29):
`scars status REPO` (text and JSON), `scars loops` and the app's Loops inbox."""

from __future__ import annotations

import json

from scars.core.loops import discover_loops
from scars.core.samsara.layout import FAST_TRACK_SAID, find_fast_tracks, find_features
from scars.tui.app.app import ScarsApp
from scars.tui.cli.main import main
from tests.factories import report, wait_until, write_feature
from tests.tui.app.test_app_pilot import SIZE, aio, on_screen, screen_text

FAST = "2026-11-01_typo-hotfix"


def _repo(tmp_path, *, with_feature: bool = True):
    if with_feature:
        write_feature(tmp_path, {"task-1-scar.yaml": report("task-1")})
    fast = tmp_path / "changes" / FAST
    fast.mkdir(parents=True)
    (fast / "fast-track.yaml").write_text('title: "typo in the help text"\nstatus: done\n', encoding="utf-8")
    (tmp_path / "changes" / "2026-11-03_scratch").mkdir()  # neither: no samsara file at all
    return tmp_path


def test_the_layout_finds_the_fast_track_apart(tmp_path):
    root = _repo(tmp_path)
    assert [p.name for p in find_features(root)] == ["2026-11-02_demo"]
    assert [p.name for p in find_fast_tracks(root)] == [FAST]
    # A directory with a feature marker beside fast-track.yaml is a feature, not a fast-track.
    (root / "changes" / FAST / "index.yaml").write_text("tasks: []\n", encoding="utf-8")
    assert find_fast_tracks(root) == [] and FAST in [p.name for p in find_features(root)]


def test_status_repo_lists_it(tmp_path, capsys):
    root = _repo(tmp_path)
    assert main(["status", str(root)]) == 0
    out = capsys.readouterr().out
    assert f"{FAST}  {FAST_TRACK_SAID}" in out and "2026-11-02_demo" in out
    assert main(["status", str(root), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [f["feature"] for f in data["features"]] == ["2026-11-02_demo"]
    assert data["fast_tracks"] == [
        {"name": FAST, "path": f"changes/{FAST}", "kind": "fast-track", "note": FAST_TRACK_SAID}
    ]


def test_status_repo_with_only_a_fast_track(tmp_path, capsys):
    root = _repo(tmp_path, with_feature=False)
    assert main(["status", str(root)]) == 0
    out = capsys.readouterr().out
    assert "No feature directories under" in out and f"{FAST}  {FAST_TRACK_SAID}" in out


def test_loops_lists_it_as_a_fast_track(tmp_path, capsys):
    root = _repo(tmp_path)
    states = discover_loops(root)
    (fast,) = [s for s in states if s.kind == "samsara-fast-track"]
    assert (fast.name, fast.path, fast.status, fast.waiting_for_human) == (FAST, f"changes/{FAST}", "fast-track", False)
    assert main(["loops", str(root), "--json"]) == 0
    kinds = {s["name"]: s["kind"] for s in json.loads(capsys.readouterr().out)["loops"]}
    assert kinds == {"2026-11-02_demo": "samsara", FAST: "samsara-fast-track"}


@aio
async def test_the_loops_inbox_shows_it(tmp_path):
    root = _repo(tmp_path)
    app = ScarsApp(None, inbox=(discover_loops(root), root))
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(app, pilot, "LoopsScreen")
        await pilot.press("j")  # the feature first (by kind), then the fast-track
        await wait_until(pilot, lambda: f"samsara-fast-track {FAST}" in screen_text(app), "its detail")
        text = screen_text(app)
        assert FAST_TRACK_SAID in text and "a fast-track side route: no rounds, nothing to triage" in text
