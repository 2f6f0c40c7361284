"""A cold ``scars status`` does what does not depend on the possible patterns while their forked
child computes them (issue 17: the parent waited 1.8 s at 50,000 items): the cache file's items
are written and, with ``--json``, the items' JSON encoded then, or, without, the summary printed
but for its possible patterns (which come last); after the child only the patterns' part is
left. The line is the same bytes and the cache file is put in place after the output (a read that
fails meanwhile: tests/core/samsara/test_patterns_beside.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.factories import ROOT

# Nothing runs beside on one core (no fork).
beside = pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: the possible patterns are computed in line")

# A small generated feature, the cache on (no racy window), and possible patterns that finish only
# once ``done()`` holds in the parent: proof that the parent did it while they were computed (else
# they wait out their deadline, in the child and then in line, and the probe fails).
SETUP = """
import io, json, os, sys, time
sys.path.insert(0, sys.argv[2])
import generate
from pathlib import Path
from scars.core.samsara import aggregate, status
from scars.core.storage import cache
from scars.tui.cli.main import main
work = Path(sys.argv[1])
repo = work / "repo"
generate.generate("small", repo, seed=0)
feature_dir = next(p for p in (repo / "changes").iterdir() if p.is_dir())
os.environ["SCARS_CACHE_DIR"] = str(work / "cache")
cache.RACY_NS = 0
real_patterns = aggregate.possible_patterns

def patterns_once(done, what):
    def patterns(items, literal):
        deadline = time.monotonic() + 20
        while not done():
            if time.monotonic() > deadline:
                raise TimeoutError(what + " was not done while the patterns were computed")
            time.sleep(0.005)
        return real_patterns(items, literal)
    return patterns
"""

PROBE = (
    SETUP
    + """
aggregate.PATTERNS_BESIDE_FROM = int(sys.argv[3])
marker = work / "line-built"
patterns_after_the_line = patterns_once(marker.exists, "the line but for the patterns")

if aggregate.PATTERNS_BESIDE_FROM == 0:
    aggregate.possible_patterns = patterns_after_the_line
events = []

class Out(io.StringIO):
    def isatty(self):
        return False

out = Out()
real_encode, real_around = status.encode_items, status.json_line_around_patterns
real_items, real_replace = cache._dump_items, cache.os.replace

def encode(feature):
    events.append(("encode", len(out.getvalue())))
    return real_encode(feature)

def around(feature, encoded):
    events.append(("line but the patterns", len(out.getvalue())))
    got = real_around(feature, encoded)
    marker.touch()
    return got

def dump_items(fh, items):
    events.append(("items", len(out.getvalue())))
    return real_items(fh, items)

class Os:
    def __getattr__(self, name):
        return getattr(os, name)
    def replace(self, a, b):
        events.append(("in place " + Path(b).name.split(".")[1], len(out.getvalue())))
        return real_replace(a, b)

status.encode_items, status.json_line_around_patterns = encode, around
cache._dump_items, cache.os = dump_items, Os()
sys.stdout = out
code = main(["status", "--json", str(feature_dir)])
cold = out.getvalue()
out.seek(0); out.truncate()
warm_code = main(["status", "--json", str(feature_dir)])
warm = out.getvalue()
sys.stdout = sys.__stdout__
os.environ["SCARS_NO_CACHE"] = "1"
aggregate.possible_patterns = real_patterns
from scars.core.samsara.feature import read_feature
expected = json.dumps(status.feature_to_json(read_feature(feature_dir)), ensure_ascii=True) + "\\n"
left = sorted(p.name for p in (work / "cache").iterdir() if p.name.startswith(".tmp-"))
print(json.dumps({"codes": [code, warm_code], "events": events, "length": len(cold), "cold_ok": cold == expected,
                  "warm_ok": warm == expected, "temporaries": left}))
"""
)


def _probe(script: str, *args: str) -> dict:
    """What ``script`` prints last (JSON), run in a fresh single-threaded Python (a fork needs one)."""
    env = {k: v for k, v in os.environ.items() if k not in ("SCARS_WORKERS", "SCARS_NO_CACHE")}
    proc = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


@beside
def test_a_cold_line_is_built_but_for_the_patterns_while_they_are_computed(tmp_path):
    got = _probe(PROBE, str(tmp_path), str(ROOT / "bench"), "0")
    n = got["length"]
    assert got["codes"] == [0, 0] and got["cold_ok"] and got["warm_ok"] and got["temporaries"] == []
    # while the child computed (before any output): the cache file's items, the items' JSON, the
    # rest of the line but for the patterns' part; the cache file and the kept JSON put in place
    # after the whole line; the warm run writes nothing
    assert got["events"] == [
        ["items", 0],
        ["encode", 0],
        ["line but the patterns", 0],
        ["in place pickle", n],
        ["in place status-items", n],
    ]


def test_in_line_patterns_leave_the_cache_and_the_json_after_the_output(tmp_path):
    """Small features (patterns computed in line): nothing to do meanwhile, the output comes first."""
    got = _probe(PROBE, str(tmp_path), str(ROOT / "bench"), str(10**9))
    n = got["length"]
    assert got["codes"] == [0, 0] and got["cold_ok"] and got["warm_ok"] and got["temporaries"] == []
    assert got["events"] == [["encode", 0], ["items", n], ["in place pickle", n], ["in place status-items", n]]


TEXT = (
    SETUP
    + """
out_path = work / "out.txt"
patterns_after_the_summary = patterns_once(lambda: out_path.stat().st_size, "the summary")

outputs = []
for beside, patterns in ((0, patterns_after_the_summary), (0, real_patterns), (10**9, real_patterns)):
    aggregate.PATTERNS_BESIDE_FROM = beside
    aggregate.possible_patterns = patterns
    with open(out_path, "w", encoding="utf-8") as sys.stdout:
        main(["status", str(feature_dir)])  # cold (cache emptied below), then warm, then in line
    sys.stdout = sys.__stdout__
    outputs.append(out_path.read_text(encoding="utf-8"))
    if beside:
        break
    if patterns is not real_patterns:
        continue
    for f in (work / "cache").iterdir():
        f.unlink()
# a reader that leaves during the summary: the command ends quietly once the read is done and cached
class Gone(io.StringIO):
    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")
    def fileno(self):
        return os.open(os.devnull, os.O_WRONLY)
aggregate.PATTERNS_BESIDE_FROM = 0
for f in (work / "cache").iterdir():
    f.unlink()
sys.stdout = Gone()
code = main(["status", str(feature_dir)])
sys.stdout = sys.__stdout__
print(json.dumps({"outputs": outputs, "gone": [code, sorted(f.name.split(".")[1] for f in (work / "cache").iterdir())]}))
"""
)


@beside
def test_a_cold_summary_prints_all_but_the_possible_patterns_while_they_are_computed(tmp_path):
    got = _probe(TEXT, str(tmp_path), str(ROOT / "bench"))
    cold, warm, in_line = got["outputs"]
    assert cold == warm == in_line
    assert got["gone"] == [0, ["pickle"]]
    assert "\nPossible patterns (" in cold and cold.index("\nPossible patterns (") > cold.index("\nRounds")
