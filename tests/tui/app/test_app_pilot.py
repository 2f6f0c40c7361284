"""Pilot tests of the triage app: each key flow, checked on disk through a fresh session."""

from __future__ import annotations

import asyncio
import functools
import html
import re
from pathlib import Path

from textual import events
from textual.command import CommandList
from textual.widgets import Button, Input

from scars.core.samsara.session import FeatureSession
from scars.tui.app.app import ScarsApp
from scars.tui.app.widgets.item_list import ItemList
from tests.factories import filter_shown, report, wait_settled, wait_until, write_feature

SIZE = (120, 40)


def aio(fn):
    """Run an async test with asyncio.run (no asyncio plugin is needed)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return asyncio.run(fn(*args, **kwargs))

    return wrapper


def on_disk(feature_dir: Path) -> dict:
    """The decisions as a new reader sees them (journal replayed from disk)."""
    with FeatureSession.open(feature_dir, read_only=True) as s:
        return dict(s.decisions)


def current_item(app: ScarsApp) -> str | None:
    row = app.screen.query_one(ItemList).current_row
    return row.item_id if row is not None else None


def item_rows(app: ScarsApp) -> list:
    return [r for r in app.screen.query_one(ItemList).rows if r.kind == "item"]


def record_notes(app: ScarsApp) -> list[tuple[str, str]]:
    """Every notification the app posts, as (title, message): a refusal is waited for, not slept on."""
    notes: list[tuple[str, str]] = []
    notify = app.notify

    def recording(message, *, title="", **kw):
        notes.append((title, str(message)))
        return notify(message, title=title, **kw)

    app.notify = recording  # type: ignore[method-assign]
    return notes


async def on_screen(app: ScarsApp, pilot, name: str) -> None:
    await wait_until(pilot, lambda: type(app.screen).__name__ == name, f"the {name} screen on top")


def screen_text(app: ScarsApp) -> str:
    svg = app.export_screenshot()
    parts = re.findall(r">([^<]*)</text>", svg)
    return html.unescape("".join(parts)).replace("\xa0", " ")


def screen_text_lines(app: ScarsApp) -> list[str]:
    """The screen as text lines (one per terminal row)."""
    svg = app.export_screenshot()
    rows: dict[str, list[str]] = {}
    for m in re.finditer(r'<text class="[^"]*" x="[^"]*" y="([^"]*)"[^>]*>([^<]*)</text>', svg):
        rows.setdefault(m.group(1), []).append(html.unescape(m.group(2)).replace("\xa0", " "))
    return ["".join(parts) for _, parts in sorted(rows.items(), key=lambda kv: float(kv[0]))]


def detail_text(app: ScarsApp) -> str:
    """The detail pane's content as plain text (independent of wrapping and scrolling)."""
    from rich.console import Console

    console = Console(width=400, color_system=None, file=None, record=True)
    with console.capture() as cap:
        console.print(app.screen.query_one("#detail").content)
    return cap.get()


def fill(app: ScarsApp, **values: str) -> None:
    """Set form fields directly (typing every character is slow and tests nothing more)."""
    for name, value in values.items():
        app.screen.query_one(f"#field-{name}").value = value


async def start(app: ScarsApp, pilot) -> None:
    """Wait until the app shows its feature and the work its load set off is done (the filter
    prepared, the workers finished, the screen laid out)."""
    await app.wait_loaded()
    await wait_settled(pilot, "the load shown, its filter prepared and the screen laid out")


async def confirm_round_start(app: ScarsApp, pilot) -> None:
    """The app asks before it starts a round (`g` with no round open, a decision after a stop):
    y marks yes, Enter records the start."""
    await on_screen(app, pilot, "ConfirmRoundStart")
    await pilot.press("y", "enter")


async def type_text(pilot, text: str) -> None:
    for ch in text:
        await pilot.press("space" if ch == " " else ch)


async def filter_by(app: ScarsApp, pilot, text: str) -> None:
    """Type a filter and wait until the list shows its rows (they are built in a thread worker)."""
    await pilot.press("slash")
    await type_text(pilot, text)
    await pilot.press("enter")
    await filter_shown(pilot, text)


