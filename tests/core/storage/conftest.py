"""Fixtures of the feature cache's tests (test_cache, test_cache_lazy)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scars.core.storage import cache
from tests.core.storage.test_cache import gen


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, dict]:
    out = tmp_path / "repo"
    manifest = gen.generate("small", out, seed=3)
    return out, manifest


@pytest.fixture
def cache_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The cache on, in tmp_path, with a short racy window (files settle after 50 ms)."""
    d = tmp_path / "cache"
    monkeypatch.setenv("SCARS_CACHE_DIR", str(d))
    monkeypatch.delenv("SCARS_NO_CACHE", raising=False)
    monkeypatch.setattr(cache, "RACY_NS", 50_000_000)
    return d
