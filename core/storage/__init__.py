"""Bytes on disk: the one safe-read policy, repository paths, durable writes, the feature lock,
the journal's framing, the feature cache and parallel reading. Knows no samsara concept.

The public face is ``__all__`` below (imported on first use, PEP 562): the CLI and the app reach
storage only through it (an import-linter contract in pyproject.toml); core's own layers import
the modules.
"""

from __future__ import annotations

from scars.core.lazy import public_face

_CACHE = "scars.core.storage.cache"

# public name -> module that defines it, or (module, its name there)
_PUBLIC: dict[str, str | tuple[str, str]] = {
    "Unreadable": "scars.core.storage.paths",
    "list_dir": "scars.core.storage.paths",
    "read_text": "scars.core.storage.paths",
    "WriteFailed": "scars.core.storage.durable",
    "atomic_write": "scars.core.storage.durable",
    "describe_holder": "scars.core.storage.lock",
    "journal_path": "scars.core.storage.journal",
    "gc_paused": "scars.core.storage.parallel",
    "pause_for_startup": "scars.core.storage.parallel",
    "paused_for_startup": "scars.core.storage.parallel",
    "resume_after_startup": "scars.core.storage.parallel",
    "Beside": "scars.core.storage.parallel",
    # the feature cache
    "feature_fingerprint": (_CACHE, "fingerprint"),
    "cache_written_after": (_CACHE, "written_after"),
    "cache_dir": _CACHE,
    "cache_entries": (_CACHE, "entries"),
    "clean_cache": (_CACHE, "clean"),
    "CACHE_MAX_AGE_SECONDS": (_CACHE, "MAX_AGE_SECONDS"),
    "CACHE_MAX_TOTAL_BYTES": (_CACHE, "MAX_TOTAL_BYTES"),
}

__all__ = sorted(_PUBLIC)


__getattr__, __dir__ = public_face(__name__, globals(), _PUBLIC)
