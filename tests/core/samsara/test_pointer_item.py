"""A resolved_items pointer's ``item N`` picks the item it names (issue 29, formats.md §1.3)."""

from __future__ import annotations

from scars.core.samsara.feature import read_feature
from tests.factories import report, write_feature

TASK6 = report(
    "task-6",
    ks=[
        '"The hook template is a structural stub that renders no checks"',
        '"Upload retries are hard-coded to three attempts with no backoff between them"',
        '"The upload timeout is a hard-coded thirty seconds for every bucket"',
    ],
)


def _fix_report(section: str, description: str) -> str:
    return (
        "task_id: iteration-fix-1\ncompletion_status: done\nknown_shortcuts: []\n"
        "silent_failure_conditions: []\nassumptions_made: []\nresolved_items:\n"
        f'  - original_section: "{section}"\n'
        f'    original_description: "{description}"\n'
        '    resolution: "retries now back off exponentially (tests/test_upload.py)"\n'
    )


PARAPHRASE = "Uploads retried on a fixed count"  # weak alone: related to item 2, not confidently


def _feature(tmp_path, section: str, description: str = PARAPHRASE):
    return read_feature(
        write_feature(
            tmp_path,
            {"task-6-scar.yaml": TASK6, "iteration-fix-1-scar.yaml": _fix_report(section, description)},
        )
    )


def _resolved_texts(f) -> list[str]:
    return [it.text for it in f.resolved]


def test_the_pointer_picks_item_two(tmp_path):
    f = _feature(tmp_path, "known_shortcuts (task-6-scar.yaml item 2)")
    assert _resolved_texts(f) == ["Upload retries are hard-coded to three attempts with no backoff between them"]
    (it,) = f.resolved
    assert any("its pointer names task-6-scar.yaml known_shortcuts item 2" in n for n in it.notes)
    assert f.signal_lost == 2


def test_without_the_item_number_the_weak_text_resolves_nothing(tmp_path):
    # The boundary: the same entry without "item 2" stays weak and is listed, never taken.
    f = _feature(tmp_path, "known_shortcuts (task-6-scar.yaml)")
    assert _resolved_texts(f) == [] and f.signal_lost == 3
    assert any("matches no item confidently" in str(w) for w in f.warnings)


def test_a_pointer_to_an_unrelated_item_does_not_pick_it(tmp_path):
    # Item 1 shares nothing with the text: the number alone resolves nothing.
    f = _feature(tmp_path, "known_shortcuts (task-6-scar.yaml item 1)")
    assert "The hook template is a structural stub that renders no checks" not in _resolved_texts(f)


def test_the_text_wins_over_a_disagreeing_number_and_says_so(tmp_path):
    exact = "The upload timeout is a hard-coded thirty seconds for every bucket"
    f = _feature(tmp_path, "known_shortcuts (task-6-scar.yaml item 2)", exact)
    assert _resolved_texts(f) == [exact]
    assert any("points at task-6-scar.yaml known_shortcuts item 2" in str(w) for w in f.warnings)


def test_a_pointer_to_no_such_item_is_said(tmp_path):
    f = _feature(tmp_path, "known_shortcuts (task-6-scar.yaml item 7)")
    assert any("item 7: no such item" in str(w) for w in f.warnings)


FIX_WITH_DEFERRALS = """\
task_id: iteration-fix-1
completion_status: done
known_shortcuts:
  - description: "Backoff base delay is a constant half second"
silent_failure_conditions: []
assumptions_made: []
deferred_to_feature_iteration:
  - "The upload timeout is a hard-coded thirty seconds for every bucket"
  - description: "Backoff base delay is a constant half second"
    reason: "needs the scheduler rework"
  - "Quota headers from the bucket are never read"
"""


def test_a_top_level_deferral_list_is_matched_and_said(tmp_path):
    f = read_feature(
        write_feature(tmp_path, {"task-6-scar.yaml": TASK6, "iteration-fix-1-scar.yaml": FIX_WITH_DEFERRALS})
    )
    by_text = {it.text: it for it in f.items}
    timeout = by_text["The upload timeout is a hard-coded thirty seconds for every bucket"]
    backoff = by_text["Backoff base delay is a constant half second"]
    for it, n in ((timeout, 0), (backoff, 1)):
        assert not it.deferred and it.counted  # not read as a deferral: said, never silently taken
        (note,) = [x for x in it.notes if "top-level deferred_to_feature_iteration" in x]
        assert f"iteration-fix-1-scar.yaml top-level deferred_to_feature_iteration[{n}]" in note
        assert "not read as deferred" in note
    said = [str(w) for w in f.warnings]
    assert any(f"deferred_to_feature_iteration[0] names {timeout.id}" in w for w in said)
    assert any("deferred_to_feature_iteration[2] ('Quota headers" in w and "names no item" in w for w in said)
    assert not any("Retry" in n or "retries" in n for it in f.items for n in it.notes)  # the others: no note
