"""Contract: one basis per figure (issue 29). The loop's recorded counts and scars' recount are
never joined in one figure: seed 002's final transition line, `scars loops`' trend (text and
JSON) and the app's header sparkline all read ``scars.core.samsara.rounds.one_basis_series``
and agree on N₀ and N_final, and each says which basis it is.

The feature is the real shape where they were joined: the loop recorded 12 → 10 in round 1 by
its own count, scars recounts 16 (the loop's fixed-but-listed and informal items), and a
scars-run round 2 fixes one item (16 → 15). Joined, the line read "signal_lost: 12 → 15".
"""

from __future__ import annotations

import asyncio
import json

from textual.widgets import Sparkline

from scars.core.samsara.feature import read_feature
from scars.core.samsara.rounds import one_basis_series, transition_line
from scars.core.samsara.session import FeatureSession
from scars.tui.app.app import ScarsApp
from scars.tui.cli.main import main
from tests.core.samsara.test_carry_over import real_copy
from tests.factories import resolve_in_report, wait_settled, wait_until

CRAWL = (
    "Crawl depth is hard-coded to 6 in crawler.py; a site deeper than that is indexed partially without any warning."
)


def _item(feature, start: str) -> str:
    (it,) = [i for i in feature.items if " ".join(i.text.split()).startswith(start)]
    return it.id


def _closed(tmp_path, capsys):
    feat = real_copy(tmp_path, "2026-08-04_search-index")
    with FeatureSession.open(feat, user="alice") as s:
        s.start_round()
        s.decide(_item(s.feature, "Crawl depth"), "fix")
    resolve_in_report(feat, CRAWL)
    argv = ["round", "close", "--feature", str(feat), "--decision", "stop", "--reason", "the rest waits for v2"]
    assert main([*argv, "--rule3-none", "--json"]) == 0
    return feat, json.loads(capsys.readouterr().out)["transition"]


def test_the_transition_line_takes_both_ends_from_scars_recount(tmp_path, capsys):
    _, line = _closed(tmp_path, capsys)
    assert "signal_lost: 16 → 15（recounted by scars, from round 2）。" in line
    assert "12 →" not in line and "10 →" not in line  # the loop's own count is not N₀


def test_the_transition_line_of_a_loop_recorded_start_and_scars_round_one():
    # The loop recorded signal_lost_initial 9; scars' round 1 started from its recount, 31.
    from scars.core.model import IterationLog

    line = transition_line(
        IterationLog(file="iteration-log.yaml", signal_lost_initial=9),
        round_no=1,
        signal_before=31,
        signal_after=30,
        fixed=1,
        accepted=0,
        deferred=0,
    )
    assert "signal_lost: 31 → 30（recounted by scars, from round 1）" in line


def test_loops_trend_the_app_and_the_line_agree(tmp_path, capsys):
    feat, line = _closed(tmp_path, capsys)
    f = read_feature(feat)
    span = one_basis_series(f.iteration_log, f.signal_lost)
    assert [p.value for p in span.points] == [16, 15] and span.basis == "recounted" and span.from_round == 2
    assert f"signal_lost: {span.first} → {span.last}（{span.label()}）" in line

    assert main(["loops", str(feat.parent.parent), "--json"]) == 0
    (state,) = [s for s in json.loads(capsys.readouterr().out)["loops"] if s["kind"] == "samsara"]
    assert state["trend"] == [16, 15]  # never 12 → 10 → 15
    assert state["trend_label"] == "signal_lost recounted by scars, from round 2"
    assert [p["value"] for p in state["history"]] == [12, 10, 15]  # the history keeps both, labelled
    assert [p["label"] for p in state["history"]] == ["start (recorded)", "round 1 (recorded)", "round 2 (recounted)"]

    assert main(["loops", str(feat.parent.parent)]) == 0
    (trend,) = [ln for ln in capsys.readouterr().out.splitlines() if ln.strip().startswith("trend")]
    assert "signal_lost recounted by scars, from round 2: 16 → 15" in trend

    async def run() -> None:
        app = ScarsApp(feat, user="alice")
        async with app.run_test(size=(140, 40)) as pilot:
            await app.wait_loaded()
            await wait_settled(pilot, "the load shown and laid out")
            spark = app.screen.query_one("#header-spark", Sparkline)
            await wait_until(pilot, lambda: list(spark.data or []) == [16, 15], "the header's sparkline")

    asyncio.run(run())


def test_a_loop_recorded_trend_keeps_the_recount_apart(tmp_path, capsys):
    feat = real_copy(tmp_path, "2026-08-04_search-index")
    assert main(["loops", str(feat.parent.parent), "--json"]) == 0
    (state,) = [s for s in json.loads(capsys.readouterr().out)["loops"] if s["kind"] == "samsara"]
    assert state["trend"] == [12, 10]
    assert state["trend_label"] == "signal_lost recorded by the loop (scars recounts 16 now)"
