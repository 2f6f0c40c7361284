"""Contract: one signal_lost series for a feature, whoever shows it.

The app's header and trends screen, `scars loops --json`, `scars advise --json` and the round
gate's fallback for a round without a recorded `signal_lost_before` all read
``scars.core.samsara.rounds.signal_series``. The log below is one where the former copies
disagreed: `signal_lost_initial` (9) differs from round 1's `signal_lost_before` (8), and
round 1 has no `signal_lost_after` (round 2 started from 7).
"""

from __future__ import annotations

import asyncio
import html
import json
import re

from textual.widgets import Sparkline

from scars.core.advice.feature import samsara_history
from scars.core.samsara.feature import read_feature
from scars.core.samsara.rounds import signal_before_round, signal_series
from scars.tui.app.app import ScarsApp
from scars.tui.app.screens.trends import trend_charts
from scars.tui.cli.main import main
from tests.factories import samsara_feature, wait_settled, wait_until

LOG = """\
feature: demo
signal_lost_initial: 9
budget:
  max_rounds: 4
  reviewer_retry_limit: 2
rounds:
  - round: 1
    signal_lost_before: 8
    decision: continue
    decision_reason: "round 2 goes on"
  - round: 2
    signal_lost_before: 7
    signal_lost_after: 6
    decision: continue
    decision_reason: "one more round"
"""

# start = signal_lost_initial; round 1 = what round 2 started from; round 2 = its after; now = 5 items.
VALUES = [9, 7, 6, 5]
LABELS = ["start", "round 1", "round 2", "now"]
# The log's figures are the loop's own; "now" is scars' recount (a log round scars closed says so).
BASES = ["recorded", "recorded", "recorded", "recounted"]


def _feature(tmp_path):
    feature_dir = samsara_feature(tmp_path)
    (feature_dir / "iteration-log.yaml").write_text(LOG, encoding="utf-8")
    return feature_dir


def _cli_json(capsys, *args: str):
    assert main(list(args)) == 0
    return json.loads(capsys.readouterr().out)


def test_the_core_series_of_the_disagreeing_log(tmp_path):
    feature = read_feature(_feature(tmp_path))
    series = signal_series(feature.iteration_log, feature.signal_lost)
    assert [p.value for p in series] == VALUES
    assert [p.label for p in series] == LABELS
    assert [p.source for p in series] == [
        "signal_lost_initial",
        "round 2 signal_lost_before",
        "round 2 signal_lost_after",
        "current signal_lost",
    ]
    assert [p.basis for p in series] == BASES


def test_scars_loops_and_the_advisor_show_the_series(tmp_path, capsys):
    feature_dir = _feature(tmp_path)
    loops = _cli_json(capsys, "loops", str(tmp_path), "--json")
    (samsara,) = [s for s in loops["loops"] if s["kind"] == "samsara"]
    assert [p["value"] for p in samsara["history"]] == VALUES
    # Two counts in one series: each point labelled with the count it is (issue 14 point 2).
    assert [p["label"] for p in samsara["history"]] == [f"{x} ({b})" for x, b in zip(LABELS, BASES)]
    # The trend joins one count only (the loop's record here); scars' recount now is said apart.
    assert samsara["trend"] == VALUES[:-1]
    assert samsara["trend_label"] == "signal_lost recorded by the loop (scars recounts 5 now)"
    assert samsara["details"]["signal_lost_difference"] == -1  # 5 recounted, 6 recorded

    advice = _cli_json(capsys, "advise", str(feature_dir), "--json")
    # The advisor's iterations are the series without its "now" point (now is not an iteration).
    assert [p["trigger_count"] for p in advice["history"]] == VALUES[:-1]
    assert [p["label"] for p in advice["history"]] == LABELS[:-1]
    assert [p["quality"] for p in advice["history"]] == [round(1 - v / 9, 4) for v in VALUES[:-1]]
    points, _, _ = samsara_history(read_feature(feature_dir))
    assert [p.count for p in points] == VALUES[:-1]


def test_the_gate_fallback_takes_the_series_point_before_the_round(tmp_path):
    feature = read_feature(_feature(tmp_path))
    log, now = feature.iteration_log, feature.signal_lost
    assert signal_before_round(log, 1, now) == 8  # recorded: the round's own value
    assert signal_before_round(log, 2, now) == 7
    assert signal_before_round(log, 3, now) == 6  # not recorded: round 2's point of the series


def _screen_text(app: ScarsApp) -> str:
    parts = re.findall(r">([^<]*)</text>", app.export_screenshot())
    return " ".join(html.unescape("".join(parts)).replace("\xa0", " ").split())


def test_the_app_header_trends_screen_and_round_gate_show_the_series(tmp_path):
    feature_dir = _feature(tmp_path)

    async def run() -> None:
        app = ScarsApp(feature_dir, user="alice")
        async with app.run_test(size=(140, 40)) as pilot:
            await app.wait_loaded()
            await wait_settled(pilot, "the load shown and laid out")
            spark = app.screen.query_one("#header-spark", Sparkline)
            # The sparkline draws one count (the loop's record); the text shows both, labelled.
            await wait_until(pilot, lambda: list(spark.data or []) == VALUES[:-1], "the header's sparkline")
            assert "signal_lost 5 scars · loop 9→7→6" in _screen_text(app)  # the tooltip says by how much and why

            await pilot.press("t")
            await wait_until(pilot, lambda: type(app.screen).__name__ == "TrendsScreen", "the trends screen")
            (chart, *_) = trend_charts(app.screen.feature, app.screen.decisions)
            assert chart.series[0].values == [9, 7, 6, None]  # recorded by the loop
            assert chart.series[1].values == [None, None, None, 5]  # recounted by scars
            assert chart.x_labels == ["start", "R1", "R2", "now"]
            await pilot.press("escape")
            await wait_until(pilot, lambda: type(app.screen).__name__ != "TrendsScreen", "back to the items")

            # No round is open in the journal: `g` asks, then starts round 3 as `scars round start` does
            # (from the signal_lost now) and shows the figures `scars gate round-continue --json`
            # reports for it (tests/tui/test_gate_contract.py); the series' fallback serves a round
            # recorded without its start (tests/core/gates/test_gates_samsara.py).
            await pilot.press("g")
            await wait_until(pilot, lambda: type(app.screen).__name__ == "ConfirmRoundStart", "asked to start it")
            await pilot.press("y", "enter")
            await wait_until(pilot, lambda: type(app.screen).__name__ == "RoundGate", "the round gate")
            assert "Round 3 is open and nothing was decided in it yet. signal_lost 5 → 5" in _screen_text(app)

    asyncio.run(run())
