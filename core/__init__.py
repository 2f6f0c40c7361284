"""scars.core — the domain and the file formats of scars.

Pure Python: this package never imports textual, rich, questionary or scars.tui (an
import-linter contract in pyproject.toml, and tests/core/test_purity.py). The public face is
``__all__`` below; the names are imported on first use (PEP 562), so ``import scars.core``
stays cheap for ``scars --help`` and ``scars status``. docs/ARCHITECTURE.md describes the layers.
"""

from __future__ import annotations

from scars.core.lazy import public_face

# public name -> module that defines it (a package for `gates`)
_PUBLIC = {
    "read_feature": "scars.core.samsara.feature",
    "FeatureSession": "scars.core.samsara.session",
    "discover_loops": "scars.core.loops.discover",
    "gates": "scars.core.gates",
}

__all__ = sorted(_PUBLIC)


__getattr__, __dir__ = public_face(__name__, globals(), _PUBLIC)
