"""Fixtures of the app and CLI tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.factories import app_repo


@pytest.fixture
def feature_dir(tmp_path: Path) -> Path:
    """The app repository's feature (``tests.factories.app_repo``) in a fresh ``repo`` directory."""
    root = tmp_path / "repo"
    root.mkdir()
    return app_repo(root)
