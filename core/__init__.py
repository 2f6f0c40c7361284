"""scars.core — the domain and the file formats of scars.

Pure Python: this package never imports textual, rich, questionary or scars.tui (an
import-linter contract in pyproject.toml, and tests/core/test_purity.py). The public face is
``__all__`` below; the names are imported on first use (PEP 562), so ``import scars.core``
stays cheap for ``scars --help`` and ``scars status``. docs/ARCHITECTURE.md describes the layers.
"""

from __future__ import annotations

from scars.core.lazy import public_face

# The version of the distribution, spelled once (pyproject.toml reads it at build time): a
# literal, so `scars --version`, start-up and the cache key never ask importlib.metadata.
__version__ = "0.1.0"

# public name -> module that defines it (a package for `gates`)
_PUBLIC = {
    "read_feature": "scars.core.samsara.feature",
    "FeatureSession": "scars.core.samsara.session",
    "discover_loops": "scars.core.loops.discover",
    "gates": "scars.core.gates",
}

__all__ = sorted(_PUBLIC)


__getattr__, __dir__ = public_face(__name__, globals(), _PUBLIC)
