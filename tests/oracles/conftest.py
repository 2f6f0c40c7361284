"""Oracle tests: the loops' own code (``../shared/oracles/``, see PROVENANCE.md there) run on
what scars wrote. They read or run the oracles in place (never copied into the project) and
skip cleanly when ``../shared``, bash, jq, gawk or node is absent (CI installs them: ``.ci/run``).

loop-spec's scripts call ``awk`` with POSIX interval expressions (``/^#{1,6}[[:space:]]/`` in
``converged-floor.sh``), which mawk — Debian's default ``awk`` — reads literally: it then counts
the checkboxes of every section after Good Enough. :func:`gawk_env` runs them with gawk as ``awk``.
"""

from __future__ import annotations

import os
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


def awk_env(tmp_path: Path, awk: str = "gawk") -> dict[str, str]:
    """The environment a loop-spec script runs in with ``awk`` (default gawk) first on PATH as
    ``awk`` (a symlink in a folder of tmp_path; skip when it is not installed)."""
    need(awk)
    folder = tmp_path / f"{awk}-as-awk"
    folder.mkdir(exist_ok=True)
    link = folder / "awk"
    if not link.exists():
        link.symlink_to(shutil.which(awk) or awk)
    return {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"}


def gawk_env(tmp_path: Path) -> dict[str, str]:
    return awk_env(tmp_path, "gawk")
