"""The hostile repository every test of tests/hostile/test_hostile_links.py and its neighbours
builds on (``tests/hostile/repos.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile.repos import World, make_world


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    """A repository (``repo``), a canary tree beside it (``canary``) and the user's state directory."""
    return make_world(tmp_path, monkeypatch)
