"""CLI of the durable layer in a subprocess without a TTY: decide, undo, round, log verify."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass

import pytest
import yaml

from scars.tui.cli.main import main
from tests.factories import ACCEPT, csv_feature, scars_process


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


def scars(*args, cwd=None, check_rc=None):
    """Run the CLI in-process (the same main() the console script calls)."""
    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.environ["SCARS_USER"] = "cli-user"
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(list(args))
            except SystemExit as exc:  # argparse usage errors
                rc = exc.code
    finally:
        os.chdir(old)
        os.environ["SCARS_USER"] = "test-user"
    p = Result(rc, out.getvalue(), err.getvalue())
    if check_rc is not None:
        assert p.returncode == check_rc, (p.stdout, p.stderr)
    return p


def scars_subprocess(*args, cwd=None):
    return scars_process(*args, cwd=cwd, env={"SCARS_USER": "cli-user"})


@pytest.fixture
def feature(tmp_path):
    return csv_feature(tmp_path)


def item_ids(feature):
    out = scars("status", str(feature), "--json", check_rc=0)
    return [i["id"] for i in json.loads(out.stdout)["items"]]


def test_decide_undo_round_cycle(feature):
    a, b, c, d = item_ids(feature)
    p = scars("decide", a, "--fix", "--json", cwd=feature, check_rc=0)
    out = json.loads(p.stdout)
    assert out["ok"] and out["saved"][0]["action"] == "fix" and out["saved"][0]["decided_by"] == "cli-user"
    p = scars(
        "decide",
        b,
        "--accept",
        "--signal",
        "",
        "--owner",
        "tbd",
        "--rationale",
        ACCEPT["rationale"],
        "--feature",
        str(feature),
        "--json",
        check_rc=4,
    )
    err = json.loads(p.stdout)
    assert {f["field"] for f in err["fields"]} == {"re_review_signal", "owner"}
    assert "owner" in p.stderr
    scars(
        "decide",
        b,
        "--accept",
        "--signal",
        ACCEPT["re_review_signal"],
        "--owner",
        ACCEPT["owner"],
        "--rationale",
        ACCEPT["rationale"],
        "--as",
        "alice",
        "--feature",
        str(feature),
        check_rc=0,
    )
    p = scars("decide", c, d, "--defer", "--reason", "next quarter", "--feature", str(feature), check_rc=0)
    assert p.stdout.count("saved: ") == 2
    p = scars("undo", "--feature", str(feature), "--json", check_rc=0)
    assert sorted(json.loads(p.stdout)["reverted"]) == sorted([c, d])
    # the first decision opened round 1 (the one rule the app follows too): no second start
    p = scars("round", "start", "--feature", str(feature), check_rc=2)
    assert "round 1 is already open" in p.stderr
    p = scars(
        "round",
        "close",
        "--decision",
        "stop",
        "--reason",
        "nothing actionable remains",
        "--evidence",
        "tests green",
        "--budget-spent",
        "implementer_dispatches=1,validation_runs=2",
        "--feature",
        str(feature),
        "--json",
        check_rc=0,
    )
    r = json.loads(p.stdout)["round"]
    assert r["triage_result"]["fix"] == ["Retry count is hard-coded to 3"]
    assert r["budget_spent"] == {"implementer_dispatches": 1, "validation_runs": 2}
    log = yaml.safe_load((feature / "iteration-log.yaml").read_text())
    assert log["rounds"][0]["triage_result"]["accept"][0]["owner"] == ACCEPT["owner"]
    status = json.loads(scars("status", str(feature), "--json", check_rc=0).stdout)
    assert [x["round"] for x in status["rounds"]] == [1]


def test_usage_errors(feature, tmp_path):
    a = item_ids(feature)[0]
    scars("decide", a, "--feature", str(feature), check_rc=2)  # no action
    scars("decide", a, "--fix", "--defer", "--feature", str(feature), check_rc=2)
    scars("decide", a, "--fix", "--feature", str(tmp_path / "missing"), check_rc=2)
    scars("round", "close", "--decision", "stop", "--reason", "done", "--feature", str(feature), check_rc=2)
    p = scars("round", "close", "--decision", "forced_stop", "--reason", "we stopped", "--feature", str(feature))
    assert p.returncode == 2  # no open round comes first
    scars("round", "start", "--feature", str(feature), check_rc=0)
    p = scars(
        "round", "close", "--decision", "forced_stop", "--reason", "we stopped", "--feature", str(feature), check_rc=4
    )
    assert "trigger" in p.stderr


def test_second_writer_gets_exit_5_naming_the_holder(feature):
    a = item_ids(feature)[0]
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys\nfrom scars.core.samsara.session import FeatureSession\n"
            f"s = FeatureSession.open({str(feature)!r}, user='holder-person')\nprint('open', flush=True)\nsys.stdin.read()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "open"
        p = scars("decide", a, "--fix", "--feature", str(feature), "--json", check_rc=5)
        assert "holder-person" in p.stderr and str(holder.pid) in p.stderr
        assert json.loads(p.stdout)["holder"]["pid"] == holder.pid
        p = scars("round", "status", "--feature", str(feature), check_rc=0)  # read-only works meanwhile
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    scars("decide", a, "--fix", "--feature", str(feature), check_rc=0)


def test_console_script_without_tty(feature):
    a = item_ids(feature)[0]
    p = scars_subprocess("decide", a, "--accept", "--owner", "-", "--feature", str(feature))
    assert p.returncode == 4 and "re_review_signal" in p.stderr and "owner" in p.stderr
    p = scars_subprocess("decide", a, "--defer", "--reason", "needs the v2 API", cwd=feature)
    assert p.returncode == 0 and p.stdout.startswith("saved: " + a)


@pytest.fixture
def at_a_terminal(monkeypatch):
    """A person types these commands at a terminal: in human mode `log verify` then finds each
    decision a person's (without one it says nothing shows so: tests/core/test_provenance.py)."""
    monkeypatch.setattr("scars.tui.cli.commands._feature.attended", lambda: True)


