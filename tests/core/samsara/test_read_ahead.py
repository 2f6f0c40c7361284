"""A feature read ahead in a forked child (issue 31: the app's first frame shows the list of a
small feature, read while Textual loads): the session opened with it holds exactly the feature a
session reads itself; an input changed after the child looked, a child that dies, another
directory, a feature above the size bound or a linked scar-reports/ give a read of this process's
own; no child outlives the open."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.factories import APP_REPORTS, CHILDREN_LEFT, app_repo, bench_feature

# A fresh single-threaded interpreter: a fork is only safe (and only made) there.
PROBE = (
    """
import json, os, sys
from pathlib import Path
from scars.core.samsara import session as S
from scars.core.storage import parallel

feature_dir, case = Path(sys.argv[1]), sys.argv[2]
real_child = S._read_in_child
if case == "changed":
    def child(send, path):  # the child reads, then the loop writes a report before the app opens it
        def sending(message):
            report = Path(path) / "scar-reports" / "task-1-scar.yaml"
            report.write_text(report.read_text() + "# written after the child read it\\n")
            send(message)
        real_child(sending, path)
    S._read_in_child = child
elif case == "dies":
    def child(send, path):
        os._exit(3)
    S._read_in_child = child
elif case == "dies-after-early":
    def child(send, path):
        def sending(message):
            send(message)
            if message[0] == "early":
                os._exit(3)  # the list sent, its possible patterns never
        real_child(sending, path)
    S._read_in_child = child
early = []
ahead = S.read_ahead(feature_dir, max_report_bytes=10**7)
if case == "other":
    ahead.path = ahead.path.parent  # a read of another directory than the one opened
took = []
real_take = S.ReadAhead.take
def take(self, path, *rest):
    got = real_take(self, path, *rest)
    took.append(got is not None)
    return got
S.ReadAhead.take = take
with S.FeatureSession.open(feature_dir, read_only=True, ahead=ahead, meanwhile=lambda s: early.append(1)) as session:
    ahead_feature = session.feature
    reader_loaded = "scars.core.samsara.feature" in sys.modules
with S.FeatureSession.open(feature_dir, read_only=True) as session:
    own_feature = session.feature
"""
    + CHILDREN_LEFT
    + """