@aio
async def test_fix_is_on_disk_and_undo_reverts_it(feature_dir):
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        first = current_item(app)
        await pilot.press("f")
        await wait_until(pilot, lambda: first in app.decisions, "the fix recorded")
        d = on_disk(feature_dir)
        assert d[first].action == "fix" and d[first].decided_by == "alice"
        assert current_item(app) != first  # moved on
        await pilot.press("u")
        await wait_until(pilot, lambda: first not in app.decisions, "the fix undone")
        assert first not in on_disk(feature_dir)
        assert current_item(app) == first


@aio
async def test_accept_form_refuses_until_valid_then_saves(feature_dir):
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        item = current_item(app)
        await pilot.press("a")
        await on_screen(app, pilot, "AcceptForm")
        form = app.screen
        await pilot.click("#form-save")
        await wait_until(pilot, lambda: form.query_one("#error-owner").has_class("shown"), "the owner error shown")
        assert app.screen is form
        err = str(form.query_one("#error-owner").render())
        assert "owner" in err
        assert item not in on_disk(feature_dir)  # nothing saved while invalid
        await type_text(pilot, "when x")  # typed into the focused first field
        fill(app, re_review_signal="a second writer appears", rationale="single process today")
        await pilot.press("enter")
        await type_text(pilot, "bob")
        await pilot.press("enter", "enter", "enter")  # owner -> rationale -> watch (empty) -> save
        await wait_until(pilot, lambda: item in app.decisions, "the accept recorded")
        d = on_disk(feature_dir)[item]
        assert (d.action, d.owner, d.re_review_signal, d.rationale) == (
            "accept",
            "bob",
            "a second writer appears",
            "single process today",
        )


@aio
async def test_bulk_defer_and_one_undo_reverts_the_batch(feature_dir):
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        a = current_item(app)
        await pilot.press("space")
        b = current_item(app)
        await pilot.press("space", "D")
        await on_screen(app, pilot, "ConfirmBulk")
        assert "Decide 2 marked items as DEFER" in screen_text(app)
        await pilot.press("y", "enter")  # y marks yes, Enter records it
        await on_screen(app, pilot, "DeferForm")
        fill(app, reason="scheduler lands first")
        await pilot.press("enter", "enter")
        await wait_until(pilot, lambda: a in app.decisions and b in app.decisions, "the batch recorded")
        d = on_disk(feature_dir)
        assert d[a].action == d[b].action == "defer" and d[a].batch_id and d[a].batch_id == d[b].batch_id
        assert d[a].reason == "scheduler lands first"
        await pilot.press("u")
        await wait_until(pilot, lambda: a not in app.decisions, "the batch undone")
        d = on_disk(feature_dir)
        assert a not in d and b not in d


@aio
async def test_filter_then_decide_the_filtered_item(feature_dir):
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await filter_by(app, pilot, "cat:ua")
        rows = item_rows(app)
        assert [r.item_id[:3] for r in rows] == ["ua-"]
        await pilot.press("f")
        await wait_until(pilot, lambda: rows[0].item_id in app.decisions, "the fix recorded")
        assert on_disk(feature_dir)[rows[0].item_id].action == "fix"
        await pilot.press("escape")
        await filter_shown(pilot, "")
        assert len(item_rows(app)) > 1


@aio
async def test_round_gate_writes_the_round_and_in_human_mode_no_entry(feature_dir):
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press("f")
        await wait_until(pilot, lambda: len(app.decisions) == 1, "the fix recorded")
        await pilot.press("g")
        await on_screen(app, pilot, "RoundGate")
        assert "Round 2 done. signal_lost" in screen_text(app)
        gate = app.screen
        stop = gate.query_one("#gate-stop", Button)
        await pilot.click("#gate-stop")  # no reason yet: refused, nothing written
        await wait_until(pilot, lambda: gate.query_one("#gate-error").has_class("shown"), "the refusal shown")
        assert "a reason is required" in str(gate.query_one("#gate-error").render())
        assert app.screen is gate and "round: 2" not in (feature_dir / "iteration-log.yaml").read_text()
        # Button ignores a click while its press effect (-active) lasts: click again once it takes clicks.
        await wait_until(pilot, lambda: not stop.has_class("-active"), "the stop button taking clicks again")
        gate.query_one("#gate-reason").value = "remaining items have owners"
        await pilot.click("#gate-stop")
        await wait_until(
            pilot,
            lambda: "decision: stop" in (feature_dir / "iteration-log.yaml").read_text(),
            "the round recorded (iteration-log.yaml is written last)",
        )
    log = (feature_dir / "iteration-log.yaml").read_text()
    assert "round: 2" in log and "decision: stop" in log and "remaining items have owners" in log
    assert log.startswith('feature: "csv-export"')  # the existing round is kept as it was
    # Execution mode: human-in-the-loop — the person answered the loop's own gate: no auto-decisions.md
    # entry (as `scars gate round-continue` and an answers file; tests/tui/test_gate_contract.py)
    assert not (feature_dir / "auto-decisions.md").exists()


