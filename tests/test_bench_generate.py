"""bench/generate.py: deterministic output, and figures a correct reader reproduces."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
import yaml

from tests.factories import ROOT


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


gen = _load("generate")


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("small")
    return out, gen.generate("small", out, seed=7)


def test_same_seed_gives_identical_bytes(small, tmp_path):
    out, _ = small
    again = tmp_path / "again"
    gen.generate("small", again, seed=7)
    assert _tree(out) == _tree(again)


def test_other_seed_gives_other_reports(small, tmp_path):
    out, _ = small
    other = tmp_path / "other"
    gen.generate("small", other, seed=8)
    a, b = _tree(out), _tree(other)
    assert a.keys() == b.keys()  # same layout …
    assert sum(a[k] != b[k] for k in a) > 40  # … different content


def test_refuses_a_non_empty_repository(small):
    out, _ = small
    with pytest.raises(FileExistsError):
        gen.generate("small", out, seed=7)
    assert gen.main(["small", str(out)]) == 2


def test_small_has_the_promised_shape(small):
    out, manifest = small
    (feature,) = manifest["features"]
    fdir = out / feature["path"]
    reports = sorted((fdir / "scar-reports").glob("*-scar.yaml"))
    assert len(reports) == 50 == feature["reports"]
    assert feature["entries"] == 500
    assert (fdir / "index.yaml").is_file() and (fdir / "pre-thinking.md").is_file()
    assert (out / ".samsara" / "systemic-scars.yaml").is_file()
    assert json.loads((out / gen.MANIFEST).read_text(encoding="utf-8")) == manifest
    # The figures add up: signal_lost is the sum of the three counts.
    assert feature["signal_lost"] == sum(feature["counts"].values()) > 0
    assert len(feature["parse_failures"]) == 3 and len(feature["dangling_refs"]) == 1


def test_every_form_and_era_is_present(small):
    out, manifest = small
    fdir = out / manifest["features"][0]["path"]
    texts = "".join(p.read_text(encoding="utf-8") for p in (fdir / "scar-reports").glob("*.yaml"))
    for marker in (
        '\n  - "',  # Gen 1 string
        "  - description:",
        "deferred_to_feature_iteration: true",
        "status: resolved",
        "  - systemic_ref:",
        "  - what:",
        "bites_when:",
        "scar_id: SC-",
        "status: accepted",
        "status: deferred",
        "status: blocked",
        "verified: true",
        "verified: false",
        "resolved_items:",
        ": >-",
        ": |-",
        "budget_spent:",
        "# ",
    ):
        assert marker in texts, marker
    assert any("\u4e00" <= ch <= "\u9fff" for ch in texts)  # CJK text
    log = yaml.safe_load((fdir / "iteration-log.yaml").read_text(encoding="utf-8"))
    assert [r["round"] for r in log["rounds"]] == [1, 2]
    # The last earlier round ends where the feature stands now.
    assert log["rounds"][-1]["signal_lost_after"] == manifest["features"][0]["signal_lost"]


def test_reports_parse_except_the_planned_failures(small):
    out, manifest = small
    feature = manifest["features"][0]
    fdir = out / feature["path"]
    not_mappings = set()
    for p in sorted((fdir / "scar-reports").glob("*.yaml")):
        try:
            data = yaml.load(p.read_bytes(), Loader=yaml.CSafeLoader)
        except yaml.YAMLError:
            data = None
        if not isinstance(data, dict):
            not_mappings.add(p.relative_to(fdir).as_posix())
    dangling_files = {f for f, _ in feature["dangling_refs"]}
    assert not_mappings | dangling_files == set(feature["parse_failures"])


def test_read_feature_gives_the_manifest_figures(small):
    from scars.core.samsara import feature as reader

    out, manifest = small
    expected = manifest["features"][0]
    feature = reader.read_feature(out / expected["path"])
    assert feature.signal_lost == expected["signal_lost"]
    assert dict(feature.counts) == expected["counts"]
    assert sorted(f.file for f in feature.parse_failures) == expected["parse_failures"]
    assert sorted([f, i] for f, i in feature.dangling_refs) == expected["dangling_refs"]
    counted = [it for it in feature.items if it.counted]
    assert len(counted) == expected["remaining_items"]