print(json.dumps({
    "forked": ahead is not None,
    "took": took,
    "same": ahead_feature == own_feature,
    "patterns": len(own_feature.possible_patterns),
    "shown_early": len(early),
    "items": len(own_feature.items),
    "reader_loaded_by_the_open": reader_loaded,
    "children_left": children_left,
}))
"""
)


def _probe(feature_dir, case: str = "plain") -> dict:
    env = {**os.environ, "SCARS_NO_CACHE": "1"}  # every read is a real read: nothing from the cache
    env.pop("SCARS_WORKERS", None)
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(feature_dir), case], capture_output=True, text=True, timeout=300, env=env
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


needs_two_cores = pytest.mark.skipif(
    len(os.sched_getaffinity(0)) < 2, reason="one usable core: nothing is read ahead (no fork)"
)


def _many(root):
    """A feature of 240 counted items (possible patterns shown after the list: from 200)."""
    return bench_feature(root, "small")


@needs_two_cores
def test_the_session_takes_the_feature_the_child_read(tmp_path):
    got = _probe(app_repo(tmp_path / "repo"))
    assert got["forked"] and got["took"] == [True]
    assert got["same"] and got["items"] > 0
    assert not got["reader_loaded_by_the_open"]  # the parent read nothing: the child's feature
    assert not got["children_left"]


@needs_two_cores
@pytest.mark.parametrize("case", ["changed", "dies", "other"])
def test_the_session_reads_itself_when_the_child_read_is_not_the_inputs_now(tmp_path, case):
    got = _probe(app_repo(tmp_path / "repo"), case)
    assert got["forked"] and got["took"] == [False]
    assert got["same"] and got["items"] > 0  # what a read now gives, the changed report included
    assert got["reader_loaded_by_the_open"]
    assert not got["children_left"]


@needs_two_cores
def test_a_feature_given_before_its_possible_patterns_gets_them_from_the_child(tmp_path):
    got = _probe(_many(tmp_path / "repo"))
    assert got["forked"] and got["took"] == [True] and got["shown_early"] == 1
    assert got["same"] and got["patterns"] > 0  # the patterns the child computed: a read's own
    assert not got["reader_loaded_by_the_open"] and not got["children_left"]


@needs_two_cores
def test_possible_patterns_the_child_never_gave_are_computed_here(tmp_path):
    got = _probe(_many(tmp_path / "repo"), "dies-after-early")
    assert got["took"] == [True] and got["shown_early"] == 1
    assert got["same"] and got["patterns"] > 0
    assert not got["children_left"]


def test_only_a_feature_within_the_bound_is_read_ahead(tmp_path, monkeypatch):
    from scars.core.samsara import session as S

    forks = []

    class Child:  # storage.parallel.Feed, as if forked
        forked = True

        def __init__(self, fn, args):
            forks.append(args)

        def cancel(self):
            pass

    monkeypatch.setattr(S, "Feed", Child)
    feature = app_repo(tmp_path / "repo")
    size = sum(len(t.encode()) for t in APP_REPORTS.values())
    assert S.read_ahead(feature, max_report_bytes=size) is not None  # exactly at the bound: read
    assert S.read_ahead(feature, max_report_bytes=size - 1) is None  # one byte more than it: not
    assert len(forks) == 1
    # a linked scar-reports/ is never listed to count it (nor followed)
    linked = app_repo(tmp_path / "linked")
    (linked / "scar-reports").rename(tmp_path / "reports-elsewhere")
    (linked / "scar-reports").symlink_to(tmp_path / "reports-elsewhere")
    assert S.read_ahead(linked, max_report_bytes=10**9) is None
    # not a feature directory: nothing started (the session's own open says why)
    assert S.read_ahead(tmp_path / "repo", max_report_bytes=10**9) is None
    assert len(forks) == 1


def test_a_child_that_gives_nothing_computes_nothing_here():
    """Beside.wait (what a read-ahead waits with): the child's result, or nothing — never the
    function run here as Beside.result does."""
    script = """
import json, os
from scars.core.storage import parallel
calls = []
def dies():
    os._exit(1)
def gives():
    return 41 + 1
print(json.dumps({"dies": parallel.Beside(dies, ()).wait(), "gives": parallel.Beside(gives, ()).wait(),
                  "no_fork": parallel.Beside(gives, (), fork=False).wait()}))
"""
    env = {**os.environ}
    env.pop("SCARS_WORKERS", None)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.splitlines()[-1])
    forked = len(os.sched_getaffinity(0)) > 1
    assert got == {"dies": [False, None], "gives": [True, 42] if forked else [False, None], "no_fork": [False, None]}


def test_a_feed_gives_each_message_sent_in_order_and_nothing_after_a_failure(tmp_path):
    script = (
        """
import json, os, sys
from pathlib import Path
from scars.core.storage import parallel
done = Path(sys.argv[1])
def three_then_dies(send):
    for k in range(3):
        send({"k": k, "big": "x" * 300_000})  # larger than a pipe's default buffer
    os._exit(1)
def sends_then_finishes(send):
    send("first")
    done.write_text("finished after its last message")
feed = parallel.Feed(three_then_dies, ())
got = [feed.next() for _ in range(5)]
closing = parallel.Feed(sends_then_finishes, ())
first = closing.next()
closing.close()
"""
        + CHILDREN_LEFT
        + """
print(json.dumps({"forked": feed.forked or closing.forked,
                  "got": [[ok, v["k"] if ok else None] for ok, v in got], "first": first,
                  "finished": done.exists(), "children_left": children_left}))
"""
    )
    env = {**os.environ}
    env.pop("SCARS_WORKERS", None)
    proc = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "done")], capture_output=True, text=True, timeout=120, env=env
    )
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.splitlines()[-1])
    if len(os.sched_getaffinity(0)) < 2:
        assert got["got"] == [[False, None]] * 5 and not got["forked"]
        return
    assert got["got"] == [[True, 0], [True, 1], [True, 2], [False, None], [False, None]]
    assert got["first"] == [True, "first"] and got["finished"]  # close() let it finish
    assert not got["children_left"]