@aio
async def test_round_gate_checks_the_reason_as_scars_gate_does(feature_dir):
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press("f", "g")
        await on_screen(app, pilot, "RoundGate")
        gate = app.screen
        gate.query_one("#gate-reason").value = "ok"
        await pilot.click("#gate-stop")
        await wait_until(pilot, lambda: gate.query_one("#gate-error").has_class("shown"), "the refusal shown")
        assert "generic" in str(gate.query_one("#gate-error").render())
        assert app.screen is gate and "round: 2" not in (feature_dir / "iteration-log.yaml").read_text()


@aio
async def test_pairing_accept_waits_for_the_second_person(feature_dir):
    app = ScarsApp(feature_dir, pair=["alice", "bob"], require_second=["accept"])
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        item = current_item(app)
        assert "driver alice" in screen_text(app)
        notes = record_notes(app)
        await pilot.press("a")
        await on_screen(app, pilot, "AcceptForm")
        fill(app, re_review_signal="second writer appears", owner="carol", rationale="single process")
        await pilot.click("#form-save")
        await wait_until(pilot, lambda: item in app.decisions, "the accept recorded")
        d = on_disk(feature_dir)[item]
        assert d.pending_review and d.decided_by == "alice" and not d.reviewed_by
        await pilot.press("k", "s")  # alice cannot sign off her own accept
        await wait_until(pilot, lambda: any("the other person signs off" in m for _, m in notes), "the refusal")
        assert on_disk(feature_dir)[item].pending_review
        await pilot.press("p", "s")
        await wait_until(pilot, lambda: not app.decisions[item].pending_review, "the sign-off recorded")
        d = on_disk(feature_dir)[item]
        assert d.reviewed_by == "bob" and not d.pending_review


@aio
async def test_second_instance_is_read_only_and_names_the_holder(feature_dir):
    holder = FeatureSession.open(feature_dir, user="zoe")
    try:
        app = ScarsApp(feature_dir, user="alice")
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await start(app, pilot)
            assert app.backend.read_only
            text = screen_text(app)
            assert "READ-ONLY" in text and "zoe" in text
            notes = record_notes(app)
            await pilot.press("f")
            await wait_until(pilot, lambda: [t for t, _ in notes] == ["Not recorded"], "the refusal")
        assert holder.decisions == {} and on_disk(feature_dir) == {}
    finally:
        holder.close()


@aio
async def test_read_only_flag_records_nothing(feature_dir):
    app = ScarsApp(feature_dir, read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        notes = record_notes(app)
        await pilot.press("f", "space", "F", "u")  # space (mark) writes nothing and is allowed
        await wait_until(pilot, lambda: [t for t, _ in notes] == ["Not recorded"] * 3, "three refusals")
    assert on_disk(feature_dir) == {}


@aio
async def test_reopen_resumes_on_first_undecided(feature_dir):
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        first = current_item(app)
        await pilot.press("f")
        await wait_until(pilot, lambda: first in app.decisions, "the fix recorded")
        second = current_item(app)
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        assert current_item(app) == second != first
        assert "[1/6]" in screen_text(app)


@aio
async def test_untrusted_text_is_shown_literally(feature_dir):
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await filter_by(app, pilot, "literally")
        text = screen_text(app)
        assert "[bold]shown[/bold]" in text
        assert "[@click=app.quit]click[/]" in text
        assert "\x1b" not in text and "␛[2Jescape" in text
        detail = detail_text(app)
        assert "[bold]shown[/bold]" in detail and "␛[2Jescape" in detail
        # The report's debt_location is shown as the report's (never as the item's location) and
        # nothing is read from it; an item-level `where` outside the repository is refused (test_locate).
        assert "Report's debt_location: ../../outside.txt" in detail and "Where:" not in detail
        assert "secret" not in text and "secret" not in detail


@aio
async def test_user_keymap_rebinds_a_binding_id(feature_dir):
    app = ScarsApp(feature_dir, user="alice", keymap={"scars.fix": "x"})
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        item = current_item(app)
        await pilot.press("x")
        await wait_until(pilot, lambda: item in app.decisions, "the fix recorded")
        assert on_disk(feature_dir)[item].action == "fix"


@aio
async def test_a_keymap_conflict_is_refused_and_said(feature_dir):
    app = ScarsApp(feature_dir, user="alice", keymap={"scars.fix": "q"})
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        assert any("'scars.fix' = \"q\" is refused" in p for p in app._keymap_problems)
        assert "is refused: q is scars.quit's key" in app.keymap_note()
        item = current_item(app)
        await pilot.press("f")  # the default stays
        await wait_until(pilot, lambda: item in app.decisions, "the fix recorded")
        await pilot.press("q")
        await wait_until(pilot, lambda: not app.is_running, "q still quits")


@aio
async def test_help_lists_binding_ids(feature_dir):
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=(120, 60)) as pilot:  # the whole list in view (it scrolls when shorter)
        await start(app, pilot)
        await pilot.press("question_mark")
        await on_screen(app, pilot, "HelpScreen")
        text = screen_text(app)
        for bid in ("scars.fix", "scars.accept", "scars.bulk_defer", "scars.gate", "scars.quit"):
            assert bid in text


