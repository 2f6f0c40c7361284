"""Issue 14 point 4: nothing is counted without a word, and nothing that is not a report is
skipped. Each rule: the warning (feature and item note), and what is still counted."""

from __future__ import annotations

import pytest

from scars.core.samsara import matching
from scars.core.samsara.feature import read_feature
from tests.factories import report, write_feature


def _one(tmp_path, text, name="task-1-scar.yaml", **files):
    return read_feature(write_feature(tmp_path, {name: text, **files}))


def test_a_resolved_marker_in_the_text_is_counted_and_said(tmp_path):
    f = _one(tmp_path, report(sf=['"[RESOLVED] Empty documents raised ZeroDivisionError. Fixed: skipped."', '"Other"']))
    marked = next(it for it in f.items if it.text.startswith("[RESOLVED]"))
    assert marked.counted and f.signal_lost == 2  # the seed counts it: only status: resolved excludes
    assert any("silent_failure_conditions[0]" in str(w) and "[RESOLVED]" in str(w) for w in f.warnings)
    assert marked.notes and "counted" in marked.notes[0]
    other = next(it for it in f.items if it.text == "Other")
    assert other.notes == ()


@pytest.mark.parametrize("text", ["(resolved) done", "【RESOLVED】 done", "[ resolved ] done"])
def test_resolved_marker_spellings(tmp_path, text):
    f = _one(tmp_path, report(ks=[f'"{text}"']))
    assert f.items[0].notes


def test_the_marker_only_counts_at_the_start(tmp_path):
    f = _one(tmp_path, report(ks=['"Was [RESOLVED] in an old branch, not here"']))
    assert f.items[0].notes == () and not f.warnings


def test_a_marked_item_really_resolved_in_place_says_nothing(tmp_path):
    f = _one(tmp_path, report(ks=['description: "[RESOLVED] x y z"\nstatus: resolved\nresolution: "done"']))
    assert f.signal_lost == 0 and not f.warnings


LONG = "Retry count is hard-coded to 3 because the config loader has no retry key yet"


def test_a_shortened_resolved_items_copy_resolves_its_item_and_says_so(tmp_path):
    # formats.md §1.3: resolved_items go through the one matcher; a copy cut short is its
    # normalised stage (confident), so it resolves the item, and the item's note names the entry.
    extra = """
    resolved_items:
      - original_section: known_shortcuts
        original_description: "Retry count is hard-coded to 3 because…"
        resolution: "made configurable"
    """
    f = _one(tmp_path, report(ks=[f'"{LONG}"'], extra=extra))
    assert f.signal_lost == 0
    (it,) = f.resolved
    assert it.resolution == "made configurable"
    assert "resolved by scar-reports/task-1-scar.yaml resolved_items[0] (normalized" in it.notes[0]


def test_a_copy_shorter_than_min_copy_chars_resolves_nothing(tmp_path):
    extra = """
    resolved_items:
      - original_section: known_shortcuts
        original_description: "Retry count is hard…"
        resolution: "made configurable"
    """
    f = _one(tmp_path, report(ks=[f'"{LONG}"'], extra=extra))
    assert f.signal_lost == 1 and f.items[0].notes == ()


def test_an_exact_resolved_items_entry_resolves_without_a_word(tmp_path):
    extra = f"""
    resolved_items:
      - original_section: known_shortcuts
        original_description: "{LONG}"
        resolution: "made configurable"
    """
    f = _one(tmp_path, report(ks=[f'"{LONG}"'], extra=extra))
    assert f.signal_lost == 0 and not f.warnings


def test_near_copy_needs_min_copy_chars_exactly():
    long_ = "abcd efgh ijkl mnopq rst uvwx yz"
    short = long_[: matching.MIN_COPY_CHARS]  # "abcd efgh ijkl mnopq": 20 characters, 4 words
    assert len(short) == matching.MIN_COPY_CHARS and len(short.split()) >= matching.MIN_COPY_WORDS
    assert matching.near_copy(short, long_)
    assert not matching.near_copy(short[:-1], long_)  # 19 characters
    assert matching.near_copy(short + "…", long_)  # a trailing ellipsis is not part of the copy


def test_near_copy_needs_min_copy_words_exactly():
    long_ = "abcdefgh ijklmnop qrstuvwx yz and more words"
    three = "abcdefgh ijklmnop qrstuvwx"  # 26 characters, 3 words
    assert not matching.near_copy(three, long_)
    assert matching.near_copy(three + " yz", long_)  # 4 words


def test_a_duplicate_scar_id_is_said(tmp_path):
    text = report(
        ks=['what: "a"\nbites_when: "b"\nwhere: "src/a.py"\nscar_id: SC-1\nstatus: open\niteration: null'],
        sf=['what: "c"\nbites_when: "d"\nwhere: "src/c.py"\nscar_id: SC-1\nstatus: open\niteration: null'],
    )
    f = _one(tmp_path, text)
    assert f.signal_lost == 2
    dup = [str(w) for w in f.warnings if "scar_id SC-1" in str(w)]
    assert len(dup) == 1 and "silent_failure_conditions[0]" in dup[0] and "known_shortcuts[0]" in dup[0]


@pytest.mark.parametrize("status", ["accepted", "deferred", "blocked"])
def test_a_status_without_its_iteration_map_is_said(tmp_path, status):
    f = _one(
        tmp_path,
        report(ks=[f'what: "a"\nbites_when: "b"\nwhere: "x.py"\nscar_id: SC-1\nstatus: {status}\niteration: null']),
    )
    assert f.signal_lost == 1
    assert any(f"status {status} with `iteration: null`" in str(w) for w in f.warnings)


def test_accepted_with_its_iteration_map_says_nothing(tmp_path):
    it = (
        'what: "a"\nbites_when: "b"\nwhere: "x.py"\nscar_id: SC-1\nstatus: accepted\n'
        "iteration: {round: 1, action: accept, rationale: r, re_review_signal: s, owner: o, evidence_refs: [e]}"
    )
    f = _one(tmp_path, report(ks=[it]))
    assert not f.warnings and f.signal_lost == 1


@pytest.mark.parametrize("name", ["task-2-scar.md", "task-2-scar.txt", "task-2-scar", "NOTES"])
def test_every_other_file_in_scar_reports_is_a_parse_failure(tmp_path, name):
    f = _one(tmp_path, report(ks=['"x"']), **{name: "# Task 2 scar report\n\n- a shortcut\n"})
    assert [pf.file for pf in f.parse_failures] == [f"scar-reports/{name}"]
    assert f.entry.verdict == "unknown"  # the seed's non-conforming case: never a default skip
    assert f.signal_lost == 1


@pytest.mark.parametrize("name", ["task-2-scar.YAML", "task-2-scar.Yml"])
def test_a_yaml_file_in_any_case_is_read_as_a_report(tmp_path, name):
    f = _one(tmp_path, report(ks=['"x"']), **{name: report("task-2", ks=['"y"'])})
    assert not f.parse_failures and f.signal_lost == 2


def test_hidden_files_are_not_reports(tmp_path):
    f = _one(tmp_path, report(ks=['"x"']), **{".gitkeep": ""})
    assert not f.parse_failures and f.entry.verdict == "skip"


def test_an_item_of_unknown_shape_reads_as_keys_and_values(tmp_path):
    text = report(sf=['condition: "The routing table is stale"\ndetection: "none until a 404"'])
    f = _one(tmp_path, text)
    (it,) = f.items
    assert it.text == "condition: The routing table is stale; detection: none until a 404"
    assert "{" not in it.text and not it.counted
