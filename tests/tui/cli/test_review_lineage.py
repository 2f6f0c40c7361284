"""A review gate's loop is named by its lineage (mechanist / aris) everywhere it is shown."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from scars.core.gates import gather
from scars.core.gates import requests as rq
from scars.tui.cli.render.gate_prompts import render_evidence
from tests.factories import clean_env, mechanist_stage, run_cli


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_env(monkeypatch)


def test_a_review_request_names_its_lineage_and_nothing_else(tmp_path, capsys):
    """A Mechanist loop's evidence says mechanist (Evidence.loop_name): its request, `scars
    requests` and the CLI's gate text say it too; a request file naming another loop than its
    gate's lineages is shown under the gate's loop."""
    (tmp_path / ".git").mkdir()
    stage = mechanist_stage(tmp_path, None)
    ev = gather("review-continue", stage)
    assert ev.loop_name() == "mechanist" == ev.as_json()["loop"]
    req = rq.post_request(ev, stage, user="agent")
    got = rq.load_request(tmp_path, req.id)
    assert got.loop == "aris" and got.loop_label == "mechanist"  # routing stays the gate's
    code, out, _ = run_cli(["requests", str(tmp_path)], capsys)
    assert code == 0 and "review-continue (mechanist)" in out
    shown = io.StringIO()
    render_evidence(Console(file=shown, width=200, color_system=None), ev)  # the CLI's text view
    assert "loop: mechanist" in shown.getvalue()
    forged = got.evidence | {"loop": "samsara"}
    assert rq.Request(**{**got.__dict__, "evidence": forged}).loop_label == "aris"