@aio
async def test_loops_inbox_opens_a_samsara_feature(feature_dir):
    from scars.core.loops import discover_loops

    root = feature_dir.parents[1]
    states = discover_loops(root)
    app = ScarsApp(None, inbox=(states, root))
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(app, pilot, "LoopsScreen")
        assert "Loops inbox" in screen_text(app) and "2026-07-01_csv-export" in screen_text(app)
        # the inbox is the app's first screen: no feature screen made under it (issue 31)
        assert [type(s).__name__ for s in app.screen_stack] == ["LoopsScreen"]
        row = next(i for i, s in enumerate(states) if s.kind == "samsara")
        for _ in range(row):
            await pilot.press("j")
        await pilot.press("enter")
        await start(app, pilot)
        assert type(app.screen).__name__ == "MainScreen" and app.feature_dir == feature_dir
        assert [type(s).__name__ for s in app.screen_stack] == ["LoopsScreen", "MainScreen"]
        item = current_item(app)
        await pilot.press("f")
        await wait_until(pilot, lambda: item in app.decisions, "the fix recorded")
        assert on_disk(feature_dir)[item].action == "fix"
        await pilot.press("L")  # the inbox again, over the feature; back to the feature
        await on_screen(app, pilot, "LoopsScreen")
        await pilot.press("escape")
        await on_screen(app, pilot, "MainScreen")


