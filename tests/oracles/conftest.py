"""Oracle tests: the loops' own code (``../shared/oracles/``, see PROVENANCE.md there) run on
what scars wrote. They read or run the oracles in place (never copied into the project) and
skip cleanly when ``../shared``, bash, jq or node is absent (CI installs jq and node: ``.ci/run``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.factories import ROOT

ORACLES = ROOT.parent / "shared" / "oracles"


@pytest.fixture
def oracles() -> Path:
    if not ORACLES.is_dir():
        pytest.skip("../shared/oracles is not present")
    return ORACLES


def need(*tools: str) -> None:
    """Skip the test when one of ``tools`` is not on PATH."""
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed")