def test_log_verify(feature, at_a_terminal):
    a, b, c, d = item_ids(feature)
    p = scars("log", "verify", str(feature), "--json", check_rc=3)
    assert json.loads(p.stdout)["outcome"] == "unknown"
    scars("round", "start", "--feature", str(feature), check_rc=0)
    scars("decide", a, "--fix", "--feature", str(feature), check_rc=0)
    scars(
        "decide",
        b,
        "--accept",
        "--signal",
        "x grows",
        "--owner",
        "ops",
        "--rationale",
        "cheap to watch",
        "--feature",
        str(feature),
        check_rc=0,
    )
    scars(
        "round",
        "close",
        "--decision",
        "stop",
        "--reason",
        "all decided",
        "--auto-entry",
        "--feature",
        str(feature),
        check_rc=0,
    )
    p = scars("log", "verify", str(feature), "--json", check_rc=0)
    assert json.loads(p.stdout)["outcome"] == "success"
    p = scars("log", "verify", "--feature", str(feature), check_rc=0)
    assert "success" in p.stdout
    # an edited log no longer agrees with the journal; a generic answer is flagged
    log = feature / "iteration-log.yaml"
    log.write_text(log.read_text().replace('owner: "ops"', 'owner: ""'))
    md = feature / "auto-decisions.md"
    md.write_text(re.sub(r'- gatekeeper_answer: ".*: all decided"', '- gatekeeper_answer: "approved"', md.read_text()))
    p = scars("log", "verify", str(feature), "--json", check_rc=1)
    out = json.loads(p.stdout)
    assert out["outcome"] == "failure"
    msgs = " | ".join(r["message"] for r in out["reasons"])
    assert "has no owner" in msgs and "generic" in msgs and "differs from the round scars recorded" in msgs


def test_log_verify_on_a_repository_verifies_every_feature(tmp_path, at_a_terminal):
    f1 = csv_feature(tmp_path, name="2026-07-10_one")
    csv_feature(tmp_path, name="2026-07-11_two")
    a = item_ids(f1)[0]
    scars("round", "start", "--feature", str(f1), check_rc=0)
    scars("decide", a, "--fix", "--feature", str(f1), check_rc=0)
    scars("round", "close", "--decision", "stop", "--reason", "all decided", "--feature", str(f1), check_rc=0)
    p = scars("log", "verify", str(tmp_path), "--json", check_rc=3)
    out = json.loads(p.stdout)
    assert out["outcome"] == "unknown"  # the second feature has nothing to verify yet
    assert [f["outcome"] for f in out["features"]] == ["success", "unknown"]
    scars("log", "verify", str(tmp_path / "nowhere"), check_rc=2)


def test_undo_an_items_earlier_decision(feature):
    a, b = item_ids(feature)[:2]
    scars("decide", a, "--fix", "--feature", str(feature), check_rc=0)
    scars("decide", b, "--fix", "--feature", str(feature), check_rc=0)
    p = scars("undo", a, "--feature", str(feature), "--json", check_rc=0)
    assert json.loads(p.stdout)["reverted"] == [a]
    from scars.core.samsara.session import FeatureSession

    with FeatureSession.open(feature, read_only=True) as s:
        assert set(s.decisions) == {b}  # b, decided after a, kept
    p = scars("undo", a, "--feature", str(feature), check_rc=0)
    assert "nothing to undo" in p.stdout
    # An id no item has (a typo) is refused, never "nothing to undo" with exit 0.
    p = scars("undo", a[:-1] + ("0" if a[-1] != "0" else "1"), "--feature", str(feature), check_rc=4)
    assert "no item" in p.stderr and "scars status --json" in p.stderr


def test_a_repository_root_given_for_a_feature_names_its_features(feature):
    """`scars decide ITEM --feature ROOT` said "give changes/<feature>/ or a repository root
    holding changes/" — a repository root was what it refused."""
    root = feature.parent.parent
    (item,) = item_ids(feature)[:1]
    p = scars("decide", item, "--fix", "--feature", str(root), check_rc=2)
    assert "or a repository root" not in p.stderr
    assert f"it is a repository root: give one of its features, e.g. {root / 'changes' / feature.name}" in p.stderr
    p = scars("undo", "--feature", str(root / "changes"), check_rc=2)
    assert "give a feature directory, changes/<date>_<feature>/" in p.stderr
