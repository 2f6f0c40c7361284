"""Bare `scars` at a repository root reads every loop once (issue 31: each feature was read three
times — to pick the one to open, for the other waiting loops, and again for the inbox) and picks
what to open by the loop states' own rule."""

from __future__ import annotations

import os
import shutil

import pytest

from scars.core.loops import discover_loops
from scars.core.samsara.session import FeatureSession
from scars.tui.cli.commands import _app, home
from tests.factories import DEMO_CHANGES, run_cli, samsara_corpus


def _repo(tmp_path, n: int = 3):
    root = tmp_path / "repo"
    demo = next(DEMO_CHANGES.iterdir())
    for k in range(n):
        shutil.copytree(demo, root / "changes" / f"2026-11-{k + 1:02d}_demo-{k + 1}")
    return root


def test_bare_scars_reads_each_feature_once(tmp_path, monkeypatch, capsys):
    root = _repo(tmp_path)
    opened: list = []
    real = FeatureSession.open.__func__  # type: ignore[attr-defined]

    def counting(cls, feature_dir, **kw):
        opened.append(os.path.basename(feature_dir))
        return real(cls, feature_dir, **kw)

    monkeypatch.setattr(FeatureSession, "open", classmethod(counting))
    monkeypatch.setenv("SCARS_NO_CACHE", "1")
    monkeypatch.chdir(root)
    code, _out, err = run_cli([], capsys)
    assert code == 2  # no terminal: it names what waits and does not start the app
    assert "Waiting for a person: 2026-11-03_demo-3, 2026-11-02_demo-2, 2026-11-01_demo-1" in err
    assert sorted(opened) == ["2026-11-01_demo-1", "2026-11-02_demo-2", "2026-11-03_demo-3"]


@pytest.mark.parametrize("feature", samsara_corpus(), ids=lambda p: p.name)
def test_a_feature_needs_triage_when_its_state_counts_an_undecided_item(feature, tmp_path):
    """The one rule of what bare `scars` and `scars triage` open: the loop state's count of
    undecided items, which is the session's own view (a counted item without a decision)."""
    copy = tmp_path / "changes" / feature.name
    shutil.copytree(feature, copy)
    (state,) = [s for s in discover_loops(tmp_path) if s.kind == "samsara"]
    with FeatureSession.open(copy, read_only=True) as s:
        undecided = [it for it in s.feature.items if it.counted and it.id not in s.decisions]
    assert _app.needs_triage(state) == bool(undecided)
    assert _app.waiting_features([state], tmp_path) == ([tmp_path / state.path] if undecided else [])


def test_only_features_of_the_root_s_changes_are_picked(tmp_path):
    root = _repo(tmp_path, 1)
    nested = tmp_path / "repo" / "sub" / "changes"
    shutil.copytree(next((root / "changes").iterdir()), nested / "2026-12-01_nested")
    states = discover_loops(root)
    assert len([s for s in states if s.kind == "samsara"]) == 2  # the nested one is a loop state …
    assert _app.waiting_features(states, root) == [root / "changes" / "2026-11-01_demo-1"]  # … not picked


def test_home_opens_the_inbox_on_the_states_it_read(tmp_path, monkeypatch):
    root = _repo(tmp_path)
    monkeypatch.chdir(root)
    monkeypatch.setattr(home, "interactive", lambda: True)
    computed: list = []
    monkeypatch.setattr(home, "beside_the_app", lambda fn, args, also=(): computed.append(also) or fn(*args))
    shown: list = []
    monkeypatch.setattr(home, "launch_inbox", lambda where, states: shown.append((where, states)) or 0)
    assert home.run(None) == 0  # type: ignore[arg-type]
    assert computed == [("scars.core.loops", "scars.tui.app.screens.loops")]
    ((where, states),) = shown
    assert where == root and [s.name for s in states] == [s.name for s in discover_loops(root)]
