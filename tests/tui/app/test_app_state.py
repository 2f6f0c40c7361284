"""The app's view model, location resolving, keymap loading and chart (no Textual app run)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from scars.core.samsara.decisions import Decision
from scars.core.samsara.feature import read_feature
from scars.core.samsara.locate import codeowners, parse_location, read_excerpt
from scars.tui.app.keymap import load_keymap, refuse_conflicts
from scars.tui.app.viewmodel import FilterError, TriageState, parse_filter
from scars.tui.app.widgets.chart import BarChart, Series
from tests.factories import sample_feature


def test_rows_follow_group_order_with_counts(tmp_path):
    f = sample_feature(tmp_path)
    rows = TriageState(f).rows()
    headers = [r.label for r in rows if r.kind == "header"]
    assert headers == [
        "Cross-task patterns (2)",
        "Deferred from Level 1 (1)",
        "Unaddressed (2)",
        "Not counted (1)",
        "Parse failures (1)",
    ]
    assert rows[-1].kind == "failure" and rows[-1].failure.file == "scar-reports/task-4-scar.yaml"


def test_filter_by_category_task_state_and_words(tmp_path):
    f = sample_feature(tmp_path)
    st = TriageState(f)
    ids = lambda flt, dec=None: [r.item_id for r in st.rows(parse_filter(flt), dec or {}) if r.kind == "item"]  # noqa: E731
    assert [st.views[i].item.category for i in ids("cat:sf")] == ["silent_failure_conditions"]
    assert {st.views[i].item.task_id for i in ids("task:task-3")} == {"task-3"}
    assert len(ids("RETRY hard-coded")) == 2
    first = ids("")[0]
    decided = {first: Decision(first, "fix")}
    assert first not in ids("state:undecided", decided)
    assert ids("state:fix", decided) == [first]
    assert ids("cat:ks task:task-1 state:undecided retry") == [first]
    # a filter on category/state hides parse failures; a word filter can find them
    assert all(r.kind != "failure" for r in st.rows(parse_filter("cat:ks")))
    assert any(r.kind == "failure" for r in st.rows(parse_filter("mapping")))


@pytest.mark.parametrize("bad", ["cat:zz", "state:maybe", "task:"])
def test_bad_filter_says_what_is_wrong(bad):
    with pytest.raises(FilterError):
        parse_filter(bad)


def test_progress_and_first_undecided(tmp_path):
    f = sample_feature(tmp_path)
    st = TriageState(f)
    rows = st.rows()
    first = st.first_undecided(rows, {})
    assert rows[first].kind == "item"
    dec = {rows[first].item_id: Decision(rows[first].item_id, "defer")}
    nxt = st.first_undecided(rows, dec)
    assert nxt != first and rows[nxt].item_id not in dec
    assert st.progress(dec) == (1, len(f.items))


def test_rows_keep_stable_keys_across_filters(tmp_path):
    f = sample_feature(tmp_path)
    st = TriageState(f)
    all_keys = {r.key for r in st.rows()}
    filtered = {r.key for r in st.rows(parse_filter("task:task-2"))}
    assert filtered - {k for k in filtered if k.startswith("header:")} <= all_keys


def test_excerpt_inside_repo_and_refusal_outside(tmp_path):
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "a.py").write_text("".join(f"x{i} = {i}\n" for i in range(1, 31)))
    (tmp_path / "secret.txt").write_text("top secret\n")
    os.symlink(tmp_path / "secret.txt", repo / "src" / "link.txt")
    ex, reason = read_excerpt(str(repo), "src/a.py:10-11")
    assert reason is None and ex.highlight == (10, 11) and "x10 = 10" in ex.text and ex.first_line == 7
    for where in ("../secret.txt", "src/link.txt", str(tmp_path / "secret.txt")):
        ex, reason = read_excerpt(str(repo), where)
        assert ex is None and reason and "secret" not in reason
    ex, reason = read_excerpt(str(repo), "src/a.py:99")
    assert ex is None and "30 lines" in reason


def test_parse_location_forms():
    def triple(text):
        loc = parse_location(text)
        return loc.path, loc.start, loc.end

    assert triple("src/export.py:40-88") == ("src/export.py", 40, 88)
    assert triple("src/x.py#L5") == ("src/x.py", 5, 5)
    assert triple("src/x.py (the retry loop)") == ("src/x.py", None, None)


def test_codeowners_last_match_wins(tmp_path):
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "CODEOWNERS").write_text("* @all\n/src/ @core # comment\n*.md @docs\n")
    assert codeowners(str(tmp_path), ["src/a.py"]) == ["@core"]
    assert codeowners(str(tmp_path), ["README.md"]) == ["@docs"]


def test_keymap_file(tmp_path):
    p = tmp_path / "keymap.toml"
    p.write_text('"scars.fix" = "x"\n[keys]\n"scars.quit" = ["Q", "ctrl+q"]\n"nope" = "z"\n')
    km, problems = load_keymap(p, {"scars.fix", "scars.quit"})
    assert km == {"scars.fix": "x", "scars.quit": "Q,ctrl+q"}
    assert len(problems) == 1 and "nope" in problems[0]
    p.write_text("= broken")
    km, problems = load_keymap(p, set())
    assert km == {} and "not valid TOML" in problems[0]
    assert load_keymap(tmp_path / "missing.toml") == ({}, [])


def test_keymap_values_of_the_wrong_type_are_refused_by_name(tmp_path):
    p = tmp_path / "keymap.toml"
    p.write_text('"scars.fix" = 5\n"scars.quit" = ""\n"scars.undo" = ["u", 3]\n')
    km, problems = load_keymap(p, {"scars.fix", "scars.quit", "scars.undo"})
    assert km == {} and len(problems) == 3
    assert all("must be a key string" in m for m in problems)
    assert [m.split("'")[1] for m in problems] == ["scars.fix", "scars.quit", "scars.undo"]


def test_a_rebinding_onto_another_bindings_key_is_refused():
    """`"scars.fix" = "q"` was accepted: q fixed, the hints said `q Fix … q Quit`, only Ctrl-C left."""
    from scars.tui.app.screens.main import MAIN_BINDINGS

    kept, problems = refuse_conflicts({"scars.fix": "q"}, MAIN_BINDINGS)
    assert kept == {} and problems == [
        "'scars.fix' = \"q\" is refused: q is scars.quit's key (bind that one elsewhere first)"
    ]
    # moving quit away first frees q (file order)
    assert refuse_conflicts({"scars.quit": "Q", "scars.fix": "q"}, MAIN_BINDINGS) == (
        {"scars.quit": "Q", "scars.fix": "q"},
        [],
    )
    # two rebindings onto one new key: the first wins, the second is refused
    kept, problems = refuse_conflicts({"scars.fix": "x", "scars.undo": "x,ctrl+z"}, MAIN_BINDINGS)
    assert kept == {"scars.fix": "x"} and problems[0].startswith(
        "'scars.undo' = \"x,ctrl+z\" is refused: x is scars.fix's"
    )
    # a key list: one clashing key refuses the entry; its own old keys are no clash
    assert refuse_conflicts({"scars.fix": "f,x"}, MAIN_BINDINGS) == ({"scars.fix": "f,x"}, [])
    kept, problems = refuse_conflicts({"scars.fix": "x,j"}, MAIN_BINDINGS)
    assert kept == {} and "j is scars.down's key" in problems[0]


def test_chart_draws_axis_labels_and_values():
    chart = BarChart("signal_lost per round", ["start", "R1", "now"], [Series("s", [9, 5, 0])], height=4)
    lines = [t.plain for t in chart.lines()]
    assert lines[0] == "signal_lost per round"
    assert lines[1].lstrip().startswith("9 ┤")
    bars = lines[1:5]
    # the 9 bar reaches the top row; a 0 value draws no bar
    assert "██" in bars[0] and all(line.count("██") <= 2 for line in bars)
    assert "start" in lines[-2] and "R1" in lines[-2]
    assert lines[-1].split() == ["9", "5", "0"]


def test_triage_without_tty_exits_2_and_names_commands(tmp_path):
    fdir = tmp_path / "changes" / "2026-01-01_x"
    (fdir / "scar-reports").mkdir(parents=True)
    proc = subprocess.run(
        [sys.executable, "-m", "scars.tui", "triage", str(fdir)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=30,
    )
    assert proc.returncode == 2
    assert "scars status" in proc.stderr and "scars decide" in proc.stderr and "--answers" in proc.stderr


def test_triage_missing_dir_is_usage_error(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "scars.tui", "triage", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=30,
    )
    assert proc.returncode == 2 and "does not exist" in proc.stderr


def test_form_validation_is_cores_including_the_watch():
    from scars.tui.app.backend import Backend

    fields = {"re_review_signal": "a second writer appears", "owner": "tbd", "rationale": "single process"}
    assert [p.field for p in Backend.validate("accept", fields)] == ["owner"]
    fields["owner"] = "bob"
    assert Backend.validate("accept", fields) == []
    bad = Backend.validate("accept", {**fields, "watch": "pattern: ( in src/**"})
    assert [p.field for p in bad] == ["watch"] and "regex" in bad[0].message
    assert Backend.validate("accept", {**fields, "watch": "path-changed: src/**"}) == []


def test_bare_scars_outside_a_repository_explains_itself(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "scars.tui"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert proc.returncode == 0 and "scars demo" in proc.stdout and "changes/" in proc.stdout


def test_bare_scars_without_tty_names_what_waits(tmp_path):
    from tests.factories import app_repo

    root = tmp_path / "repo"
    root.mkdir()
    app_repo(root)
    proc = subprocess.run(
        [sys.executable, "-m", "scars.tui"],
        capture_output=True,
        text=True,
        cwd=root,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "2026-07-01_csv-export" in proc.stderr and "scars status" in proc.stderr


def test_chart_bars_of_13_and_15_differ_at_height_6():
    """Issue 16: both drew the same six full cells; the top cell is drawn in eighths."""
    chart = BarChart("s", ["a", "b"], [Series("s", [15, 13])], height=6, y_label="items")
    rows = [t.plain for t in chart.lines()][2:8]
    tops = {ch for ch in rows[0] if ch in "▁▂▃▄▅▆▇█"}
    assert "█" in rows[0] and "▂" in rows[0] and tops == {"█", "▂"}
    assert all(row.count("█") == 4 for row in rows[1:])  # below the top, both bars are full


def test_trends_end_with_a_now_bar_and_name_the_feature(tmp_path):
    from scars.tui.app.screens.trends import trend_charts
    from tests.factories import app_repo

    root = tmp_path / "repo"
    root.mkdir()
    feature = read_feature(app_repo(root))
    signal = trend_charts(feature, {})[0]
    assert signal.x_labels[-1] == "now"
    assert signal.series[1].values[-1] == feature.signal_lost  # scars' recount of now


@pytest.mark.parametrize(
    ("task_len", "room", "width"),
    [
        (28, 52, 28),  # the text keeps 24 of 52: the id is whole
        (28, 51, 27),  # one cell less: the id gives way, not the text
        (42, 70, 42),  # 3/5 of 70 is 42: whole
        (42, 69, 41),  # 3/5 of 69 is 41
        (20, 20, 14),  # a short row still gives the task 14 cells
        (9, 200, 9),  # never wider than the longest task
    ],
)
def test_the_task_column_is_the_longest_task_within_3_5_of_the_row_leaving_the_text_24(task_len, room, width):
    from types import SimpleNamespace

    from scars.tui.app.viewmodel import ItemViews
    from scars.tui.app.widgets.item_list import ItemList, fit_middle

    lst = ItemList()
    lst.views = ItemViews(
        [SimpleNamespace(id="ks-1", task_id="t" * task_len), SimpleNamespace(id="ks-2", task_id="task-1")]
    )
    assert lst.task_width(room) == width
    cut = fit_middle("iteration-r1-three-state-dry", 19)
    assert cut == "iteration…state-dry" and len(cut) == 19


def test_a_log_description_that_may_name_the_item_is_shown_whole_and_as_written(tmp_path):
    """The detail pane cut it at 100 characters and showed Python's repr (C:\\\\temp for C:\\temp)."""
    from scars.core import read_feature
    from scars.tui.app.widgets.detail import unsettled_log_matches
    from tests.factories import report, write_feature

    desc = r"Upload retries under C:\temp are hard-coded, and the exporter ignores disk quotas on every platform END"
    feat = write_feature(
        tmp_path,
        {"task-1-scar.yaml": report("task-1", ks=['"Retry count for uploads is hard-coded to 3"', '"No metrics"'])},
        files={
            "iteration-log.yaml": "feature: demo\nsignal_lost_initial: 2\nrounds:\n  - round: 1\n"
            f"    signal_lost_before: 2\n    triage_result:\n      fix:\n        - '{desc}'\n"
            '    signal_lost_after: 2\n    decision: continue\n    decision_reason: "the uploader items are actionable"\n'
        },
    )
    f = read_feature(feat)
    shown = [line for it in f.items for line in unsettled_log_matches(f, it.id)]
    assert shown and shown[0].startswith(f"round 1 fix '{desc}' may name this item")


def test_the_warning_bar_says_a_valve_in_words_never_its_raw_figures():
    """Issue 16: the bar read "(files={'src/export.py': ['ks-9e12bd8b69', …]}, fix_items=3,
    source=decisions)": the valve's figures as Python data."""
    from scars.core.samsara.rounds import evaluate_valves
    from scars.tui.app.widgets.warning_bar import warning_lines
    from tests.factories import decisions, feature, item

    a, b = item(1, where="src/export.py:40-88"), item(2, where="src/export.py, src/other.py")
    f = feature([a, b, item(3, where="docs/x.md")])
    (line,) = [t.plain for t in warning_lines(f, evaluate_valves(f, decisions(fix=[a, b])))]
    assert line.startswith("⚠ WATCH-FOR same files: ") and "src/export.py" in line
    assert not any(raw in line for raw in ("{", "[", "fix_items", "source=", "files="))
