"""Possible patterns computed in a forked child, started as soon as the reports are read, beside the
rest of the read and the log matcher (issue 17: off the critical path), give exactly what computing
them in line gives; a failing child changes nothing; a read that fails after it started leaves no
child behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from scars.core.samsara import aggregate as aggregate_module
from scars.core.samsara.feature import read_feature
from tests.factories import CHILDREN_LEFT, ROOT, app_repo

PROBE = """
import json, os, sys
sys.path.insert(0, sys.argv[2])
import generate
from pathlib import Path
from scars.core.samsara import aggregate
from scars.core.samsara.feature import read_feature
repo = Path(sys.argv[1]) / "repo"
generate.generate("small", repo, seed=0)
feature_dir = next(p for p in (repo / "changes").iterdir() if p.is_dir())
forks = []
real_fork = os.fork
def counting_fork():
    pid = real_fork()
    if pid:
        forks.append(pid)
    return pid
os.fork = counting_fork
from scars.core.samsara import feature as feature_module
real_rest = feature_module._read_the_rest
forked_before_the_rest = []
def the_rest(*a):
    forked_before_the_rest.append(len(forks))
    return real_rest(*a)
feature_module._read_the_rest = the_rest
aggregate.PATTERNS_BESIDE_FROM = 10**9
inline = read_feature(feature_dir)
aggregate.PATTERNS_BESIDE_FROM = 0
beside = read_feature(feature_dir)
print(json.dumps({
    "forks": len(forks),
    "forked_before_the_rest": forked_before_the_rest,
    "same_patterns": beside.possible_patterns == inline.possible_patterns,
    "same_matches": beside.log_matches == inline.log_matches,
    "patterns": len(inline.possible_patterns),
    "matches": len(inline.log_matches),
}))
"""


def _probe(script: str, *args: str) -> dict:
    """What ``script`` prints last (JSON), run in a fresh single-threaded Python without the cache
    and with the default workers."""
    env = {**os.environ, "SCARS_NO_CACHE": "1"}
    env.pop("SCARS_WORKERS", None)
    proc = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_patterns_beside_the_matcher_are_the_patterns_in_line(tmp_path):
    got = _probe(PROBE, str(tmp_path), str(ROOT / "bench"))
    if os.cpu_count() and os.cpu_count() > 1:
        assert got["forks"] == 1  # the second read forked (the first one did not) …
        assert got["forked_before_the_rest"] == [0, 1]  # … before it read the rest of the feature
    assert got["patterns"] > 0 and got["matches"] > 0
    assert got["same_patterns"] and got["same_matches"]


FALLBACK = (
    """
import json, os
from scars.core.storage import parallel
def unpicklable(n):
    return lambda: n  # pickling fails in the child: computed here instead
def fails():
    raise ValueError("in the child")
pending = parallel.Beside(unpicklable, (7,))
forked = pending.forked
value = pending.result()()
try:
    parallel.Beside(fails, ()).result()  # the child fails: computed here, where it raises
    raised = False
except ValueError:
    raised = True
cancelled = parallel.Beside(sum, ([1, 2],))
cancelled.cancel()
"""
    + CHILDREN_LEFT
    + """
print(json.dumps({
    "forked": forked, "value": value, "raised": raised, "children_left": children_left,
    "sum": parallel.Beside(sum, ([1, 2],)).result(), "not_forked": parallel.Beside(sum, ([1],), fork=False).forked,
}))
"""
)


def test_a_failing_child_falls_back_and_a_cancelled_one_is_reaped():
    assert _probe(FALLBACK) == {
        "forked": (os.cpu_count() or 1) > 1,
        "value": 7,
        "raised": True,
        "children_left": False,
        "sum": 3,
        "not_forked": False,
    }


FAILED_READ = """
import json, os, sys
sys.path.insert(0, sys.argv[2])
import generate
from pathlib import Path
from scars.core.samsara import aggregate
from scars.core.samsara import feature as feature_module
repo = Path(sys.argv[1]) / "repo"
generate.generate("small", repo, seed=0)
feature_dir = next(p for p in (repo / "changes").iterdir() if p.is_dir())
aggregate.PATTERNS_BESIDE_FROM = 0
def the_rest(*a):
    raise OSError("the disk went away")
real_rest = feature_module._read_the_rest
feature_module._read_the_rest = the_rest
# the cache on: a read failing while the patterns are computed, after the cache file's items were
# written (what read_missed does meanwhile), leaves no temporary file either
from scars.core.samsara.layout import cached_feature
from scars.core.storage import cache
os.environ["SCARS_CACHE_DIR"] = str(Path(sys.argv[1]) / "cache")
os.environ.pop("SCARS_NO_CACHE")
cache.RACY_NS = 0
written = []
real_items = cache._dump_items
cache._dump_items = lambda fh, items: written.append(len(items)) or real_items(fh, items)
def meanwhile(feature):
    raise BrokenPipeError("the reader went away")
out = []
for read in (lambda: feature_module.read_feature(feature_dir),
             lambda: feature_module.read_missed(feature_dir.absolute(), None,
                                                cached_feature(feature_dir.absolute(), None)[0], meanwhile)):
    try:
        read()
        raised = False
    except (OSError, BrokenPipeError):
        raised = True
    feature_module._read_the_rest = real_rest
    try:
        os.waitpid(-1, os.WNOHANG)
        children_left = True
    except ChildProcessError:
        children_left = False
    out.append({"raised": raised, "children_left": children_left})
print(json.dumps({"reads": out, "items_written": bool(written),
                  "cache_files": sorted(p.name for p in (Path(sys.argv[1]) / "cache").iterdir())}))
"""


def test_a_read_failing_after_the_patterns_started_leaves_no_child(tmp_path):
    got = _probe(FAILED_READ, str(tmp_path), str(ROOT / "bench"))
    assert got == {"reads": [{"raised": True, "children_left": False}] * 2, "items_written": True, "cache_files": []}


def test_a_read_applies_the_literal_rule_once_and_aggregate_reuses_it(monkeypatch, tmp_path):
    """The literal patterns the reader computes to start the possible patterns are the ones the
    aggregate reports: one pass of the rule per read (it ran twice, issue 17)."""
    calls = []
    real = aggregate_module.literal_patterns

    def counting(items):
        calls.append(len(items))
        return real(items)

    monkeypatch.setattr(aggregate_module, "literal_patterns", counting)
    monkeypatch.setenv("SCARS_NO_CACHE", "1")
    feature = read_feature(app_repo(tmp_path / "repo"))
    assert len(calls) == 1
    assert feature.cross_task_patterns and list(feature.cross_task_patterns) == real(
        [it for it in feature.items if it.counted]
    )
