"""`scars cache`: what the cache holds, and `scars cache clean` (issue 31)."""

from __future__ import annotations

import json
import os
import time

import pytest

from scars.tui.cli import main as cli
from tests.core.storage.test_cache_bound import DAY, _entry


@pytest.fixture
def cache_on(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("SCARS_CACHE_DIR", str(d))
    monkeypatch.delenv("SCARS_NO_CACHE", raising=False)
    return d


def _run(argv, capsys):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_scars_cache_clean(cache_on, capsys):
    now = time.time()
    old = _entry(cache_on, 1, age_days=0, size=2048)
    for f in old.files:
        os.utime(cache_on / f, (now - 45 * DAY,) * 2)
    _entry(cache_on, 2, age_days=0, size=100)
    for f in (f"feature-{2:032x}.pickle",):
        os.utime(cache_on / f, (now - 10 * DAY,) * 2)
    code, out, _ = _run(["cache", "clean", "--dry-run"], capsys)
    assert code == 0 and out.endswith("would remove 1 entry (2.0 KiB), kept 1 (100 B)\n")
    assert len(list(cache_on.iterdir())) == 2
    code, out, _ = _run(["cache", "clean", "--older-than", "7", "--json"], capsys)
    got = json.loads(out)
    assert code == 0 and got["removed"] == {"entries": 2, "bytes": 2148} and got["kept"] == {"entries": 0, "bytes": 0}
    assert list(cache_on.iterdir()) == []
    code, out, _ = _run(["cache"], capsys)
    assert code == 0 and "holds    0 entries, 0 B" in out
    code, _, err = _run(["cache", "clean", "--max-size", "-1"], capsys)
    assert code == 2 and "--max-size must be a finite number ≥ 0, not '-1'" in err
