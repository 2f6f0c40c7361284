"""`scars gate … --wait`, `scars answer`, `scars requests`: real waiting processes, kills, races."""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scars.core.errors import DecisionRefused
from scars.core.formats.auto_decisions import parse_auto_decisions
from scars.core.gates import gather
from scars.core.gates import requests as rq
from scars.tui.cli import main as cli
from tests.factories import clean_env, loop_spec_feature

REASON = "offline sync is v2 scope and on the backlog"
RACE_TRIALS = 30


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_env(monkeypatch)


def _repo(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / ".git").mkdir(parents=True)
    return tmp_path, loop_spec_feature(tmp_path)


def _feature(root: Path, slug: str) -> Path:
    """Another loop-spec feature of the same repository (its own gate)."""
    src = root / ".loop-spec" / "features" / "sync" / "feature.json"
    data = json.loads(src.read_text())
    data["slug"] = slug
    d = root / ".loop-spec" / "features" / slug
    d.mkdir(parents=True)
    (d / "feature.json").write_text(json.dumps(data, indent=2) + "\n")
    return d


def _entries(fdir: Path) -> list:
    f = fdir / "auto-decisions.md"
    return parse_auto_decisions(f.read_text(encoding="utf-8")) if f.exists() else []


def _waiter(*args: str, cwd: Path, ctrl_c: bool = False) -> subprocess.Popen:
    """A real `scars gate ARGS` process without a terminal (``ctrl_c``: SIGINT as a terminal's
    Ctrl-C delivers it, even where the test runner's workers ignore it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "scars.tui", "gate", *args],
        preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)) if ctrl_c else None,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "NO_COLOR": "1", "SCARS_USER": "agent"},
    )


def _one_request(root: Path, deadline: float = 30.0) -> str:
    """The id of the one request in the inbox, once the waiter has posted it."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        found, _ = rq.list_requests(root)
        if found:
            return found[0].id
        time.sleep(0.02)
    raise AssertionError("no request was posted")


def test_a_waiting_process_gets_the_answer_given_from_a_shell_and_records_it_once(tmp_path, capsys):
    root, fdir = _repo(tmp_path)
    proc = _waiter("spec", str(fdir), "--wait", "--json", cwd=root)
    try:
        first = json.loads(proc.stdout.readline())  # printed at once, before any answer
        assert first["status"] == "pending" and first["gate"] == "spec"
        rid = first["request"]
        assert rq.waiter_of(root, rid)["pid"] == proc.pid
        code = cli.main(["answer", rid, "--answer", "ship", "--reason", REASON, "--path", str(root), "--as", "bob"])
        out, _ = capsys.readouterr()
        assert code == 0 and "the waiting process" in out
        rest, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    result = json.loads(rest)
    assert (result["gate"], result["answer"], result["decided_by"], result["request"]) == ("spec", "ship", "bob", rid)
    assert result["reason"] == REASON
    assert len(_entries(fdir)) == 1
    assert json.loads((fdir / "feature.json").read_text())["iterate"]["lastRoute"] != "spec" or _entries(fdir)


def test_a_timeout_leaves_the_request_and_a_reattached_waiter_records_the_answer(tmp_path, capsys):
    root, fdir = _repo(tmp_path)
    proc = _waiter("spec", str(fdir), "--wait", "--timeout", "0.3", cwd=root)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 3
    rid = _one_request(root)
    assert f"--wait --request {rid}" in err
    assert rq.load_request(root, rid).status == "pending"
    # answered while nobody waits: nothing is recorded until someone applies it
    assert (
        cli.main(
            ["answer", rid, "--answer", "stop", "--reason", "the sync design needs a rethink", "--path", str(root)]
        )
        == 0
    )
    assert "nobody waits" in capsys.readouterr().out
    assert _entries(fdir) == []
    again = _waiter("spec", str(fdir), "--wait", "--request", rid, "--json", cwd=root)
    out, err = again.communicate(timeout=60)
    assert again.returncode == 0, err
    lines = out.splitlines()
    assert json.loads(lines[0])["status"] == "answered"
    assert json.loads(lines[-1])["answer"] == "stop"
    assert len(_entries(fdir)) == 1


