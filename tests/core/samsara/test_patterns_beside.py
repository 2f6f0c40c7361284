"""Possible patterns computed in a forked child beside the log matcher (issue 17: off the
critical path) give exactly what computing them in line gives; a failing child changes nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.factories import ROOT

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
aggregate.PATTERNS_BESIDE_FROM = 10**9
inline = read_feature(feature_dir)
aggregate.PATTERNS_BESIDE_FROM = 0
beside = read_feature(feature_dir)
print(json.dumps({
    "forks": len(forks),
    "same_patterns": beside.possible_patterns == inline.possible_patterns,
    "same_matches": beside.log_matches == inline.log_matches,
    "patterns": len(inline.possible_patterns),
    "matches": len(inline.log_matches),
}))
"""


def test_patterns_beside_the_matcher_are_the_patterns_in_line(tmp_path):
    env = {**os.environ, "SCARS_NO_CACHE": "1"}
    env.pop("SCARS_WORKERS", None)
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path), str(ROOT / "bench")],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.splitlines()[-1])
    if os.cpu_count() and os.cpu_count() > 1:
        assert got["forks"] == 1  # the second read forked (the first one did not)
    assert got["patterns"] > 0 and got["matches"] > 0
    assert got["same_patterns"] and got["same_matches"]


FALLBACK = """
import json
from scars.core.storage import parallel
def unpicklable(n):
    return lambda: n  # pickling fails in the child: computed here instead
def raises():
    raise ValueError("here")
got, mine = parallel.beside(unpicklable, (7,), lambda: "mine")
try:
    parallel.beside(sum, ([1, 2],), raises)
    raised = False
except ValueError:
    raised = True
print(json.dumps({"value": got(), "mine": mine, "raised": raised, "sum": parallel.beside(sum, ([1, 2],), list)[0]}))
"""


def test_a_failing_child_falls_back_and_an_error_here_is_raised():
    proc = subprocess.run([sys.executable, "-c", FALLBACK], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.splitlines()[-1]) == {"value": 7, "mine": "mine", "raised": True, "sum": 3}
