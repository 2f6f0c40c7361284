"""Shared test fixtures.

Upstream files written by other people's runs are read in place from
``../shared/fixtures/upstream`` (never copied into the project); tests that need them skip
cleanly only when that directory is absent.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from scars.core import settings
from tests import hypothesis_profiles  # noqa: F401  (the Hypothesis profile, loaded before any test module)
from tests.factories import UPSTREAM

# Stable terminal-facing output in every test: no colour, no inherited Textual settings.
# (pytest-textual-snapshot's own TEXTUAL_SNAPSHOT_* variables pass its temp dir to xdist workers.)
for _name in list(os.environ):
    if _name.startswith("TEXTUAL_") and not _name.startswith("TEXTUAL_SNAPSHOT"):
        del os.environ[_name]
os.environ.setdefault("NO_COLOR", "1")
# A developer's own ~/.config/scars (config.toml: columns, theme, user; keymap.toml) never changes
# what the tests see, and no test writes into it: the tests' config home is a fresh directory.
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="scars-test-config-")
# Nor into ~/.local/state/scars (the intents of interrupted gate records, scars.core.storage.intent).
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="scars-test-state-")
os.environ.pop("SCARS_STATE_DIR", None)
# Nor into ~/.loop-spec: loop-spec 7.x's state home (scars.core.loops.loopspec.v7) is the tests' own.
os.environ["LOOP_SPEC_HOME"] = tempfile.mkdtemp(prefix="scars-test-loop-spec-home-")
os.environ["SCARS_USER"] = os.environ.get("SCARS_TEST_USER", "test-user")
# Tests read their inputs afresh: the feature cache (scars.core.storage.cache) stays off unless a test
# turns it on for itself (tests/core/storage/test_cache.py), so no test writes into ~/.cache.
os.environ["SCARS_NO_CACHE"] = "1"


@pytest.fixture(autouse=True)
def _environment_read_afresh(monkeypatch):
    """scars reads the environment once (scars.core.settings): each test starts without a
    snapshot, so what it sets before its first use of scars is what scars sees.

    No test runs in the agent session the machine running the suite may be (CI inside Claude
    Code, Codex CLI, Gemini CLI): every variable an agent sets is cleared, and a test that wants
    one sets it itself (scars.core.provenance)."""
    for name in (*settings.AGENT_VARS, "SCARS_ALLOW_AGENT_ANSWERS"):
        monkeypatch.delenv(name, raising=False)
    settings.clear()
    yield
    settings.clear()


@pytest.fixture
def upstream() -> Path:
    """The upstream fixture tree, read in place; skips when ../shared is absent."""
    if not UPSTREAM.is_dir():
        pytest.skip("../shared/fixtures/upstream is not present")
    return UPSTREAM


@pytest.fixture
def upstream_copy(upstream: Path, tmp_path: Path) -> Path:
    """A writable copy (in tmp_path, never in the project) of the upstream samsara tree."""
    dst = tmp_path / "samsara"
    shutil.copytree(upstream / "samsara", dst)
    for p in dst.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    dst.chmod(0o755)
    return dst
