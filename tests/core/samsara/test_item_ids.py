"""Item ids and the decisions that follow them when an item with the same text is inserted.

An id counts the occurrence of the item's text in its report and category (README, "Item
ids"). Inserted *after* an existing item, a same-text item takes the next occurrence and
nothing moves. Inserted *before* it, the new item takes over the existing id: the decision
recorded with the fingerprint of the item it was made on is then not applied to the new
holder of the id (both items show undecided, the move is reported), never silently.
"""

from __future__ import annotations

import json

from scars.core.samsara import items
from scars.core.samsara.decisions import check_items, replay
from scars.core.samsara.feature import read_feature
from scars.core.samsara.items import item_fingerprint
from scars.core.samsara.session import FeatureSession
from scars.core.samsara.status import feature_to_json
from scars.core.storage.journal import read_journal
from tests.factories import report, write_feature

OLD = 'what: "Shared cache key"\nbites_when: "two tenants share a worker"\nwhere: "src/cache.py:40"'
NEW = 'what: "Shared cache key"\nbites_when: "the CDN caches per path"\nwhere: "src/cdn.py:12"'
OTHER = '"Retry count is hard-coded"'


def _write(feat, items) -> None:
    (feat / "scar-reports" / "task-1-scar.yaml").write_text(report("task-1", sf=items), encoding="utf-8")


def _decided_feature(tmp_path):
    feat = write_feature(tmp_path, {"task-1-scar.yaml": report("task-1", sf=[OTHER, OLD])})
    with FeatureSession.open(feat) as s:
        old = next(i for i in s.feature.items if i.where == "src/cache.py:40")
        s.decide(old.id, "fix")
        s.decide(next(i.id for i in s.feature.items if i.text != "Shared cache key"), "defer", reason="next quarter")
    return feat, old


def test_a_same_text_item_inserted_after_moves_nothing(tmp_path):
    feat, old = _decided_feature(tmp_path)
    _write(feat, [OTHER, OLD, NEW])
    with FeatureSession.open(feat) as s:
        assert s.feature.item(old.id).where == "src/cache.py:40"  # the id stayed with its item
        assert s.decisions[old.id].action == "fix"
        new = next(i for i in s.feature.items if i.where == "src/cdn.py:12")
        assert new.id != old.id and new.id not in s.decisions
        assert s.moved == {} and s.moved_warnings == []
    assert feature_to_json(read_feature(feat))["moved_decisions"] == []


def test_a_same_text_item_inserted_before_does_not_inherit_the_decision(tmp_path):
    feat, old = _decided_feature(tmp_path)
    _write(feat, [OTHER, NEW, OLD])
    with FeatureSession.open(feat) as s:
        holder = s.feature.item(old.id)
        assert holder.where == "src/cdn.py:12"  # the inserted item holds the old id now ...
        assert old.id not in s.decisions  # ... but not the decision made on the other item
        moved_to = next(i for i in s.feature.items if i.where == "src/cache.py:40")
        assert moved_to.id != old.id and moved_to.id not in s.decisions
        assert set(s.moved) == {old.id}
        assert s.moved[old.id]["decision"].action == "fix"
        assert s.moved[old.id]["decided_item_now"] == moved_to.id
        (line,) = s.moved_warnings
        assert line.startswith(f"{old.id}: its fix decision") and f"is now {moved_to.id}" in line
        assert "decide both again" in line
        assert len(s.decisions) == 1  # the unrelated defer is untouched
        # Deciding the holder of the id again clears the move; the item it was made on is
        # decided under its own id now.
        s.decide(old.id, "defer", reason="the CDN is retired next month")
        s.decide(moved_to.id, "fix")
        assert s.moved == {}
    with FeatureSession.open(feat) as s:
        assert s.moved == {} and s.decisions[old.id].action == "defer"
        assert s.decisions[moved_to.id].action == "fix"


def test_status_json_lists_the_move_and_shows_both_items_undecided(tmp_path):
    feat, old = _decided_feature(tmp_path)
    _write(feat, [OTHER, NEW, OLD])
    data = json.loads(json.dumps(feature_to_json(read_feature(feat))))
    (moved,) = data["moved_decisions"]
    assert moved["item_id"] == old.id and moved["action"] == "fix" and moved["text"] == "Shared cache key"
    same_text = [it for it in data["items"] if it["text"] == "Shared cache key"]
    assert len(same_text) == 2 and all(it["decision"] is None for it in same_text)
    assert moved["decided_item_now"] == next(it["id"] for it in same_text if it["where"] == "src/cache.py:40")


def test_undo_of_the_redecision_brings_the_move_back(tmp_path):
    feat, old = _decided_feature(tmp_path)
    _write(feat, [OTHER, NEW, OLD])
    with FeatureSession.open(feat) as s:
        s.decide(old.id, "defer", reason="the CDN is retired next month")
        assert s.moved == {}
        assert s.undo() == [old.id]
        assert set(s.moved) == {old.id} and old.id not in s.decisions


def test_identical_items_are_indistinguishable_and_keep_the_decision_on_the_id(tmp_path):
    """Every field the same (only the line differs): the first of them holds the id and its
    decision, as the README says; there is nothing to tell them apart by."""
    feat, old = _decided_feature(tmp_path)
    _write(feat, [OTHER, OLD, OLD])
    with FeatureSession.open(feat) as s:
        first, second = [i for i in s.feature.items if i.text == "Shared cache key"]
        assert first.id == old.id and first.line < second.line
        assert s.decisions[old.id].action == "fix" and second.id not in s.decisions
        assert s.moved == {} and s.moved_warnings == []


