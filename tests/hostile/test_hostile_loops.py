"""The hostile corpus against the other loops' readers (scars.core.loops) and `scars loops`.

Each state file of loop-spec, ARIS/Mechanist and bkit gets every generic hostile content;
the read runs in a forked child with a memory cap and a hang guard (a FIFO blocks a naive
reader; 50 MB is over every cap).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.hostile.corpus import MB, SECRET, deep, restore_permissions
from tests.hostile.injection import PAYLOADS, forbidden_in
from tests.hostile.isolate import GIB, run_isolated
from tests.hostile.probe import RAW_CONTROL, run_cli

STATE_FILES = {
    "loop-spec": ".loop-spec/features/hostile/feature.json",
    "aris-state": "review-stage/REVIEW_STATE.json",
    "aris-log": "review-stage/AUTO_REVIEW.md",
    "bkit": ".bkit/state/pdca-status.json",
    "bkit-legacy": "docs/.pdca-status.json",
}


def _huge(p: Path, root: Path) -> None:
    with open(p, "w", encoding="utf-8") as f:
        f.write('{"features": {"x": {"matchRate": 1, "note": "')
        chunk = "y" * MB
        for _ in range(50):
            f.write(chunk)
        f.write('"}}}')


def _outside(p: Path, root: Path) -> None:
    target = root.parent / "outside.json"
    target.write_text(json.dumps({"slug": SECRET, "features": {SECRET: {"matchRate": 1}}, "last_verdict": SECRET}))
    p.symlink_to(target)


def _loop(p: Path, root: Path) -> None:
    other = p.with_name(p.name + ".b")
    p.symlink_to(other.name)
    other.symlink_to(p.name)


CONTENTS = {
    "binary": lambda p, r: p.write_bytes(bytes(range(256)) * 64),
    "invalid-utf8": lambda p, r: p.write_bytes(b'{"slug": "caf\xe9 \xff"}'),
    "empty": lambda p, r: p.write_bytes(b""),
    "not-json": lambda p, r: p.write_text("{'single': quotes, trailing,}\n"),
    "top-list": lambda p, r: p.write_text("[1, 2, 3]"),
    "nesting-100000": lambda p, r: p.write_text(deep(100_000)),
    "huge-50mb": _huge,
    "fifo": lambda p, r: os.mkfifo(p),
    "directory": lambda p, r: p.mkdir(),
    "symlink-outside": _outside,
    "symlink-loop": _loop,
    "nan-and-huge-numbers": lambda p, r: p.write_text(
        '{"iterations_consumed": 1e999, "last_score": NaN, "round": -Infinity}'
    ),
}


def _payload_json() -> str:
    s = {k: v for k, v in PAYLOADS.items() if k != "long-line"}
    return json.dumps(
        {
            "slug": s["osc52"],
            "feature_title": s["csi"],
            "warnings": list(s.values()),
            "iterate": {
                "maxIterations": 10,
                "used": 1,
                "lastVerdict": {"verdict": s["bidi"], "gap": s["markup-click"]},
                "history": [{"verdict": s["osc8"], "gap": s["forged-heading"]}],
            },
            "status": "in_progress",
            "last_verdict": s["osc0-title"],
            "last_score": 5,
            "round": 2,
            "thread_id": s["c1-csi"],
            "primaryFeature": s["zero-width"],
            "features": {s["osc52"]: {"phase": s["csi"], "matchRate": 80, "iterationCount": 1}},
        }
    )


def _probe_loops(root: Path) -> dict:
    from scars.core.loops import discover_loops

    states = discover_loops(root)
    dump = json.dumps([s.to_dict() for s in states], ensure_ascii=False)
    return {
        "dump": dump[:200_000],
        "failures": re.findall(r'"reason": "([^"]*)"', dump)[:200],
        "plain": run_cli(["loops", str(root)]),
        "json": run_cli(["loops", "--json", str(root)]),
    }


def _matrix():
    """Every content for every state file; the default suite takes one file per content
    (rotating), ``-m slow`` the rest."""
    wheres = list(STATE_FILES)
    for n, content in enumerate(CONTENTS):
        for k, where in enumerate(wheres):
            quick = k == n % len(wheres)
            yield pytest.param(where, content, id=f"{where}-{content}", marks=() if quick else pytest.mark.slow)


@pytest.mark.parametrize("where, content", list(_matrix()))
def test_hostile_loop_state(where: str, content: str, tmp_path: Path):
    if where == "aris-log" and content in ("top-list", "not-json", "nan-and-huge-numbers"):
        pytest.skip("markdown: just text")
    root = tmp_path / "repo"
    path = root / STATE_FILES[where]
    path.parent.mkdir(parents=True, exist_ok=True)
    CONTENTS[content](path, root)
    try:
        out = run_isolated(lambda: _probe_loops(root), timeout=30.0, mem_bytes=GIB)
    finally:
        restore_permissions(tmp_path)
    assert out.status == "ok", out.explain()
    res = out.value
    for key in ("plain", "json"):
        r = res[key]
        assert r["rc"] == 0, f"scars loops ({key}) exited {r['rc']}: {r['stderr']}"
        assert not r["traceback"] and not r["raw_control"] and not r["secret"], r
    assert SECRET not in res["dump"], "a file outside the repository was read"
    if content in ("fifo", "symlink-outside", "symlink-loop", "huge-50mb") or (
        content in ("binary", "invalid-utf8", "nesting-100000") and where != "aris-log"
    ):
        # A state file that cannot be used is listed with a reason. (A directory named like a
        # state file is not taken for a loop at all.)
        assert res["failures"], f"{where}/{content}: not listed: {res['dump'][:500]}"


def test_payloads_in_loop_state_are_inert(tmp_path: Path):
    root = tmp_path / "repo"
    for where, rel in STATE_FILES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if where == "aris-log":
            p.write_text(
                "# Auto review\n\n## Round 1 (2026-01-01)\n### Assessment (Summary)\n- Score: 5/10\n- Verdict: "
                + PAYLOADS["osc52"]
                + "\n- Key criticisms: "
                + PAYLOADS["bidi"]
                + "\n### Status\n"
                + PAYLOADS["forged-heading"]
                + "\n",
                encoding="utf-8",
            )
        else:
            p.write_text(_payload_json(), encoding="utf-8")
    out = run_isolated(lambda: _probe_loops(root), timeout=30.0, mem_bytes=GIB)
    assert out.status == "ok", out.explain()
    for key in ("plain", "json"):
        r = out.value[key]
        assert r["rc"] == 0 and not r["traceback"], r
        assert not r["raw_control"], f"raw controls in scars loops ({key}): {r['raw_control']}"
        assert forbidden_in(r["head"].encode()) == []
    assert not RAW_CONTROL.search(out.value["plain"]["head"])
