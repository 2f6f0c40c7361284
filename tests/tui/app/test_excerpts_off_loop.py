"""The detail pane's source excerpts are read off the event loop (issue 31: the pane read each
item's source file the first time it showed it, in the middle of a cursor step): the first item's
excerpt is read by the loader, the rows around the cursor by a worker; a cursor step reads nothing
and the pane shows an excerpt once it is read; the store is bounded."""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace

from scars.tui.app import viewmodel
from scars.tui.app.app import ScarsApp
from scars.tui.app.viewmodel import EXCERPTS_KEPT, Excerpts, Row, rows_around
from tests.factories import item, wait_until
from tests.tui.app.test_app_pilot import SIZE, aio, current_item, detail_text, start

N_ITEMS = 120  # more than the rows read around the cursor either side


def _feature(root: Path) -> Path:
    """A feature of N_ITEMS Gen 3 items, each pointing at its own line of src/code.py."""
    feature = root / "changes" / "2026-12-01_excerpts"
    (feature / "scar-reports").mkdir(parents=True)
    shortcuts = "".join(
        f'  - what: "Shortcut number {k} skips a check"\n    bites_when: "input {k} arrives"\n'
        f'    where: "src/code.py:{k + 1}"\n'
        for k in range(N_ITEMS)
    )
    (feature / "scar-reports" / "task-1-scar.yaml").write_text(
        "task_id: task-1\ncompletion_status: done\nknown_shortcuts:\n" + shortcuts + "silent_failure_conditions: []\n"
        "assumptions_made: []\n",
        encoding="utf-8",
    )
    (root / "src").mkdir()
    (root / "src" / "code.py").write_text("".join(f"line_{k} = {k}\n" for k in range(N_ITEMS + 5)), encoding="utf-8")
    return feature


@aio
async def test_a_cursor_step_reads_no_source_and_the_pane_shows_it_once_read(tmp_path, monkeypatch):
    feature = _feature(tmp_path / "repo")
    reads: list[str] = []
    real = viewmodel.read_excerpt

    def counting(repo_root, where):
        reads.append(threading.current_thread().name)
        return real(repo_root, where)

    monkeypatch.setattr(viewmodel, "read_excerpt", counting)
    app = ScarsApp(feature, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        assert "src/code.py:" in detail_text(app)  # the first item's, read by the loader
        main = threading.main_thread().name
        assert reads and main not in reads
        await pilot.press(*"jjjjj", "end")  # steps, then the last item: far past the rows first read
        assert main not in reads  # no step read a file on the event loop
        last = current_item(app)
        await wait_until(pilot, lambda: "line_" in detail_text(app), "the last item's excerpt shown")
        assert current_item(app) == last and f"line_{N_ITEMS - 1} = " in detail_text(app)
    assert main not in reads


def test_an_excerpt_is_read_once_and_an_item_without_a_location_needs_none(tmp_path):
    feature = _feature(tmp_path / "repo")
    store = Excerpts(str(feature.parents[1]))
    located = item(1, where="src/code.py:2")
    nowhere = item(2)
    assert store.get(nowhere) == (None, None) and store.get(located) is None
    assert store.missing([located, nowhere, located]) == [located]
    store.add(store.read([located]))
    excerpt, reason = store.get(located)  # type: ignore[misc]
    assert excerpt is not None and reason is None and excerpt.path == "src/code.py"
    assert store.missing([located]) == []
    # a reload of the same feature keeps what was read; another repository's store starts empty
    assert Excerpts(store.repo_root, carried=store).get(located) is not None
    assert Excerpts("/elsewhere", carried=store).get(located) is None


def test_the_store_keeps_a_bounded_number_of_excerpts():
    store = Excerpts(None)
    store.add({f"id-{k}": (None, "why") for k in range(EXCERPTS_KEPT)})
    assert store.get(item(1, where="a.py")) is None
    kept = [k for k in range(EXCERPTS_KEPT) if store._got.get(f"id-{k}")]
    assert len(kept) == EXCERPTS_KEPT  # exactly at the bound: all kept
    store.add({"one-more": (None, "why")})
    assert "id-0" not in store._got and "id-1" in store._got and "one-more" in store._got  # the oldest goes
    assert len(store._got) == EXCERPTS_KEPT


def test_the_rows_read_are_the_nearest_to_the_cursor_first():
    views = {f"i{k}": SimpleNamespace(item=item(k)) for k in range(10)}
    rows = [Row("header", "unaddressed", "h")] + [Row("item", "unaddressed", f"k{k}", f"i{k}") for k in range(10)]
    got = [it.id for it in rows_around(rows, 5, views, around=2)]  # type: ignore[arg-type]
    assert got[0] == views["i4"].item.id  # the cursor's row first
    assert sorted(got) == sorted(views[f"i{k}"].item.id for k in (2, 3, 4, 5, 6))
    assert rows_around(rows, 0, views, around=0) == []  # type: ignore[arg-type]  # a header: none
    assert len(rows_around(rows, 10, views, around=3)) == 4  # type: ignore[arg-type]  # bounded by the end


@aio
async def test_a_look_at_a_read_feature_reads_its_reopened_items_in_the_loader(tmp_path, monkeypatch):
    """An app over an already-read feature (no session) reads the journal's reopened items once:
    in the loader, not on the event loop when the detail first shows an item."""
    from scars.core.samsara import decisions
    from scars.core.samsara.feature import read_feature

    feature = read_feature(_feature(tmp_path / "repo"))
    reads: list[str] = []
    real = decisions.reopened_now
    monkeypatch.setattr(
        decisions, "reopened_now", lambda path: reads.append(threading.current_thread().name) or real(path)
    )
    app = ScarsApp.from_feature(feature)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press("j", "j")
        assert "SHORTCUT" in detail_text(app)
    assert len(reads) == 1 and reads[0] != threading.main_thread().name
