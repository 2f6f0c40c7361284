"""An item's keys no era defines (`severity:` …) are kept once and shown (issue 17, README
"Reading"): as ``extra`` of the item in `scars status --json` and the JSON export; the parsed
mapping itself is no longer held beside the item's fields."""

from __future__ import annotations

import hashlib
import json

from scars.core.model import ScarItem
from scars.core.samsara.export import to_json
from scars.core.samsara.feature import read_feature
from scars.core.samsara.items import item_fingerprint
from scars.core.samsara.status import feature_to_json
from tests.factories import report, write_feature

ITEMS = [
    'description: "Retry count is hard-coded"\nseverity: high\nfound: 2026-01-02\nowner_hint: {team: ops}',
    'description: "Only one writer at a time"',
    "what: cache never expires\nbites_when: two writers\nwhere: src/c.py:4\nseverity: low",
    '"a plain Gen 1 string"',
    "title: an unknown shape\nseverity: high",
]


def _feature(tmp_path):
    return read_feature(write_feature(tmp_path, {"t.yaml": report("t", ks=ITEMS)}))


def test_extra_keys_are_shown_in_status_json_and_the_export(tmp_path):
    f = _feature(tmp_path)
    status = {it["text"]: it for it in feature_to_json(f)["items"]}
    assert status["Retry count is hard-coded"]["extra"] == {
        "severity": "high",
        "found": "2026-01-02",  # a YAML date, as text
        "owner_hint": {"team": "ops"},
    }
    assert status["cache never expires"]["extra"] == {"severity": "low"}
    # No extra key, no `extra` (the JSON of such items is what it was: tests/fixtures/status_golden).
    assert "extra" not in status["Only one writer at a time"]
    assert "extra" not in status["a plain Gen 1 string"]
    # An unrecognised shape shows all its keys in its text already (and is a parse failure).
    (unknown,) = [it for it in status.values() if it["text"].startswith("title:")]
    assert "extra" not in unknown and "severity: high" in unknown["text"]
    exported = {it["text"]: it for it in to_json(f)["items"]}
    assert exported["Retry count is hard-coded"]["extra"]["severity"] == "high"
    json.dumps(feature_to_json(f), ensure_ascii=True)  # JSON-ready


def test_the_fingerprint_is_the_one_decisions_recorded(tmp_path):
    # Computed on read now (the mapping is not kept): the same 16 hex as before, so decisions
    # recorded with earlier fingerprints stay on their items.
    f = _feature(tmp_path)
    it = next(i for i in f.items if i.text == "Retry count is hard-coded")
    body = json.dumps(
        {
            "description": "Retry count is hard-coded",
            "severity": "high",
            "found": "2026-01-02",
            "owner_hint": {"team": "ops"},
        },
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    expected = hashlib.sha1(f"{it.file}\x00{it.category}\x00{body}".encode()).hexdigest()[:16]
    assert item_fingerprint(it) == expected
    bare = ScarItem("ks-1", "known_shortcuts", "x", None, "scar-reports/a.yaml", 1, "gen2")
    assert item_fingerprint(bare) == hashlib.sha1(b"scar-reports/a.yaml\x00known_shortcuts\x00null").hexdigest()[:16]


def test_items_round_trip_through_the_cache_pickle(tmp_path):
    # ScarItem pickles its fields as one tuple (issue 17: the cache of 50,000 items); every
    # field comes back, the ones not compared (extra) included.
    import pickle

    f = _feature(tmp_path)
    back = pickle.loads(pickle.dumps(f, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == f
    for a, b in zip(back.items, f.items):
        assert [getattr(a, n) for n in a.__slots__] == [getattr(b, n) for n in b.__slots__]
    assert any(it.extra for it in back.items) and all(it.fingerprint for it in back.items)
