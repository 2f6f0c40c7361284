"""One rule for when a round opens, the same in the app and the CLI (issue 27 §3).

Before: `scars decide` opened no round but the app's first decision did, so `scars round close`
after a CLI triage said "no round is open". Now every front end that records a decision calls
core's one rule (``FeatureSession.open_round_for_decision``): the same decisions through `scars
decide` / `scars undo` and through the app's backend give the same journal round records, and
`round close` works after both; after a stop both refuse and say how to go on; an answers file's
items open the round its round gate then closes, and are refused after a stop before anything is
recorded.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from scars.core.errors import IterationStopped
from scars.core.samsara.session import FeatureSession
from scars.core.storage.journal import journal_path, read_journal
from scars.tui.app.backend import Backend
from tests.factories import ACCEPT, clean_env, item_id, run_cli, samsara_feature, tree_hashes

REASON = "the rest is accepted with owners"


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_env(monkeypatch)


@pytest.fixture
def twins(tmp_path) -> tuple[Path, Path]:
    """The same feature twice: one decided through the CLI, one through the app's backend."""
    cli = samsara_feature(tmp_path / "cli")
    app = tmp_path / "app" / cli.relative_to(tmp_path / "cli")
    shutil.copytree(tmp_path / "cli", tmp_path / "app")
    return cli, app


def ids(feature) -> tuple[str, str, str]:
    return (
        item_id(feature, "Retry count is hard-coded to 3"),
        item_id(feature, "Config is UTF-8"),
        item_id(feature, "Timezone-naive timestamps compare as UTC"),
    )


def round_records(feature) -> list[tuple]:
    """What the journal says about rounds and decisions, without times, people and provenance."""
    out = []
    for r in read_journal(journal_path(feature)).records:
        if r["type"] == "round_start":
            out.append(("round_start", r["round"], r.get("opened_by"), r["signal_lost_before"]))
        elif r["type"] == "round_close":
            out.append(("round_close", r["round"], r["entry"]["decision"]))
        elif r["type"] == "decision":
            out.append(("decision", r["round"], tuple((d["item_id"], d["action"]) for d in r["decisions"])))
        elif r["type"] == "undo":
            out.append(("undo", tuple(r["items"]), "withdraws_round" in r))
        else:
            out.append((r["type"],))
    return out


def by_cli(feature: Path, capsys, steps: list[tuple]) -> None:
    for step in steps:
        if step[0] == "undo":
            argv = ["undo", "--feature", str(feature)]
        else:
            _, items, action = step
            flags = {"fix": ["--fix"], "accept": ["--accept", "--signal", ACCEPT["re_review_signal"],
                     "--owner", ACCEPT["owner"], "--rationale", ACCEPT["rationale"]],
                     "defer": ["--defer", "--reason", "needs the v2 API"]}[action]  # fmt: skip
            argv = ["decide", *items, *flags, "--feature", str(feature)]
        code, out, err = run_cli(argv, capsys)
        assert code == 0, (argv, out, err)


def by_app(feature: Path, steps: list[tuple]) -> None:
    backend = Backend.open(feature, user="alice")
    try:
        for step in steps:
            if step[0] == "undo":
                backend.undo()
                continue
            _, items, action = step
            fields = {"accept": ACCEPT, "defer": {"reason": "needs the v2 API"}, "fix": {}}[action]
            if len(items) == 1:
                backend.decide(items[0], action, **fields)
            else:
                backend.decide_many(list(items), action, **fields)
    finally:
        backend.close()


def close(feature: Path, capsys) -> tuple[int, str, str]:
    return run_cli(["round", "close", "--decision", "stop", "--reason", REASON, "--feature", str(feature)], capsys)


def test_the_same_decisions_through_the_cli_and_the_app_give_the_same_rounds(twins, capsys):
    cli, app = twins
    a, b, c = ids(cli)
    steps = [
        ("decide", (a,), "fix"),
        ("undo",),  # the round the decision opened goes with it
        ("decide", (b,), "accept"),  # opens round 1 again
        ("decide", (a, c), "defer"),
        ("undo",),  # the batch: b still holds the round
    ]
    by_cli(cli, capsys, steps)
    by_app(app, steps)
    expected = [
        ("round_start", 1, "decision", 5),
        ("decision", 1, ((a, "fix"),)),
        ("undo", (a,), True),
        ("round_start", 1, "decision", 5),
        ("decision", 1, ((b, "accept"),)),
        ("decision", 1, ((a, "defer"), (c, "defer"))),
        ("undo", (a, c), False),
    ]
    assert round_records(cli) == round_records(app) == expected
    for feature in (cli, app):  # before: "no round is open" after a CLI triage
        code, out, err = close(feature, capsys)
        assert code == 0, err
        assert "round 1 closed (stop)" in out
        log = yaml.safe_load((feature / "iteration-log.yaml").read_text())
        assert [r["round"] for r in log["rounds"]] == [1]
        assert log["rounds"][0]["triage_result"]["accept"][0]["owner"] == ACCEPT["owner"]


