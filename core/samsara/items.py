"""What a scar item is, apart from how its report is read: the fingerprint a decision records
and the informal "[RESOLVED]" mark of its text.

Kept apart from the reader (``scars.core.samsara.reports``, which computes both on read) so that
what only needs them — the decisions in force, the recount, a warm ``scars status`` — does not
import the YAML reader.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from scars.core.model import ScarItem

# Keys of an item that its own lifecycle changes (resolved in place, verified, deferred,
# accepted at level 1, era-D status and iteration map): not part of what the item *is*.
_LIFECYCLE_KEYS = frozenset(
    {"status", "resolution", "iteration", "deferred_to_feature_iteration", "verified", "accepted_because"}
)


def item_fingerprint(item: ScarItem) -> str:
    """What the item is, beyond its id: its report file, category and every field as written
    except its line and its lifecycle keys (16 hex; computed when the report is read).

    Two items with the same text in one report and category get their ids by occurrence, so
    an item inserted *before* an existing one takes over the existing one's id. A decision
    records this fingerprint; when the item now holding the id has another one, the decision
    was made on a different item and is not applied to it (scars.core.samsara.decisions.check_items).
    """
    return item.fingerprint or fingerprint_of(item.file, item.category, None)


# ``json.dumps(raw, sort_keys=True, ensure_ascii=False, default=str)``, made once: dumps with
# options builds an encoder per call (a fifth of the fingerprint's time at 50,000 items).
_FINGERPRINT_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str).encode


def fingerprint_of(file: str, category: str, raw: Any) -> str:
    """:func:`item_fingerprint` of an item as parsed (``raw``: its string or mapping)."""
    if isinstance(raw, dict):
        raw = {str(k): v for k, v in raw.items() if str(k) not in _LIFECYCLE_KEYS}
    try:
        body = _FINGERPRINT_JSON(raw)
    except (TypeError, ValueError):  # keys of mixed types: compare their text
        body = repr(raw)
    digest = hashlib.sha1(f"{file}\x00{category}\x00{body}".encode()).hexdigest()
    return digest[:16]


# An item the loop marked resolved in its text instead of with `status: resolved`.
INFORMAL_RESOLVED = re.compile(r"^\s*[\[(（【]\s*resolved\s*[\])）】]", re.I)


# "FIXED (see resolved_items): …", "MITIGATED: …", "[RESOLVED] …": a resolution claimed in the text.
CLAIMED = re.compile(r"^\s*(?P<word>fixed|mitigated|resolved)\s*(?:[:：]|[(（]\s*see\b)", re.I)


def claimed_resolution(text: str) -> str | None:
    """The word (FIXED, MITIGATED, RESOLVED) an item's text starts by claiming a resolution with."""
    m = INFORMAL_RESOLVED.match(text or "")
    if m is not None:
        return "".join(m.group(0).split()).upper()
    m = CLAIMED.match(text or "")
    return m.group("word").upper() if m else None