@aio
async def test_a_load_that_lands_before_its_screen_mounted_is_shown_when_it_mounts(feature_dir):
    """A feature opened from the inbox the app started on: its screen is pushed and composed while
    the load runs; a load that lands first is kept for the screen's mount, never dropped."""
    from scars.core.loops import discover_loops

    root = feature_dir.parents[1]
    app = ScarsApp(None, inbox=(discover_loops(root), root), user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(app, pilot, "LoopsScreen")
        app._load = lambda *a, **k: None  # type: ignore[method-assign]  # the load below stands for it
        app.open_feature(feature_dir)
        assert not app.screen_stack[-1].is_mounted
        app.on_scars_app_loaded(app._read(False, ""))  # type: ignore[arg-type]  # before the mount
        await wait_until(pilot, lambda: app.is_loaded, "the load shown once its screen mounted")
        assert type(app.screen).__name__ == "MainScreen" and item_rows(app)


def add_blocked_fix(feature_dir: Path) -> None:
    """A report whose implementer said BLOCKED: its item, once decided fix, awaits its outcome."""
    (feature_dir / "scar-reports" / "task-5-scar.yaml").write_text(
        'task_id: task-5\ncompletion_status: blocked\nknown_shortcuts:\n  - "Vendor API rate limit unknown"\n'
        "silent_failure_conditions: []\nassumptions_made: []\ndebt_registered: true\ndebt_location: null\n"
    )


@aio
async def test_blocked_fix_reclassified_at_the_gate(feature_dir):
    add_blocked_fix(feature_dir)
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await filter_by(app, pilot, "vendor")
        item = current_item(app)
        await pilot.press("f", "g")
        await on_screen(app, pilot, "RoundGate")
        # The gate's body scrolls (figures, warnings, Rule 3): bring the blocked fix into view.
        app.screen.query_one(".gate-blocked-label").scroll_visible(animate=False, top=True)
        await wait_settled(pilot, "the gate's body scrolled and drawn")
        assert "Blocked fix" in screen_text(app)
        app.screen.query_one("#blocked-0").query("RadioButton").last().value = True
        app.screen.query_one("#gate-reason").value = "the vendor has not answered"
        await pilot.click("#gate-continue")
        await wait_until(
            pilot,
            lambda: "decision: continue" in (feature_dir / "iteration-log.yaml").read_text(),
            "the round recorded (iteration-log.yaml is written last)",
        )
    d = on_disk(feature_dir)[item]
    assert d.blocked_outcome == "reclassify_as_defer"
    assert "decision: continue" in (feature_dir / "iteration-log.yaml").read_text()


@aio
async def test_command_palette_reaches_an_action(feature_dir):
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        item = current_item(app)
        await pilot.press("ctrl+p")
        await on_screen(app, pilot, "CommandPalette")
        await type_text(pilot, "Fix")

        def fix_highlighted() -> bool:  # the search for "Fix" is done and put "Fix" first
            found = app.screen.query_one(CommandList)
            return (
                found.highlighted is not None
                and all(w.is_finished for w in app.workers)
                and str(found.get_option_at_index(found.highlighted).prompt).split("\n")[0] == "Fix"
            )

        await wait_until(pilot, fix_highlighted, "the palette offering Fix")
        await pilot.press("enter")
        await wait_until(pilot, lambda: item in app.decisions, "the fix recorded")
        assert on_disk(feature_dir)[item].action == "fix"


@aio
async def test_detail_pane_when_the_registry_is_unreadable(feature_dir):
    """formats.md §1.7: a ref is `unknown` and still counted; the registry is its own failure."""
    root = feature_dir.parent.parent
    (root / ".samsara").mkdir()
    (root / ".samsara" / "systemic-scars.yaml").write_text("- id: doc-only-guard\n", encoding="utf-8")
    (feature_dir / "scar-reports" / "task-6-scar.yaml").write_text(
        "task_id: task-6\ncompletion_status: done\nknown_shortcuts:\n  - systemic_ref: doc-only-guard\n"
        '    note: "grep-only check"\nsilent_failure_conditions: []\nassumptions_made: []\n'
        "debt_registered: true\ndebt_location: null\n",
        encoding="utf-8",
    )
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        assert app.feature.registry.state == "unreadable"
        assert (
            "2 PARSE FAILURES in 2 files: the registry is unreadable: systemic refs unknown, still counted; "
            "not counted in signal_lost: scar-reports/task-3-scar.yaml"
            in " ".join(" ".join(screen_text_lines(app)).split())
        )
        await filter_by(app, pilot, "grep-only")
        item = app.feature.item(current_item(app))
        assert item.systemic_ref == "doc-only-guard" and item.registry_state == "unknown" and item.counted
        detail = detail_text(app)
        assert "Systemic ref: doc-only-guard (unknown)" in detail
        assert "Registry: unreadable (.samsara/systemic-scars.yaml:1: not a mapping" in detail
        assert "it is still counted in signal_lost, and the registry is listed under Parse failures" in detail
        assert "its report failed to parse" not in detail and "dangling" not in detail
        # The registry's own row under Parse failures.
        await pilot.press("escape")
        await filter_shown(pilot, "")
        await filter_by(app, pilot, "unreadable")
        row = app.screen.query_one(ItemList).current_row
        assert row.kind == "failure" and row.failure.file == ".samsara/systemic-scars.yaml"
        detail = detail_text(app)
        assert "Parse failure — the systemic registry is unreadable" in detail
        assert "File: .samsara/systemic-scars.yaml:1" in detail
        assert "Every systemic_ref is unknown and still counted in signal_lost" in detail
        assert "this report's items are not counted" not in detail


@aio
async def test_a_field_error_goes_once_the_field_is_right(feature_dir):
    """Issue 16: a message stayed under a field after it was corrected."""
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press("a")
        await on_screen(app, pilot, "AcceptForm")
        form = app.screen
        await pilot.click("#form-save")
        await wait_until(pilot, lambda: form.query_one("#error-owner").has_class("shown"), "the owner error shown")
        assert form.query_one("#error-rationale").has_class("shown")
        form.query_one("#field-owner").focus()
        await type_text(pilot, "tbd")  # still says nothing: the error stays
        assert form.query_one("#error-owner").has_class("shown")
        for _ in range(3):
            await pilot.press("backspace")
        await type_text(pilot, "ops")
        await wait_until(pilot, lambda: not form.query_one("#error-owner").has_class("shown"), "the owner error gone")
        assert not form.query_one("#field-owner").has_class("invalid")
        assert form.query_one("#error-rationale").has_class("shown")  # the others stay until they are right


@aio
async def test_after_a_stop_the_app_says_so_and_a_decision_asks_before_it_starts_a_round(feature_dir):
    """Issue 16: after a round "stop" the app moved to "round 3 of 3" and offered triage as if
    nothing had happened. Issue 27: a decision then opened round 3 by itself; now it asks first
    (no or esc records nothing), and yes starts round 3 explicitly before the decision."""
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press("f", "g")
        await on_screen(app, pilot, "RoundGate")
        app.screen.query_one("#gate-reason").value = "the rest is accepted with owners"
        await pilot.press("b", "enter")
        log = feature_dir / "iteration-log.yaml"
        await wait_until(pilot, lambda: "decision: stop" in log.read_text(), "the round recorded")
        await wait_until(pilot, lambda: "stopped after round 2 of 3" in screen_text(app), "the header says so")
        assert "round 3 of 3" not in screen_text(app)
        journal = (feature_dir / ".scars" / "journal.jsonl").read_bytes()
        notes = record_notes(app)
        await pilot.press("j", "f")
        await on_screen(app, pilot, "ConfirmRoundStart")
        await wait_settled(pilot, "the question drawn")
        assert "The iteration stopped after round 2 (stop); start round 3?" in screen_text(app)
        await pilot.press("escape")  # leaving it records nothing
        await on_screen(app, pilot, "MainScreen")
        await wait_until(pilot, lambda: any("round 3 was not started" in m for _, m in notes), "not started said")
        assert (feature_dir / ".scars" / "journal.jsonl").read_bytes() == journal
        assert "stopped after round 2 of 3" in screen_text(app)
        item = current_item(app)
        await pilot.press("f")
        await confirm_round_start(app, pilot)
        await wait_until(pilot, lambda: item in app.decisions, "the decision recorded in round 3")
        assert any(t == "New round" and "Round 3 started: the loop iterates again" in m for t, m in notes)
        await wait_until(pilot, lambda: "round 3 of 3" in screen_text(app), "the header says round 3")
    with FeatureSession.open(feature_dir, read_only=True) as s:
        start_rec = [r for r in s.records if r["type"] == "round_start"][-1]
        assert start_rec["round"] == 3 and "opened_by" not in start_rec  # started explicitly, not by the decision
        assert s.journal_decisions[item].action == "fix" and s.current_round() == 3


@aio
async def test_the_loops_inbox_shows_why_whole_at_80_columns(feature_dir):
    """Issue 16: the "why" column was cut ("needs triag") at 80 columns."""
    from scars.core.loops import discover_loops

    root = feature_dir.parents[1]
    states = discover_loops(root)
    app = ScarsApp(None, inbox=(states, root))
    async with app.run_test(size=(80, 24)) as pilot:
        await on_screen(app, pilot, "LoopsScreen")
        why = next(s.reason for s in states if s.reason)
        assert f"why: {why}" in " ".join(" ".join(screen_text_lines(app)).split())


@aio
async def test_a_load_that_lands_while_the_app_closes_is_dropped(feature_dir):
    """A reload finished while the app closes (its main screen's widgets already taken down, as
    when a recorded decision's reload lands during exit) is dropped, not an error that ends the
    app with a traceback (seen under load: NoMatches ItemList in on_scars_app_loaded)."""
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await app.screen.query_one(ItemList).remove()  # what closing does first to the screen's widgets
        shown = app.state
        app._load(True, "disk")
        # its Loaded message handled (it takes the state first; an error would end the app: run_test raises it)
        await wait_until(pilot, lambda: app.state is not shown, "the reload's Loaded handled")
        assert app.is_running and not app.screen.query(ItemList)


@aio
async def test_keys_typed_at_once_after_slash_go_to_the_filter(feature_dir):
    """`/retry` arriving in one burst (a paste, a fast typist, a script driving the terminal):
    every key after `/` is the filter's, none a command of the list (`e` opened the editor, `t`
    the trends: the filter field took the focus only after the keys already queued)."""
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        screen = app.screen
        for key, char in [("slash", "/"), *((c, c) for c in "retry")]:
            app.post_message(events.Key(key, char))  # queued together, before any is handled
        await wait_until(pilot, lambda: screen.query_one("#filter", Input).value == "retry", "the filter typed")
        assert app.screen is screen


@aio
async def test_keys_typed_at_once_after_slash_reach_a_filter_field_mounted_by_it(feature_dir):
    """The filter's field is mounted after the first frame (issue 31); a `/` that comes before
    it mounts it, and the keys after it wait for it: none is a command of the list."""
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        screen = app.screen
        await screen.query_one("#filter-bar").remove_children()  # as before the field is mounted
        assert not screen.query("#filter")
        for key, char in [("slash", "/"), *((c, c) for c in "retry")]:
            app.post_message(events.Key(key, char))
        await wait_until(pilot, lambda: bool(screen.query("#filter")), "the field mounted")
        await wait_until(pilot, lambda: screen.query_one("#filter", Input).value == "retry", "the filter typed")
        assert app.screen is screen and len(screen.query("#filter")) == 1


@aio
async def test_a_slash_typed_in_the_filter_is_part_of_it(feature_dir):
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press("slash")
        await type_text(pilot, "file:scar-reports/task")
        assert app.screen.query_one("#filter", Input).value == "file:scar-reports/task"


@aio
async def test_a_report_written_while_the_app_first_reads_the_feature_is_shown(feature_dir, monkeypatch):
    """The disk stamp of a first open is taken before the read: a report the loop writes while the
    feature is read (after its directory was listed) is seen by the next poll of the disk, not
    missed until some later write."""
    from scars.tui.app import backend as backend_module

    real = backend_module.FeatureSession.open

    def open_then_written(*args, **kwargs):
        session = real(*args, **kwargs)  # read; the loop writes a report now
        (feature_dir / "scar-reports" / "task-9-scar.yaml").write_text(
            'task_id: task-9\ncompletion_status: done\nknown_shortcuts:\n  - "Written while scars read"\n'
            "silent_failure_conditions: []\nassumptions_made: []\ndebt_registered: false\n"
        )
        return session

    monkeypatch.setattr(backend_module.FeatureSession, "open", open_then_written)
    monkeypatch.setattr(ScarsApp, "POLL_SECONDS", 0.05)
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await wait_until(
            pilot, lambda: any(it.task_id == "task-9" for it in app.feature.items), "the report written meanwhile shown"
        )


HOSTILE_REPORT = "task-2\x1b[2J\x07-scar.yaml"  # ESC [2J clears a terminal, BEL rings it


def raw_controls(text: str) -> list[str]:
    """The C0 / DEL / C1 control characters in ``text`` (what a terminal would act on)."""
    return [ch for ch in text if ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F]


@aio
async def test_a_report_named_with_escapes_is_shown_inert_wherever_its_name_is(tmp_path):
    """A report's file name is the repository's text: a parse failure's row in the list, the
    warning bar and the detail show it with its controls made visible (␛ ␇), never raw; so does
    the header the feature directory's name (an OSC title sequence here)."""
    feature = write_feature(
        tmp_path, {"task-1-scar.yaml": report("task-1", ks=['description: "fine"'])}, name="2026-11-02_demo\x1b]0;x\x07"
    )
    (feature / "scar-reports" / HOSTILE_REPORT).write_text("known_shortcuts: [unclosed\n", encoding="utf-8")
    app = ScarsApp(feature, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        items = app.screen.query_one(ItemList)
        at = next(k for k, r in enumerate(items.rows) if r.kind == "failure")
        assert "\x1b" in items.rows[at].failure.where  # the name as read: the row must make it inert
        row = items.render_line(at - int(items.scroll_offset.y)).text
        bar = app.screen.query_one("#warnings").render()
        header = screen_text_lines(app)[0].rstrip("\n")
        assert "demo␛]0;x␇" in header and raw_controls(header) == [], header  # the feature's own name
        items.move_to(at)
        await wait_until(pilot, lambda: "Parse failure" in detail_text(app), "the failure's detail")
        for shown in (row, str(bar), " ".join(detail_text(app).splitlines())):  # (the detail's own lines)
            assert "task-2␛[2J␇-scar.yaml" in shown and raw_controls(shown) == [], shown