def test_editing_a_decided_item_takes_its_decision_back(tmp_path):
    feat, old = _decided_feature(tmp_path)
    _write(feat, [OTHER, OLD.replace("src/cache.py:40", "src/cache.py:41")])
    with FeatureSession.open(feat) as s:
        assert s.feature.item(old.id).where == "src/cache.py:41"  # same id: the text did not change
        assert old.id not in s.decisions and s.moved[old.id]["decided_item_now"] is None
        assert "an item was inserted before it, or the item was edited" in s.moved_warnings[0]


def test_lifecycle_keys_and_lines_do_not_change_the_fingerprint(tmp_path):
    feat = write_feature(tmp_path, {"t.yaml": report("t", ks=['description: "x y z"'])})
    (before,) = read_feature(feat).items
    (feat / "scar-reports" / "t.yaml").write_text(
        report("t", ks=['"first"', 'description: "x y z"\ndeferred_to_feature_iteration: true\nstatus: open'])
    )
    after = read_feature(feat).item(before.id)
    assert after.line != before.line
    assert item_fingerprint(after) == item_fingerprint(before)


def test_decisions_recorded_without_a_fingerprint_are_applied_as_before(tmp_path):
    feat, old = _decided_feature(tmp_path)
    records = read_journal(feat / ".scars" / "journal.jsonl").records
    for rec in records:
        for d in rec.get("decisions") or ():
            d.pop("fingerprint", None)
    state = replay(records)
    _write(feat, [OTHER, NEW, OLD])
    assert check_items(state, read_feature(feat).items) == []
    assert state.decisions[old.id].action == "fix"


def test_the_app_shows_the_decisions_to_make_again(tmp_path):
    from scars.tui.app.backend import Backend
    from scars.tui.app.widgets.warning_bar import warning_lines

    feat, old = _decided_feature(tmp_path)
    backend = Backend.open(feat)
    try:
        assert warning_lines(backend.feature, [], backend.moved) == []
    finally:
        backend.session.close()
    _write(feat, [OTHER, NEW, OLD])
    backend = Backend.open(feat)
    try:
        assert set(backend.moved) == {old.id} and old.id not in backend.decisions
        (line,) = [t.plain for t in warning_lines(backend.feature, [], backend.moved)]
        assert line.startswith("⚠ DECIDE AGAIN: 1 ") and old.id in line
    finally:
        backend.session.close()


def test_read_only_commands_leave_out_a_moved_decision(tmp_path):
    from scars.core.samsara.decisions import current_decisions

    feat, old = _decided_feature(tmp_path)
    assert current_decisions(feat, read_feature(feat))[old.id].action == "fix"
    _write(feat, [OTHER, NEW, OLD])
    feature = read_feature(feat)
    assert old.id not in current_decisions(feat, feature)
    assert old.id in current_decisions(feat)  # without the items there is nothing to compare


def _fingerprint_as_first_written(file: str, category: str, raw) -> str:
    """The fingerprint's first definition (it is recorded in journals: its value must not move)."""
    import hashlib

    if isinstance(raw, dict):
        raw = {str(k): v for k, v in raw.items() if str(k) not in items._LIFECYCLE_KEYS}
    try:
        body = json.dumps(raw, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        body = repr(raw)
    return hashlib.sha1(f"{file}\x00{category}\x00{body}".encode()).hexdigest()[:16]


def test_fingerprints_keep_their_recorded_value(tmp_path):
    """Every item of the fixtures and of a generated repository, and raw values of odd types."""
    import datetime
    import sys

    from scars.core.storage.safe_read import loads
    from tests.factories import ROOT, UPSTREAM

    sys.path.insert(0, str(ROOT / "bench"))
    import generate  # bench/generate.py

    generate.generate("small", tmp_path / "repo", seed=5)
    raws: list = [
        "plain",
        'ひらがな \u2028 \x00 "quoted"',
        {"description": "d", "status": "open", "severity": "high", 3: [1, 2.5, None, True]},
        {"what": "w", "when": datetime.date(2026, 1, 2), "at": datetime.datetime(2026, 1, 2, 3, 4)},
        {"description": "nested", "m": {1: "a", "b": "c"}},  # mixed key types inside: repr
        {"description": "nan", "x": float("nan"), "y": float("inf")},
        None,
        42,
        ["a", {"b": 1}],
    ]
    roots = [tmp_path / "repo", ROOT / "tests" / "fixtures", ROOT / "core" / "demo"]
    roots += [UPSTREAM] if UPSTREAM.is_dir() else []
    for root in roots:
        for p in sorted(root.rglob("*scar*.yaml")):
            try:
                value = loads(p.read_text(encoding="utf-8")).value
            except Exception:  # unreadable fixtures hold no items
                continue
            if isinstance(value, dict):
                for section in ("known_shortcuts", "silent_failure_conditions", "assumptions_made"):
                    if isinstance(value.get(section), list):
                        raws += value[section]
    assert len(raws) > 500
    for raw in raws:
        for category in ("known_shortcuts", "unverified_assumptions"):
            want = _fingerprint_as_first_written("scar-reports/t.yaml", category, raw)
            assert items.fingerprint_of("scar-reports/t.yaml", category, raw) == want, raw
