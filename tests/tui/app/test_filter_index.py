"""The filter over a precomputed index (issue 17): the same rows as the filter's rule applied to
every item, for words, categories, tasks, files, states and marks, on a generated feature
with possible patterns and parse failures."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from scars.core.samsara.feature import read_feature
from scars.tui.app.viewmodel import Row, TriageState, parse_filter
from tests.factories import bench_feature


def reference_rows(state: TriageState, flt, decisions, marked) -> list[Row]:
    """The rows as built before the index: every item put to the filter's rule, every row anew."""
    match = state._matcher(flt, decisions, set(marked)) if flt is not None and flt.active else (lambda _i: True)
    rows: list[Row] = []
    for gkey, label, members in state.groups:
        body: list[Row] = []
        count = 0
        if gkey == "possible_patterns":
            for n, (plabel, ids) in enumerate(members):
                hits = [i for i in ids if match(i)]
                if not hits:
                    continue
                body.append(Row("pattern", gkey, f"{gkey}:{n}", label=plabel))
                body.extend(Row("item", gkey, f"{gkey}:{n}:{i}", item_id=i) for i in hits)
                count += 1
        elif gkey == "parse_failures":
            for n, pf in enumerate(members):
                if state._failure_matches(pf, flt):
                    body.append(Row("failure", gkey, f"{gkey}:{n}:{pf.file}", failure=pf))
                    count += 1
        else:
            body = [Row("item", gkey, f"{gkey}:{i}", item_id=i) for i in members if match(i)]
            count = len(body)
        if body:
            rows.append(Row("header", gkey, f"header:{gkey}", label=f"{label} ({count})"))
            rows.extend(body)
    return rows


@pytest.fixture(scope="module")
def state(tmp_path_factory) -> TriageState:
    feature = read_feature(bench_feature(tmp_path_factory.mktemp("filter") / "repo"))
    assert feature.possible_patterns and feature.parse_failures
    return TriageState(feature)


FILTERS = [
    "",
    "retry",
    "retry cache",
    "ret",
    "r",
    "zzz-nothing",
    "cat:ks",
    "cat:sf,ua retry",
    "task:task-1",
    "file:task-2",
    "state:undecided",
    "state:decided",
    "state:marked",
    "state:accept",
    "scar-reports",
    "cat:ks state:decided lands",
]


@pytest.mark.parametrize("text", FILTERS)
def test_indexed_filter_gives_the_rows_of_the_rule(state, text):
    ids = list(state.views)
    decisions = {i: SimpleNamespace(action="fix", carried_round=None) for i in ids[::7]}
    decisions.update({i: SimpleNamespace(action="accept", pending_review=True, carried_round=2) for i in ids[3::11]})
    marked = ids[1::13]
    flt = parse_filter(text)
    flt = flt if flt.active else None
    assert state.rows(flt, decisions, marked) == reference_rows(state, flt, decisions, marked)
    assert state.rows(flt, decisions, marked) == reference_rows(state, flt, decisions, marked)  # built once, reused


def test_a_word_across_two_items_texts_matches_neither(state):
    a, b = list(state.views)[:2]
    tail, head = state.views[a].search[-3:], state.views[b].search[:3]
    flt = parse_filter(tail + head)
    got = {r.item_id for r in state.rows(flt) if r.kind == "item"}
    assert got == {r.item_id for r in reference_rows(state, flt, {}, ()) if r.kind == "item"}


def test_the_tasks_sharing_an_items_text_are_the_same_before_and_after_the_index(state):
    """The detail pane names every task whose report holds the item's text: before the index is
    built (after the first paint) by one pass over the items, then from the index."""
    fresh = TriageState(state.feature)
    items = state.feature.items
    shared = [it for it in items if len(fresh.tasks_of(it)) > 1]
    assert shared and fresh._tasks_by_text is None  # cross-task texts exist; no index yet
    before = {it.id: fresh.tasks_of(it) for it in items}
    fresh.prepare_filter()
    assert fresh._tasks_by_text is not None
    assert {it.id: fresh.tasks_of(it) for it in items} == before


def test_the_state_and_its_rows_build_no_items_view_before_one_is_asked_for(state):
    """Issue 17, first paint: the rows of a feature are built without any item's view (text line,
    task, search key); the list asks for the views of the rows on screen only."""
    fresh = TriageState(state.feature)
    rows = fresh.rows(None)
    assert len(rows) > 100 and fresh.views._built == {}
    first = next(r.item_id for r in rows if r.kind == "item")
    assert fresh.views[first].item.id == first and list(fresh.views._built) == [first]
    # Every view, as the mapping it stands for (its items() too), each built once.
    views = dict(fresh.views.items())
    assert views.keys() == {it.id for it in state.feature.items} and all(fresh.views[i] is v for i, v in views.items())
