"""A request this checkout did not post (shipped in a clone, copied in) is planted wherever the
inbox is listed, by the one core rule (``requests.open_requests`` → ``not_posted_here``):
`scars requests --json`, `scars loops --json` (and its text) and the app's Loops screen name the
same requests planted, and the one posted here pending."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

from textual.widgets import DataTable

from scars.core import gates
from scars.core.gates import requests as rq
from scars.tui.app.app import ScarsApp
from tests.factories import app_repo, clean_env, loop_spec_feature, run_cli, settled, wait_until
from tests.tui.app.test_app_pilot import SIZE
from tests.tui.app.test_read_only_app import _to_loops as to_loops


def _inbox(tmp_path: Path, monkeypatch) -> tuple[Path, Path, str, str]:
    """(root, samsara feature, the id of a request posted here, the id of one copied in from
    another checkout of the same repository)."""
    clean_env(monkeypatch, user="bob")
    root = tmp_path / "mine"
    (root / ".git").mkdir(parents=True)
    feature = app_repo(root)
    spec = loop_spec_feature(root)
    own = rq.post_request(gates.gather("spec", spec), spec, user="agent", root=root)
    other = tmp_path / "theirs"
    (other / ".git").mkdir(parents=True)
    theirs = loop_spec_feature(other)
    planted = rq.post_request(gates.gather("spec", theirs), theirs, user="mallory", root=other)
    shutil.copy(rq.inbox_dir(other) / f"{planted.id}.json", rq.inbox_dir(root) / f"{planted.id}.json")
    return root, feature, own.id, planted.id


def test_scars_loops_scars_requests_and_the_app_agree_on_what_is_planted(tmp_path, monkeypatch, capsys):
    root, feature, own, planted = _inbox(tmp_path, monkeypatch)
    want = {own: "pending", planted: "planted"}

    code, out, _ = run_cli(["requests", str(root), "--json"], capsys)
    assert code == 0
    by_requests = {r["id"]: r["state"] for r in json.loads(out)["requests"]}

    code, out, _ = run_cli(["loops", str(root), "--json"], capsys)
    assert code == 0
    listed = json.loads(out)
    by_loops = {r["id"]: r["state"] for r in listed["requests"]}
    assert listed["planted"] == 1
    why = next(r["not_posted_here"] for r in listed["requests"] if r["id"] == planted)
    assert why.startswith("not posted here (posted in another checkout")

    code, text, _ = run_cli(["loops", str(root)], capsys)
    assert code == 0
    assert "2 open gate request(s) — 1 planted: not posted in this checkout" in text
    assert f"{planted}  planted " in text and f"{own}  pending " in text

    async def in_the_app() -> dict[str, str]:
        app = ScarsApp(feature, user="bob")
        async with app.run_test(size=SIZE) as pilot:
            await to_loops(app, pilot)
            screen = app.screen
            await wait_until(pilot, lambda: len(screen.requests) == 2 and settled(app), "the inbox read")
            table = screen.query_one("#loops-table", DataTable)
            shown = {v.request.id: v.state for v in screen.requests}
            for v in screen.requests:  # the row says it too
                assert str(table.get_row(f"request:{v.request.id}")[0]) == v.state.upper()
            return shown

    by_app = asyncio.run(in_the_app())
    assert by_requests == by_loops == by_app == want