def test_requests_apply_records_answers_nobody_waits_for(tmp_path, capsys):
    root, fdir = _repo(tmp_path)
    req = rq.post_request(gather("spec", fdir), fdir, user="agent")
    rq.answer_request(root, req.id, "ship", REASON, user="bob", source="test")
    assert cli.main(["requests", "apply", "--path", str(root)]) == 0
    assert f"{req.id}: gate spec: ship → accept_gap (by bob)" in capsys.readouterr().out
    assert cli.main(["requests", "apply", req.id, "--path", str(root)]) == 0  # applied: its stored result
    assert len(_entries(fdir)) == 1


@pytest.mark.parametrize(
    "sig, withdraw", [(signal.SIGTERM, False), (signal.SIGTERM, True), (signal.SIGINT, False), (signal.SIGINT, True)]
)
def test_sigterm_or_ctrl_c_exits_130_and_the_request_stays_unless_withdrawn(tmp_path, sig, withdraw):
    root, fdir = _repo(tmp_path)
    proc = _waiter(
        "spec", str(fdir), "--wait", "--json", *(["--withdraw-on-exit"] if withdraw else []), cwd=root, ctrl_c=True
    )
    rid = json.loads(proc.stdout.readline())["request"]
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert rq.load_request(root, rid).status == ("withdrawn" if withdraw else "pending")
    assert ("withdrawn" if withdraw else f"--request {rid}") in err
    assert rq.waiter_of(root, rid) is None


def test_wait_options_need_wait(tmp_path, capsys):
    _, fdir = _repo(tmp_path)
    assert cli.main(["gate", "spec", str(fdir), "--timeout", "5"]) == 2
    assert "go with --wait" in capsys.readouterr().err
    assert cli.main(["gate", "spec", str(fdir), "--wait", "--timeout", "-1"]) == 2


def test_a_request_of_another_gate_is_not_reattached(tmp_path, capsys):
    root, fdir = _repo(tmp_path)
    req = rq.post_request(gather("spec", fdir), fdir, user="agent")
    assert cli.main(["gate", "escalate", str(fdir), "--wait", "--request", req.id]) == 2
    assert "is for gate spec" in capsys.readouterr().err


