"""The readers that bypassed the read policy before it was one (issue 13, point 7): a gate's JSON
state file (no size cap, no symlink check), an answers file (raw PyYAML past the alias-bomb
guard), the entry gate's index.yaml. Each hostile file is refused with a reason, in a forked child
with a memory cap and a hang guard, and nothing is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scars.core.storage import safe_read
from tests.factories import bkit_project, clean_env, loop_spec_feature, mechanist_state, samsara_feature, tree_hashes
from tests.hostile.corpus import MB, SECRET
from tests.hostile.isolate import GIB, run_isolated
from tests.hostile.probe import run_cli


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_env(monkeypatch)


def _loop_spec(root: Path) -> tuple[Path, str, list[str]]:
    fdir = loop_spec_feature(root)
    return fdir / "feature.json", "spec", ["--answer", "reopen"]


def _review(root: Path) -> tuple[Path, str, list[str]]:
    stage = mechanist_state(root, score=5, verdict="not ready")
    return (
        stage / "REVIEW_STATE.json",
        "review-continue",
        ["--answer", "stop", "--reason", "the reviewer asks a dataset"],
    )


def _bkit(root: Path) -> tuple[Path, str, list[str]]:
    return bkit_project(root), "pdca-continue", ["--answer", "stop", "--reason", "the design doc changed; re-plan"]


GATES = {"loop-spec": _loop_spec, "review": _review, "bkit": _bkit}


def _oversized(state: Path, root: Path) -> str:
    data = json.loads(state.read_text())
    data["pad"] = "y" * (safe_read.JSON_MAX_BYTES + 1)  # valid JSON, one byte over the limit at least
    state.write_text(json.dumps(data))
    return "over the 8,388,608-byte limit"


def _symlink_outside(state: Path, root: Path) -> str:
    data = json.loads(state.read_text())
    outside = root.parent / "outside.json"
    outside.write_text(json.dumps({**data, "slug": SECRET, "last_verdict": SECRET, "primaryFeature": SECRET}))
    state.unlink()
    state.symlink_to(outside)
    return "points outside the repository"


def _deep(state: Path, root: Path) -> str:
    data = json.loads(state.read_text())
    data["deep"] = json.loads("[" * 100 + "]" * 100)
    state.write_text(json.dumps(data))
    return "nested too deeply"


HOSTILE = {"oversized": _oversized, "symlink-outside": _symlink_outside, "nesting-100": _deep}


@pytest.mark.parametrize("content", list(HOSTILE))
@pytest.mark.parametrize("gate", list(GATES))
def test_a_gates_hostile_state_file_is_refused_and_nothing_written(gate, content, tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    state, gate_id, answer = GATES[gate](root)
    why = HOSTILE[content](state, root)
    before = tree_hashes(tmp_path)
    out = run_isolated(
        lambda: run_cli(["gate", gate_id, str(state.parent), *answer, "--json"]), timeout=60, mem_bytes=GIB
    )
    assert out.status == "ok", out.explain()
    res = out.value
    assert res["rc"] == 2, res
    assert why in res["stderr"] and not res["secret"] and not res["traceback"], res
    assert tree_hashes(tmp_path) == before


BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
)


@pytest.mark.parametrize(
    "content, why",
    [
        (BOMB + "spec: {answer: ship, reason: *i}\n", "alias expansion"),
        ("spec: {answer: ship, reason: " + "[" * 100 + "]" * 100 + "}\n", "nesting deeper than 64"),
        ("spec: reopen\nspec: {answer: ship, reason: offline sync is v2 scope}\n", "duplicate key 'spec'"),
    ],
    ids=["alias-bomb", "nesting-100", "duplicate-gate"],
)
def test_a_hostile_answers_file_is_refused_and_nothing_written(content, why, tmp_path):
    fdir = loop_spec_feature(tmp_path / "p")
    answers = tmp_path / "answers.yaml"
    answers.write_text(content)
    before = tree_hashes(tmp_path / "p")
    out = run_isolated(
        lambda: run_cli(["gate", "spec", str(fdir), "--answers", str(answers)]), timeout=60, mem_bytes=GIB
    )
    assert out.status == "ok", out.explain()
    res = out.value
    assert res["rc"] == 4 and why in res["stderr"] and "nothing was recorded" in res["stderr"], res
    assert tree_hashes(tmp_path / "p") == before


def test_the_entry_gate_reads_no_index_yaml_outside_the_repository(tmp_path):
    from scars.core import gates

    root = tmp_path / "repo"
    feature = samsara_feature(root)
    outside = tmp_path / "index.yaml"
    outside.write_text(f'iteration_skip_record: "{SECRET}"\n')
    (feature / "index.yaml").unlink()
    (feature / "index.yaml").symlink_to(outside)
    ev = gates.gather("entry", feature)
    assert SECRET not in json.dumps([list(f) for f in ev.figures])
    assert outside.read_text() == f'iteration_skip_record: "{SECRET}"\n'


def test_the_limits_are_read_before_the_bytes(tmp_path):
    # A state file far over the limit is refused by its size, never read: 50 MiB under a 1 GiB cap.
    root = tmp_path / "repo"
    root.mkdir()
    state, gate_id, answer = _bkit(root)
    with open(state, "a") as f:
        f.truncate(50 * MB)
    out = run_isolated(lambda: run_cli(["gate", gate_id, str(root), *answer]), timeout=60, mem_bytes=GIB)
    assert out.status == "ok", out.explain()
    assert out.value["rc"] == 2 and "52,428,800 bytes, over the 8,388,608-byte limit" in out.value["stderr"]
