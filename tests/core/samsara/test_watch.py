"""Watches on re-review signals, in a temporary git repository (issue 5)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from scars.core.model import Round, ScarReport
from scars.core.records import replace
from scars.core.samsara import watches as wmod
from scars.core.samsara.decisions import DECISION, REOPEN, replay
from scars.core.samsara.watches import (
    WatchedAccept,
    WatchSyntaxError,
    check_feature,
    evaluate,
    glob_to_regex,
    match_paths,
    parse_watch,
    read_watch_log,
    record_base,
    validate_watch,
)
from tests.factories import D, feature, item, log
from tests.hypothesis_profiles import examples

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_DATE="2026-01-01T00:00:00+00:00", GIT_COMMITTER_DATE="2026-01-01T00:00:00+00:00")
    if args and args[0] == "commit" and "--date-later" in args:
        args = tuple(a for a in args if a != "--date-later")
        env.update(GIT_AUTHOR_DATE="2026-03-01T00:00:00+00:00", GIT_COMMITTER_DATE="2026-03-01T00:00:00+00:00")
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    ).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    fdir = r / "changes" / "2026-01-01_demo" / "scar-reports"
    fdir.mkdir(parents=True)
    (r / "src").mkdir()
    (r / "src" / "export.py").write_text("def export():\n    return 1\n")
    (r / "src" / "other.py").write_text("x = 1\n")
    (fdir / "task-1-scar.yaml").write_text("task_id: task-1\n")
    subprocess.run(["git", "init", "-q", str(r)], check=True)
    git(r, "config", "user.name", "Test")
    git(r, "config", "user.email", "test@example.invalid")
    git(r, "config", "commit.gpgsign", "false")
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "initial")
    return r


def feat(repo: Path, items=(), **kw):
    path = repo / "changes" / "2026-01-01_demo"
    f = feature(items, path=str(path), **kw)
    reports = tuple(
        ScarReport(file=p, task_id=None, completion_status=None, items=())
        for p in sorted({it.file for it in items} | {"scar-reports/task-1-scar.yaml"})
    )
    return replace(f, repo_root=str(repo), reports=reports)


def accept(it, spec, decided_at="2026-02-01T00:00:00+00:00"):
    return {it.id: D(it.id, "accept", watch=spec, decided_at=decided_at)}


# ------------------------------------------------------------------ syntax


@pytest.mark.parametrize(
    "spec, kind, glob, regex",
    [
        ("path-changed: src/*.py", "path-changed", "src/*.py", None),
        ("  PATH-CHANGED:   src/**  ", "path-changed", "src/**", None),
        ("pattern: TODO\\(\\w+\\) in src/**/*.py", "pattern", "src/**/*.py", "TODO\\(\\w+\\)"),
        ("pattern: a in b in docs/*.md", "pattern", "docs/*.md", "a in b"),
        ("recurs", "recurs", None, None),
        ({"path-changed": "a/*", "base": "abc"}, "path-changed", "a/*", None),
        ({"spec": "recurs"}, "recurs", None, None),
    ],
)
def test_parse_watch(spec, kind, glob, regex):
    w = parse_watch(spec)
    assert (w.kind, w.glob, w.regex) == (kind, glob, regex)


@pytest.mark.parametrize(
    "spec",
    [
        "",
        "when it breaks",
        "path-changed:",
        "path-changed: /etc/passwd",
        "path-changed: ../x/*",
        "path-changed: a/../../b",
        "pattern: foo",
        "pattern:  in src/*",
        "recurs\nrecurs",
        42,
        {"nope": 1},
    ],
)
def test_parse_watch_refuses(spec):
    with pytest.raises(WatchSyntaxError):
        parse_watch(spec)


def test_validate_watch_messages():
    assert validate_watch(None) is None and validate_watch("") is None
    assert validate_watch("recurs") is None
    assert "invalid regex" in validate_watch("pattern: ([a- in src/*")
    assert "use one of" in validate_watch("someday")


def test_a_watch_is_quoted_as_written_never_with_doubled_backslashes():
    """Issue 16: a watch's regex showed double-escaped (repr): 'retry\\\\s+(' for retry\\s+(."""
    assert validate_watch(r"pattern: retry\s+( in src/*.py").startswith(r"invalid regex 'retry\s+(': ")
    assert r"(got 'pattern: retry\s+')" in validate_watch(r"pattern: retry\s+")
    assert r"unknown watch 'patern: a\d in src/*'" in validate_watch(r"patern: a\d in src/*")


@pytest.mark.parametrize(
    "glob, path, hit",
    [
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/x/a.py", False),
        ("src/**/*.py", "src/a.py", True),
        ("src/**/*.py", "src/x/y/a.py", True),
        ("src/**", "src/x/y/a.py", True),
        ("**/*.md", "README.md", True),
        ("a?.txt", "ab.txt", True),
        ("a?.txt", "a/.txt", False),
        ("[ab].txt", "b.txt", True),
        ("[!ab].txt", "b.txt", False),
        ("./src/*.py", "src/a.py", True),
    ],
)
def test_glob_matching(glob, path, hit):
    assert bool(match_paths(glob, [path])) is hit


@settings(max_examples=examples(100), deadline=None)
@given(st.text(alphabet="ab/*?.[]!", max_size=12), st.text(alphabet="ab/.", max_size=12))
@example("a*", "a/b")
@example("a?b", "a/b")
@example("**/a", "b/b/a")
def test_glob_to_regex_keeps_segments_and_literals(glob, path):
    hit = glob_to_regex(glob).match(path) is not None
    if not set(glob) & set("*?["):
        assert hit is (glob == path)  # a glob without wildcards is the path itself, whole
    if "**" not in glob and "[" not in glob and hit:
        assert path.count("/") == glob.count("/")  # * and ? never cross a /
    if hit:
        assert glob_to_regex("**/" + glob).match("b/" + path)  # ** spans any leading folders
        assert glob_to_regex("**/" + glob).match(path)  # and none


# ------------------------------------------------------------------ path-changed


@needs_git
def test_path_changed_fires_stays_quiet_and_becomes_unobservable(repo):
    it = item(1, text="export retries are hard-coded")
    f = feat(repo, [it])
    base = git(repo, "rev-parse", "HEAD")
    ds = {it.id: D(it.id, "accept", watch={"spec": "path-changed: src/export.py", "base": base})}
    (r,) = check_feature(f, ds)
    assert r.state == "quiet" and r.figures["base"] == base

    (repo / "src" / "other.py").write_text("x = 2\n")  # not matching
    (r,) = check_feature(f, ds)
    assert r.state == "quiet"

    (repo / "src" / "export.py").write_text("def export():\n    return 2\n")  # uncommitted change
    (r,) = check_feature(f, ds)
    assert r.state == "fired" and "src/export.py" in r.cause

    git(repo, "commit", "-qam", "change export")
    (r,) = check_feature(f, ds)
    assert r.state == "fired"  # committed since base

    ds2 = {it.id: D(it.id, "accept", watch={"spec": "path-changed: lib/*.rs", "base": base})}
    (r,) = check_feature(f, ds2)
    assert r.state == "unobservable" and "matches no file" in r.cause


@needs_git
def test_path_changed_deleted_file_fires_and_new_untracked_file_fires(repo):
    it = item(1)
    f = feat(repo, [it])
    base = git(repo, "rev-parse", "HEAD")
    (repo / "src" / "new.py").write_text("y = 1\n")
    (r,) = check_feature(f, {it.id: D(it.id, "accept", watch={"spec": "path-changed: src/new*.py", "base": base})})
    assert r.state == "fired"
    (repo / "src" / "new.py").unlink()
    (repo / "src" / "other.py").unlink()
    (r,) = check_feature(f, {it.id: D(it.id, "accept", watch={"spec": "path-changed: src/other.py", "base": base})})
    assert r.state == "fired"


@needs_git
def test_path_changed_base_from_decision_time_is_recorded(repo):
    it = item(1)
    f = feat(repo, [it])
    first = git(repo, "rev-parse", "HEAD")
    (repo / "src" / "export.py").write_text("changed later\n")
    git(repo, "commit", "-qam", "later change", "--date-later")
    # Accepted on 2026-02-01: the base is the 2026-01-01 commit, so the March change fires.
    ds = accept(it, "path-changed: src/export.py")
    (r,) = check_feature(f, ds, record=True)
    assert r.state == "fired" and r.figures["base"] == first
    recs = read_watch_log(f.path)
    assert [(x["type"], x["base"]) for x in recs] == [("base", first)]
    # Accepted after the March commit: quiet.
    (r,) = check_feature(f, accept(it, "path-changed: src/export.py", "2026-04-01T00:00:00+00:00"))
    assert r.state == "fired"  # the recorded base wins over the (new) decision time
    g = feat(repo, [item(2)])
    (r,) = check_feature(g, accept(item(2), "path-changed: src/export.py", "2026-04-01T00:00:00+00:00"))
    assert r.state == "quiet"


@needs_git
def test_record_base_at_accept_time(repo):
    it = item(1)
    f = feat(repo, [it])
    head = git(repo, "rev-parse", "HEAD")
    assert record_base(f.path, it.id, "path-changed: src/*.py", text=it.text) == head
    (r,) = check_feature(f, {it.id: D(it.id, "accept", watch="path-changed: src/*.py")})
    assert r.state == "quiet" and r.figures["base_from"] == "recorded in .scars/watches.jsonl"


@needs_git
def test_path_changed_without_base_or_with_unknown_base_is_unobservable(repo):
    it = item(1)
    f = feat(repo, [it])
    (r,) = check_feature(f, accept(it, "path-changed: src/*.py", decided_at=""))
    assert r.state == "unobservable" and "no base commit" in r.cause
    (r,) = check_feature(f, accept(it, "path-changed: src/*.py", decided_at="2025-01-01T00:00:00+00:00"))
    assert r.state == "unobservable"  # no commit predates the accept
    ds = {it.id: D(it.id, "accept", watch={"spec": "path-changed: src/*.py", "base": "0" * 40})}
    (r,) = check_feature(f, ds)
    assert r.state == "unobservable" and "not in this repository" in r.cause


def test_path_changed_without_git_is_unobservable(tmp_path):
    r = tmp_path / "plain"
    (r / "changes" / "2026-01-01_demo").mkdir(parents=True)
    (r / "src").mkdir()
    (r / "src" / "a.py").write_text("x\n")
    it = item(1)
    f = feat(r, [it])
    (res,) = check_feature(f, {it.id: D(it.id, "accept", watch={"spec": "path-changed: src/*.py", "base": "abc"})})
    assert res.state == "unobservable" and res.cause.startswith("no git")


# ------------------------------------------------------------------ pattern


@needs_git
def test_pattern_fires_quiet_unobservable(repo):
    it = item(1)
    f = feat(repo, [it])
    (r,) = check_feature(f, accept(it, r"pattern: return\s+2 in src/*.py"))
    assert r.state == "quiet"
    (repo / "src" / "other.py").write_text("a = 1\nreturn  2\n")
    (r,) = check_feature(f, accept(it, r"pattern: return\s+2 in src/*.py"))
    assert r.state == "fired" and r.cause == r"pattern 'return\s+2' appears in src/other.py:2"
    (r,) = check_feature(f, accept(it, "pattern: ([unclosed in src/*.py"))
    assert r.state == "unobservable" and "invalid regex" in r.cause
    (r,) = check_feature(f, accept(it, "pattern: x in nowhere/*.c"))
    assert r.state == "unobservable" and "matches no file" in r.cause


def test_pattern_without_git_walks_the_tree(tmp_path):
    r = tmp_path / "plain"
    (r / "changes" / "2026-01-01_demo").mkdir(parents=True)
    (r / "docs").mkdir()
    (r / "docs" / "a.md").write_text("hello DANGER\n")
    it = item(1)
    (res,) = check_feature(feat(r, [it]), accept(it, "pattern: DANGER in docs/*.md"))
    assert res.state == "fired"


def test_pattern_timeout_is_unobservable(tmp_path, monkeypatch):
    r = tmp_path / "plain"
    (r / "changes" / "2026-01-01_demo").mkdir(parents=True)
    (r / "big.txt").write_text("a" * 40 + "!")
    monkeypatch.setattr(wmod, "REGEX_TIMEOUT", 0.5)
    it = item(1)
    (res,) = check_feature(feat(r, [it]), accept(it, "pattern: (a+)+$ in big.txt"))
    assert res.state == "unobservable" and "did not finish" in res.cause


def test_pattern_searches_only_the_capped_prefix(tmp_path, monkeypatch):
    r = tmp_path / "plain"
    (r / "changes" / "2026-01-01_demo").mkdir(parents=True)
    (r / "f.txt").write_text("x" * 100 + "NEEDLE")
    monkeypatch.setattr(wmod, "MAX_FILE_BYTES", 50)
    it = item(1)
    (res,) = check_feature(feat(r, [it]), accept(it, "pattern: NEEDLE in f.txt"))
    assert res.state == "quiet" and res.figures["truncated"] == ["f.txt"]
    assert "first 50 bytes" in res.cause


def test_pattern_glob_cannot_reach_outside_the_repository(tmp_path):
    r = tmp_path / "plain"
    (r / "changes" / "2026-01-01_demo").mkdir(parents=True)
    (tmp_path / "secret.txt").write_text("TOKEN")
    os.symlink(tmp_path / "secret.txt", r / "link.txt")
    it = item(1)
    (res,) = check_feature(feat(r, [it]), accept(it, "pattern: TOKEN in link.txt"))
    assert res.state == "unobservable"
    (res,) = check_feature(feat(r, [it]), accept(it, "pattern: TOKEN in ../secret.txt"))
    assert res.state == "unobservable" and "climbs out" in res.cause


# ------------------------------------------------------------------ recurs


@needs_git
def test_recurs_fires_only_for_a_later_report(repo):
    text = "Timezone-naive timestamps compare as UTC"
    accepted = item(1, text=text, file="scar-reports/task-1-scar.yaml")
    base = git(repo, "rev-parse", "HEAD")
    spec = {"spec": "recurs", "base": base}
    f = feat(repo, [accepted])
    (r,) = check_feature(f, {accepted.id: D(accepted.id, "accept", watch=spec)})
    assert r.state == "quiet"
    # the same text, in a report that already existed at the accept: still quiet
    old = item(2, text=text.upper(), file="scar-reports/task-1-scar.yaml")
    (r,) = check_feature(feat(repo, [accepted, old]), {accepted.id: D(accepted.id, "accept", watch=spec)})
    assert r.state == "quiet"
    # a new report (not in the base commit) carries it again
    (repo / "changes/2026-01-01_demo/scar-reports/iteration-fix-1-scar.yaml").write_text("task_id: fix\n")
    again = item(3, text="  timezone-naive   timestamps compare as utc ", file="scar-reports/iteration-fix-1-scar.yaml")
    (r,) = check_feature(feat(repo, [accepted, again]), {accepted.id: D(accepted.id, "accept", watch=spec)})
    assert r.state == "fired" and "iteration-fix-1-scar.yaml" in r.cause and r.figures["items"] == [again.id]


def test_recurs_unobservable_without_text_or_time(tmp_path):
    r = tmp_path / "plain"
    (r / "changes" / "2026-01-01_demo").mkdir(parents=True)
    f = feat(r, [])
    wa = WatchedAccept("ks-0000000001", "", "recurs", "", None)
    assert evaluate(f, wa).state == "unobservable"
    wa = WatchedAccept("ks-0000000001", "some text", "recurs", "", None)
    res = evaluate(f, wa)
    assert res.state == "unobservable" and "later" in res.cause


# ------------------------------------------------------------------ collecting


@needs_git
def test_watches_from_iteration_log_accepts(repo):
    it = item(1, text="Only one writer at a time")
    base = git(repo, "rev-parse", "HEAD")
    rounds = (
        Round(
            round=1,
            signal_lost_before=1,
            signal_lost_after=1,
            decision="stop",
            accept=(
                {
                    "description": "only one writer at a time",
                    "re_review_signal": "x",
                    "owner": "y",
                    "rationale": "z",
                    "watch": "path-changed: src/*.py",
                    "watch_base": base,
                },
            ),
        ),
    )
    f = feat(repo, [it], iteration_log=log(*rounds))
    (r,) = check_feature(f)
    assert r.item_id == it.id and r.origin == "iteration-log round 1" and r.state == "quiet"
    # a journal decision on the same item overrides the log's accept
    assert check_feature(f, {it.id: D(it.id, "fix")}) == []


def test_accepts_without_watch_and_other_actions_are_ignored(tmp_path):
    it = item(1)
    f = feat(tmp_path, [it])
    assert check_feature(f, {it.id: D(it.id, "accept")}) == []
    assert check_feature(f, {it.id: D(it.id, "defer", watch="recurs")}) == []


# ------------------------------------------------------------------ reopening (needs the session)


def _feature_on_disk(repo: Path) -> Path:
    d = repo / "changes" / "2026-01-01_demo"
    (d / "scar-reports" / "task-1-scar.yaml").write_text(
        "task_id: task-1\ncompletion_status: done_with_concerns\n"
        'known_shortcuts:\n  - "Export retries are hard-coded"\n'
        "silent_failure_conditions: []\nassumptions_made: []\n"
        'debt_registered: true\ndebt_location: "src/export.py:1-2"\n',
        encoding="utf-8",
    )
    (d / "index.yaml").write_text("feature: demo\nstatus: in_progress\ntasks: []\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "feature")
    return d


@needs_git
def test_watch_check_reopens_once_with_journal_and_auto_decision(repo, capsys):
    import json

    from scars.core.samsara.decisions import current_decisions, reopened_now
    from scars.core.samsara.feature import read_feature
    from scars.core.samsara.session import FeatureSession
    from scars.tui.cli.main import main

    d = _feature_on_disk(repo)
    (item_id,) = [it.id for it in read_feature(d).items]
    with FeatureSession.open(d) as s:
        s.decide(
            item_id,
            "accept",
            re_review_signal="export starts retrying",
            owner="export owner",
            rationale="single retry path today",
            watch="path-changed: src/export.py",
        )
    assert main(["watch", "check", str(d), "--json"]) == 0
    (w,) = json.loads(capsys.readouterr().out)["watches"]
    assert w["state"] == "quiet"

    (repo / "src" / "export.py").write_text("def export():\n    return 3\n")
    assert main(["watch", "check", str(d), "--json", "--dry-run"]) == 0
    (w,) = json.loads(capsys.readouterr().out)["watches"]
    assert w["state"] == "fired" and w["reopened"] == "not reopened (--dry-run)"
    assert item_id in current_decisions(d)

    assert main(["watch", "check", str(d), "--json"]) == 0
    (w,) = json.loads(capsys.readouterr().out)["watches"]
    assert w["state"] == "fired" and w["reopened"].startswith("now (auto-decisions entry")
    assert item_id not in current_decisions(d)  # back to triage
    assert set(reopened_now(d)) == {item_id}
    text = (d / "auto-decisions.md").read_text(encoding="utf-8")
    assert "iteration.watch-reopen" in text and "src/export.py changed since" in text
    journal = (d / ".scars" / "journal.jsonl").read_text(encoding="ascii")
    assert '"type":"reopen"' in journal

    # a second check neither reopens again nor appends another entry
    assert main(["watch", "check", str(d), "--json"]) == 0
    capsys.readouterr()
    assert (d / "auto-decisions.md").read_text(encoding="utf-8") == text

    # deciding the item again clears the reopened state
    with FeatureSession.open(d) as s:
        s.decide(item_id, "fix")
    assert reopened_now(d) == {}


def test_journal_reopen_record_sends_the_item_back_to_triage():
    recs = [
        {"seq": 1, "type": DECISION, "decisions": [{"item_id": "ks-1", "action": "accept", "watch": "recurs"}]},
        {"seq": 2, "type": REOPEN, "item_id": "ks-1", "cause": "seen again", "watch": "recurs"},
    ]
    st_ = replay(recs)
    assert "ks-1" not in st_.decisions and st_.reopened["ks-1"]["cause"] == "seen again"
    assert st_.history["ks-1"][0]["action"] == "accept"
    st_ = replay(recs + [{"seq": 3, "type": DECISION, "decisions": [{"item_id": "ks-1", "action": "defer"}]}])
    assert st_.decisions["ks-1"].action == "defer"  # decided again: no longer waiting in triage


@needs_git
def test_accept_with_watch_records_its_base_and_refuses_a_bad_watch(repo):
    from scars.core.errors import DecisionRefused
    from scars.core.samsara.feature import read_feature
    from scars.core.samsara.session import FeatureSession

    d = _feature_on_disk(repo)
    (item_id,) = [it.id for it in read_feature(d).items]
    head = git(repo, "rev-parse", "HEAD")
    with FeatureSession.open(d) as s:
        with pytest.raises(DecisionRefused) as exc:
            s.decide(
                item_id, "accept", re_review_signal="s", owner="o", rationale="r", watch="pattern: ([broken in src/*.py"
            )
        assert exc.value.errors[0].field == "watch" and "invalid regex" in exc.value.errors[0].message
        dec = s.decide(
            item_id,
            "accept",
            re_review_signal="retries start",
            owner="o",
            rationale="r",
            watch="path-changed: src/*.py",
        )
    assert dec.watch_base == head


@needs_git
def test_iteration_log_accept_reopens_once(repo):
    from scars.core.loops.samsara.reopen import reopen_fired
    from scars.core.samsara.feature import read_feature

    d = _feature_on_disk(repo)
    base = git(repo, "rev-parse", "HEAD")
    (d / "iteration-log.yaml").write_text(
        'feature: "demo"\nsignal_lost_initial: 1\nbudget:\n  max_rounds: 3\n  reviewer_retry_limit: 2\n'
        "rounds:\n  - round: 1\n    signal_lost_before: 1\n    budget_context:\n"
        "      remaining_rounds_at_start: 2\n      stagnation_count_at_start: 0\n"
        "      net_rot_previous_round: 0\n      strategy_hint: explore\n"
        "    triage_result:\n      fix: []\n      accept:\n"
        '        - description: "Export retries are hard-coded"\n'
        '          re_review_signal: "retries start"\n          owner: "o"\n          rationale: "r"\n'
        f'          watch: "pattern: return 1 in src/export.py"\n          watch_base: "{base}"\n'
        '      defer: []\n    signal_lost_after: 1\n    decision: stop\n    decision_reason: "done"\n',
        encoding="utf-8",
    )
    f = read_feature(d)
    (r,) = check_feature(f)
    assert r.state == "fired" and r.origin == "iteration-log round 1"
    first = reopen_fired(d, [r])
    assert first[0]["reopened"] is True
    again = reopen_fired(d, check_feature(read_feature(d)))
    assert again[0]["reopened"] is False and again[0]["already"] == first[0]["at"]
    assert (d / "auto-decisions.md").read_text(encoding="utf-8").count("## Decision ") == 1
