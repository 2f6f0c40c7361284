"""A cold ``scars status --json`` does what does not depend on the possible patterns while their
forked child computes them (issue 17: the parent waited 1.8 s at 50,000 items): the cache file's
items are written and the items' JSON encoded then; after the child only the patterns' part is
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

PROBE = """
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
aggregate.PATTERNS_BESIDE_FROM = int(sys.argv[3])
marker = work / "items-encoded"
real_patterns = aggregate.possible_patterns

def patterns_after_the_items_json(items, literal):
    # the child finishes only once the parent has encoded the items' JSON: proof that it did so
    # while the patterns were computed (else this waits out its deadline and the probe fails)
    deadline = time.monotonic() + 20
    while not marker.exists():
        if time.monotonic() > deadline:
            raise TimeoutError("the items' JSON was not encoded while the patterns were computed")
        time.sleep(0.005)
    return real_patterns(items, literal)

if aggregate.PATTERNS_BESIDE_FROM == 0:
    aggregate.possible_patterns = patterns_after_the_items_json
events = []

class Out(io.StringIO):
    def isatty(self):
        return False

out = Out()
real_encode, real_items, real_replace = status.encode_items, cache._dump_items, cache.os.replace

def encode(feature):
    events.append(("encode", len(out.getvalue())))
    got = real_encode(feature)
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

status.encode_items, cache._dump_items, cache.os = encode, dump_items, Os()
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


def _probe(script: str, *args: str) -> dict:
    """What ``script`` prints last (JSON), run in a fresh single-threaded Python (a fork needs one)."""
    env = {k: v for k, v in os.environ.items() if k not in ("SCARS_WORKERS", "SCARS_NO_CACHE")}
    proc = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


@beside
def test_a_cold_line_encodes_and_caches_the_items_while_the_patterns_are_computed(tmp_path):
    got = _probe(PROBE, str(tmp_path), str(ROOT / "bench"), "0")
    n = got["length"]
    assert got["codes"] == [0, 0] and got["cold_ok"] and got["warm_ok"] and got["temporaries"] == []
    # while the child computed (before any output): the cache file's items, then the items' JSON;
    # the cache file and the kept JSON put in place after the whole line; the warm run writes nothing
    assert got["events"] == [["items", 0], ["encode", 0], ["in place pickle", n], ["in place status-items", n]]


def test_in_line_patterns_leave_the_cache_and_the_json_after_the_output(tmp_path):
    """Small features (patterns computed in line): nothing to do meanwhile, the output comes first."""
    got = _probe(PROBE, str(tmp_path), str(ROOT / "bench"), str(10**9))
    n = got["length"]
    assert got["codes"] == [0, 0] and got["cold_ok"] and got["warm_ok"] and got["temporaries"] == []
    assert got["events"] == [["encode", 0], ["items", n], ["in place pickle", n], ["in place status-items", n]]