def test_requests_lists_hostile_evidence_inert(tmp_path, capsys):
    root, fdir = _repo(tmp_path)
    data = json.loads((fdir / "feature.json").read_text())
    data["iterate"]["lastVerdict"]["gap"]["description"] = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J[bold red]boom[/] \u202e"
    data["iterate"]["feedback"] = data["iterate"]["lastVerdict"]["gap"]
    (fdir / "feature.json").write_text(json.dumps(data))
    req = rq.post_request(gather("spec", fdir), fdir, user="\x1b[31magent")
    assert cli.main(["requests", str(root)]) == 0
    out = capsys.readouterr().out
    assert req.id in out and "pending" in out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert cli.main(["requests", str(root), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["requests"]
    assert [r["id"] for r in listed] == [req.id] and listed[0]["state"] == "pending"


def test_requests_marks_an_expired_request(tmp_path, capsys):
    root, fdir = _repo(tmp_path)
    rq.post_request(gather("spec", fdir), fdir, user="agent")
    (fdir / "feature.json").write_text((fdir / "feature.json").read_text().replace('"used": 2', '"used": 3'))
    assert cli.main(["requests", str(root)]) == 0
    assert "expired: the loop's files changed since it was posted (.loop-spec/features/sync/feature.json)" in (
        capsys.readouterr().out
    )


def test_an_expired_request_is_pointed_to_the_app_which_answers_it_and_scars_answer_refuses_it(tmp_path, capsys):
    """`scars requests` told `scars answer ID …` for an expired request, which `scars answer`
    then refused; both now follow ``requests.answerable``: a pending one is answered from the
    shell, an expired one in the app (which shows its gate as it reads now)."""
    root, fdir = _repo(tmp_path)
    req = rq.post_request(gather("spec", fdir), fdir, user="agent")
    assert cli.main(["requests", str(root)]) == 0
    assert f"answer: scars answer {req.id} --answer" in capsys.readouterr().out  # pending
    (fdir / "feature.json").write_text((fdir / "feature.json").read_text().replace('"used": 2', '"used": 3'))
    assert cli.main(["requests", str(root)]) == 0
    listed = capsys.readouterr().out
    assert f"scars answer {req.id}" not in listed
    assert "answer: in the app (`scars`, the Loops inbox, enter), which shows its gate as it reads now" in listed
    code = cli.main(["answer", req.id, "--answer", "ship", "--reason", "offline sync is v2 scope", "--path", str(root)])
    assert code == 4
    assert "in the app (`scars`, the Loops inbox, enter)" in capsys.readouterr().err
    assert rq.load_request(root, req.id).status == "pending"


# -- many processes: kills, races, many waiters (forked, so a trial costs no interpreter start) ----


def _child(argv: list[str], out: str) -> None:
    sys.stdin = open(os.devnull)  # noqa: SIM115 - the child's stdin for its whole life
    with open(out, "w", buffering=1) as fh:
        sys.stdout = sys.stderr = fh
        code = cli.main(argv)
        fh.flush()
    os._exit(code)


def _fork(argv: list[str], out: Path) -> multiprocessing.Process:
    p = multiprocessing.get_context("fork").Process(target=_child, args=(argv, str(out)))
    p.start()
    return p


def _kill_trials(tmp_path: Path, trials: int, seed: int) -> None:
    rnd = random.Random(seed)
    for n in range(trials):
        root, fdir = _repo(tmp_path / f"t{n}")
        out = root / "waiter.out"
        waiter = _fork(["gate", "spec", str(fdir), "--wait", "--json"], out)
        rid = _one_request(root)
        answered_first = rnd.random() < 0.8
        if answered_first:
            rq.answer_request(root, rid, "ship", REASON, user="bob", source="test")
        time.sleep(rnd.uniform(0.0, 0.15))  # within about one poll: killed before, while or after it records
        os.kill(waiter.pid, signal.SIGKILL)
        waiter.join(30)
        req = rq.load_request(root, rid)  # never lost
        assert req.status in ("pending", "answered", "applied"), req.status
        if req.status == "pending":
            rq.answer_request(root, rid, "ship", REASON, user="bob", source="test")
        result = rq.apply_request(root, rid)  # the next applier (a re-attached waiter, `scars requests apply`)
        assert result.answer == "ship"
        assert len(_entries(fdir)) == 1, f"trial {n}: recorded {len(_entries(fdir))} times"
        assert rq.load_request(root, rid).status == "applied"


def test_fifty_kills_of_the_waiter_at_random_moments_lose_no_request_and_apply_no_answer_twice(tmp_path):
    # ~12 s on the 2-core build machine: in the default run (the long race trials are `slow`).
    _kill_trials(tmp_path, 50, seed=1850)


def _racer(root: str, rid: str, answer: str, reason: str, user: str, conn) -> None:
    try:
        rq.answer_request(Path(root), rid, answer, reason, user=user, source="race")
        conn.send(("answered", rq.apply_request(Path(root), rid).answer))
    except DecisionRefused as exc:
        conn.send(("refused", str(exc)))
    except BaseException as exc:  # reported to the test
        conn.send(("error", repr(exc)))
    conn.close()
    os._exit(0)


def _race_trials(tmp_path: Path, trials: int) -> None:
    ctx = multiprocessing.get_context("fork")
    for n in range(trials):
        root, fdir = _repo(tmp_path / f"r{n}")
        rid = rq.post_request(gather("spec", fdir), fdir, user="agent").id
        people = [("ship", REASON, "bob"), ("stop", "the sync design needs a rethink first", "carol")]
        pipes, procs = [], []
        for answer, reason, user in people:
            mine, theirs = ctx.Pipe(duplex=False)
            p = ctx.Process(target=_racer, args=(str(root), rid, answer, reason, user, theirs))
            p.start()
            pipes.append(mine)
            procs.append(p)
        outcomes = [c.recv() for c in pipes]
        for p in procs:
            p.join(30)
        kinds = sorted(k for k, _ in outcomes)
        assert kinds == ["answered", "refused"], outcomes
        won = next(v for k, v in outcomes if k == "answered")
        told = next(v for k, v in outcomes if k == "refused")
        winner = "bob" if won == "ship" else "carol"
        assert f"answered already: {winner} answered {won!r}" in told
        entries = _entries(fdir)
        assert len(entries) == 1, f"trial {n}: {len(entries)} records"


def test_two_answerers_racing_one_wins_the_other_is_told(tmp_path):
    _race_trials(tmp_path, RACE_TRIALS)


@pytest.mark.slow
def test_two_hundred_races_of_two_answerers(tmp_path):
    _race_trials(tmp_path, 200)


def test_twenty_waiters_on_different_gates_each_get_their_own_answer(tmp_path):
    """Every gate of every loop (samsara, loop-spec, ARIS, bkit, DAG) waiting at once, plus more
    loop-spec features of one repository: 20 processes, each gets its own answer."""
    from tests.factories import GATE_ANSWERS, gate_state

    waiters = []  # (gate, path, root, answer, reason, out file, process, decisions dir)
    for n, gate in enumerate(GATE_ANSWERS):
        path, decisions_dir, extra = gate_state(gate, tmp_path / f"g{n}")
        answer, reason = GATE_ANSWERS[gate]
        argv = ["gate", gate, str(path), "--wait", "--json"] + (["--item", extra["item"]] if extra.get("item") else [])
        out = tmp_path / f"g{n}.out"
        waiters.append((gate, path, rq.requests_root(path), answer, reason, out, _fork(argv, out), decisions_dir))
    repo, _ = _repo(tmp_path / "many")
    for n in range(20 - len(waiters)):
        fdir = _feature(repo, f"f{n:02d}")
        reason = f"decided for f{n:02d} on its own figures"
        out = tmp_path / f"f{n}.out"
        proc = _fork(["gate", "spec", str(fdir), "--wait", "--json"], out)
        waiters.append(("spec", fdir, repo, "ship" if n % 2 else "stop", reason, out, proc, fdir))
    assert len(waiters) == 20
    for gate, path, root, answer, reason, *_ in waiters:
        end = time.monotonic() + 60
        while True:
            mine = [r for r in rq.list_requests(root)[0] if r.gate == gate and r.loop_path(root) == Path(path)]
            if mine or time.monotonic() > end:
                break
            time.sleep(0.05)
        assert len(mine) == 1, f"{gate} at {path}: no request"
        rq.answer_request(root, mine[0].id, answer, reason, user="bob", source="test")
    for gate, _path, _root, answer, reason, out, proc, decisions_dir in waiters:
        proc.join(60)
        assert proc.exitcode == 0, out.read_text()
        result = json.loads(out.read_text().splitlines()[-1])
        assert (result["gate"], result["answer"], result["reason"]) == (gate, answer, reason)
        assert _entries(decisions_dir)[-1].gate_id == rq.GATES[gate].entry_id


def test_bare_scars_names_a_pending_request_as_waiting(tmp_path):
    """Before: with no loop waiting of itself, bare `scars` explained scars and named nothing."""
    from tests.factories import mechanist_state, scars_process

    root = tmp_path / "paper"
    stage = mechanist_state(root)  # its STOP rule is met: the loop itself does not wait
    req = rq.post_request(gather("review-continue", stage), stage, user="agent", root=root)
    proc = scars_process(cwd=root)
    assert proc.returncode == 2, proc.stderr
    assert f"Gate requests waiting: {req.id} (review-continue, asked by agent)" in proc.stderr
    assert f"scars answer {req.id} --answer" in proc.stderr


def test_a_triage_waiter_goes_on_once_the_items_are_triaged_and_the_triage_answered(tmp_path):
    from scars.core.samsara.session import FeatureSession
    from tests.factories import item_id, samsara_feature

    f = samsara_feature(tmp_path / "repo", auto=True)
    root = tmp_path / "repo"
    proc = _waiter("triage", str(f), "--wait", "--json", cwd=root)
    try:
        rid = json.loads(proc.stdout.readline())["request"]
        with FeatureSession.open(f, user="bob") as s:
            s.decide(item_id(f, "Retry count is hard-coded to 3"), "fix")
        shown = rq.inspect_request(root, rq.load_request(root, rid)).fingerprint
        rq.answer_request(root, rid, "done", None, user="bob", source="app", shown=shown)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    result = json.loads(out.splitlines()[-1])
    assert (result["gate"], result["answer"], result["decided_by"]) == ("triage", "done", "bob")
    assert [e.gate_id for e in _entries(f)] == ["triage"]


def test_an_answer_waits_for_the_loops_writer_lock_and_is_then_recorded(tmp_path):
    from scars.core.storage.lock import FeatureLock

    root, fdir = _repo(tmp_path)
    proc = _waiter("spec", str(fdir), "--wait", "--json", cwd=root)
    try:
        rid = json.loads(proc.stdout.readline())["request"]
        with FeatureLock(fdir, user="someone else"):  # loop-spec's gate records under this lock
            rq.answer_request(root, rid, "ship", REASON, user="bob", source="test")
            err = ""
            while "writer lets go" not in err:  # the waiter says once why it does not go on yet
                err += proc.stderr.readline()
            assert proc.poll() is None and _entries(fdir) == []
        out, _ = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0
    assert json.loads(out.splitlines()[-1])["answer"] == "ship"
    assert len(_entries(fdir)) == 1


def test_an_answer_given_in_place_answers_the_request_a_process_waits_on(tmp_path, capsys):
    """Before: `scars gate spec PATH --answer …` recorded in place and the waiting process never woke."""
    root, fdir = _repo(tmp_path)
    proc = _waiter("spec", str(fdir), "--wait", "--json", cwd=root)
    try:
        rid = json.loads(proc.stdout.readline())["request"]
        code = cli.main(["gate", "spec", str(fdir), "--answer", "ship", "--reason", REASON, "--as", "bob", "--json"])
        out, err = capsys.readouterr()
        assert code == 0 and f"answered its request {rid}" in err
        here = json.loads(out)
        waited, _ = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0
    there = json.loads(waited.splitlines()[-1])
    assert here["request"] == there["request"] == rid
    assert (there["answer"], there["decided_by"], there["source"]) == ("ship", "bob", f"request {rid} (flag --answer)")
    assert len(_entries(fdir)) == 1


# -- a kill at every moment of the record path ------------------------------------------------

# The calls through which the record path (and the request's own file) changes the disk: a child
# stops dead (os._exit, as a SIGKILL leaves it) just before the k-th of them.
_DISK_CALLS = ("open", "write", "replace", "rename", "unlink", "ftruncate", "fsync")


def _apply_killed_at(root: str, rid: str, k: int) -> None:
    count = [0]

    def stop_before(fn):
        def call(*a, **kw):
            if count[0] == k:
                os._exit(137)
            count[0] += 1
            return fn(*a, **kw)

        return call

    for name in _DISK_CALLS:
        setattr(os, name, stop_before(getattr(os, name)))
    rq.apply_request(root, rid)
    os._exit(0)  # the record finished before the k-th call


def test_a_kill_before_any_disk_call_of_the_record_then_the_next_apply_records_exactly_once(tmp_path):
    """Every moment, not a random one: the k-th disk call of an applier (the marker, each write
    of the loop's record, the result) is where it dies; the next applier leaves one entry, the
    request applied. Among them the moment auto-decisions.md exists but its entry is not yet in
    it (the first entry's append creates the file, then writes)."""
    k = 0
    while True:
        root, fdir = _repo(tmp_path / f"k{k}")
        rid = rq.post_request(gather("spec", fdir), fdir, user="agent").id
        rq.answer_request(root, rid, "ship", REASON, user="bob", source="test")
        child = multiprocessing.get_context("fork").Process(target=_apply_killed_at, args=(str(root), rid, k))
        child.start()
        child.join(60)
        assert child.exitcode in (0, 137), child.exitcode
        result = rq.apply_request(root, rid)
        assert result.answer == "ship"
        assert len(_entries(fdir)) == 1, f"killed before disk call {k}: recorded {len(_entries(fdir))} times"
        assert rq.load_request(root, rid).status == "applied"
        if child.exitcode == 0:
            break
        k += 1
    assert k > 10  # the record path's calls were each a kill point