def test_after_a_stop_the_cli_and_the_app_refuse_alike_and_say_how_to_go_on(twins, capsys):
    cli, app = twins
    a, _, _ = ids(cli)
    for feature in (cli, app):
        with FeatureSession.open(feature, user="alice") as s:
            s.start_round()
            s.close_round("stop", REASON)
    before = {f: tree_hashes(f.parent) for f in (cli, app)}
    code, out, err = run_cli(["decide", a, "--fix", "--feature", str(cli)], capsys)
    assert code == 4
    assert "stopped after round 1 (stop)" in err and "`scars round start`" in err
    backend = Backend.open(app, user="alice")
    try:
        with pytest.raises(IterationStopped) as exc:
            backend.decide(a, "fix")
        assert str(exc.value) in err  # the same refusal, word for word
        assert backend.stopped() == (1, "stop")
    finally:
        backend.close()
    assert {f: tree_hashes(f.parent) for f in (cli, app)} == before  # nothing written by either
    # The explicit way on: `scars round start` (the app's confirmed start is Backend.start_round).
    code, out, err = run_cli(["round", "start", "--feature", str(cli)], capsys)
    assert code == 0 and "round 2 started" in out
    code, out, err = run_cli(["decide", a, "--fix", "--feature", str(cli)], capsys)
    assert code == 0 and "round 2 opened" not in out  # started explicitly, not by the decision
    backend = Backend.open(app, user="alice")
    try:
        backend.start_round()
        backend.decide(a, "fix")
    finally:
        backend.close()
    assert round_records(cli) == round_records(app)


def test_the_cli_says_which_round_a_decision_opened_and_an_undo_withdrew(tmp_path, capsys):
    f = samsara_feature(tmp_path)
    a, _, _ = ids(f)
    code, out, _ = run_cli(["decide", a, "--fix", "--feature", str(f)], capsys)
    assert code == 0 and out.startswith("saved: ") and "round 1 opened: the first decision of a round opens it" in out
    code, out, _ = run_cli(["undo", "--feature", str(f), "--json"], capsys)
    assert code == 0 and '"round_withdrawn": 1' in out
    code, out, _ = run_cli(["decide", a, "--fix", "--feature", str(f)], capsys)
    code, out, _ = run_cli(["undo", "--feature", str(f)], capsys)
    assert "round 1 is no longer open: a decision opened it and it holds nothing now" in out
    code, out, _ = run_cli(["round", "status", "--feature", str(f)], capsys)
    assert "no round open; the next is round 1" in out


def test_an_answers_files_items_open_the_round_its_gate_closes(tmp_path, capsys):
    f = samsara_feature(tmp_path)
    a, b, _ = ids(f)
    answers = tmp_path / "answers.yaml"
    answers.write_text(
        f'{a}: fix\n{b}: {{action: defer, reason: "needs the v2 API"}}\n'
        f'round-continue: {{answer: stop, reason: "{REASON}"}}\n'
    )
    code, out, err = run_cli(["gate", "round-continue", str(f), "--answers", str(answers), "--json"], capsys)
    assert code == 0, err
    assert [r[:2] for r in round_records(f)][:2] == [("round_start", 1), ("decision", 1)]
    assert yaml.safe_load((f / "iteration-log.yaml").read_text())["rounds"][0]["decision"] == "stop"
    # Round 1 stopped the iteration: the same items again are refused before anything is recorded.
    answers.write_text(f"{a}: defer\n")
    before = tree_hashes(tmp_path)
    code, out, err = run_cli(["gate", "triage", str(f), "--answers", str(answers)], capsys)
    assert code == 4 and "nothing was recorded" in err and "stopped after round 1 (stop)" in err
    assert tree_hashes(tmp_path) == before
