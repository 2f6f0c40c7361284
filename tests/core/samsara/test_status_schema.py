"""`scars status --json` has a JSON Schema in the package (issue 32): the outputs kept as test data,
the upstream fixtures read in place and a feature with every kind of decision validate against
it, and the field list of docs/commands.md is exactly the schema's properties (the README's list
lacked `reopened` and `moved_decisions`)."""

from __future__ import annotations

import json
import re
import shutil

import jsonschema
import pytest

from scars.core.samsara.status import status_schema_text
from scars.tui.cli.main import main
from tests.factories import ROOT
from tests.status_golden import GOLDEN, UPSTREAM

SCHEMA = json.loads(status_schema_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
DEFS = SCHEMA["$defs"]


def errors(instance: object) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in VALIDATOR.iter_errors(instance)]


def status(capsys, *args: str) -> dict:
    capsys.readouterr()
    assert main(["status", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_schema_is_a_valid_draft_2020_12_schema_and_the_package_holds_it():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert (ROOT / "core" / "schemas" / "status.schema.json").read_text(encoding="utf-8") == status_schema_text()


def test_status_schema_prints_it(capsys):
    assert main(["status", "--schema"]) == 0
    assert json.loads(capsys.readouterr().out) == SCHEMA


GOLDEN_FILES = sorted(p for p in GOLDEN.glob("*.json") if p.name != "inputs.json")


@pytest.mark.parametrize("path", GOLDEN_FILES, ids=lambda p: p.stem)
def test_every_kept_output_validates(path):
    assert errors(json.loads(path.read_text(encoding="utf-8"))) == []


def test_the_kept_outputs_are_both_shapes():
    kinds = {"root" in json.loads(p.read_text(encoding="utf-8")) for p in GOLDEN_FILES}
    assert kinds == {True, False} and len(GOLDEN_FILES) >= 10


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason="../shared/fixtures/upstream is not beside the checkout")
def test_the_upstream_fixtures_read_now_validate(capsys, monkeypatch):
    monkeypatch.setenv("SCARS_NO_CACHE", "1")
    root = status(capsys, str(UPSTREAM))
    assert len(root["features"]) >= 4 and errors(root) == []
    for feature in sorted((UPSTREAM / "changes").iterdir()):
        if feature.is_dir():
            assert errors(status(capsys, str(feature))) == [], feature.name


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_feature_with_every_kind_of_decision_validates(tmp_path, capsys, monkeypatch):
    """Decisions made in scars (fix, accept with a watch, defer), the open round, a decision whose
    item changed (`moved_decisions`), a reopened accept (`reopened`), an item with keys no era
    defines (`extra`) and carried decisions: the fields the kept outputs never fill."""
    from scars.core.samsara.feature import read_feature
    from scars.core.samsara.session import FeatureSession

    monkeypatch.setenv("SCARS_NO_CACHE", "1")
    monkeypatch.setenv("SCARS_USER", "ann")
    repo = tmp_path / "ledger"
    assert main(["demo", "--dir", str(repo), "--json"]) == 0
    assert errors(json.loads(capsys.readouterr().out)) == []  # `scars demo --json` prints the status object
    feat = repo / "changes" / "2026-11-02_csv-export"
    items = {it.text: it.id for it in read_feature(feat).items}
    retries = items["Upload retries are hard-coded to three attempts with no backoff"]
    timeout = items["A timeout on the last retry is raised, but a partial upload stays in the bucket"]
    client = items["The bucket client is safe to share between threads"]
    (latin1,) = [i for text, i in items.items() if text.startswith("Latin-1 fallback")]
    with FeatureSession.open(feat) as s:
        s.decide(
            retries,
            "accept",
            re_review_signal="the bucket starts throttling",
            owner="ops on-call",
            rationale="no throttling seen in staging",
            watch="path-changed: src/export.py",
        )
        s.decide(timeout, "fix")
        s.decide(
            latin1,
            "accept",
            re_review_signal="a ledger arrives in another encoding",
            owner="ledger team",
            rationale="every ledger is UTF-8 or Latin-1 today",
            watch="path-changed: src/decode.py",
        )
        s.decide(client, "defer", reason="needs the threading review", revisit_when="round 3")
    report = feat / "scar-reports" / "task-2-scar.yaml"
    text = report.read_text(encoding="utf-8")
    text = text.replace(
        '    where: "src/export.py:26-32"\n\nassumptions_made', '    where: "src/upload.py:1"\n\nassumptions_made'
    )
    text = text.replace(
        "    deferred_to_feature_iteration: true\n", "    deferred_to_feature_iteration: true\n    severity: high\n"
    )
    report.write_text(text, encoding="utf-8")
    (repo / "src" / "export.py").write_text("# changed\n", encoding="utf-8")
    assert main(["watch", "check", str(feat)]) == 0

    data = status(capsys, str(feat))
    assert errors(data) == []
    assert [m["item_id"] for m in data["moved_decisions"]] == [timeout]
    assert [r["item_id"] for r in data["reopened"]] == [retries]
    assert data["rounds"][-1]["open"] is True and data["rounds"][-1]["source"] == "journal"
    by_id = {it["id"]: it for it in data["items"]}
    assert by_id[client]["decision"]["action"] == "defer"
    assert by_id[latin1]["decision"]["watch"] == "path-changed: src/decode.py"  # a watch that did not fire
    assert by_id[items["Timezone-naive timestamps compare as UTC"]]["extra"] == {"severity": "high"}
    assert any(it["decision"] and "carried_round" in it["decision"] for it in data["items"])
    root = status(capsys, str(repo))
    assert errors(root) == [] and root["features"][0]["moved_decisions"] == data["moved_decisions"]


def test_the_schema_refuses_what_the_output_never_holds():
    """Strict where it says so: an unknown field, a missing one, a wrong type, a bad id."""
    good = json.loads((GOLDEN / "demo-feature.json").read_text(encoding="utf-8"))
    assert errors(good) == []
    assert errors({**good, "surprise": 1})
    assert errors({k: v for k, v in good.items() if k != "reopened"})
    assert errors({**good, "signal_lost": "14"})
    first = dict(good["items"][0], id="ks-XYZ")
    assert errors({**good, "items": [first]})
    assert errors({**good, "items": [dict(good["items"][0], decision={"action": "fix"})]})
    assert errors({"root": "/r", "features": [good], "fast_tracks": []})  # the key only when there are some


# --------------------------------------------------------------- the documented list


def _documented_rows() -> dict[str, str]:
    text = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    section = text.split("\n## `scars status", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^\| `([\w\[\].]+)` \| (.+?) \| .*\|$", section, re.M))


def _names(shape: str) -> list[str]:
    """The names at the first level of a shape: `[{a, b?, c}, …]` → a, b, c."""
    inner = shape.strip("`").lstrip("[").split("{", 1)[1].rsplit("}", 1)[0]
    depth, names, word = 0, [], ""
    for ch in inner + ",":
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        elif ch == "," and depth == 0:
            names.append(word.strip().split()[0].rstrip("?"))
            word = ""
            continue
        if depth == 0:
            word += ch
    return names


def _object(schema: dict) -> dict:
    """The object schema a property holds: itself, its array's items, or what it refers to."""
    if schema.get("type") == "array":
        schema = schema["items"]
    if "$ref" in schema:
        schema = DEFS[schema["$ref"].rsplit("/", 1)[1]]
    return schema


def test_the_documented_fields_are_the_schemas_properties():
    rows = _documented_rows()
    top = [name for name in rows if "." not in name]
    feature = DEFS["feature"]
    assert top == list(feature["properties"])  # every field, in the order printed
    assert set(feature["required"]) == set(top)
    assert {"reopened", "moved_decisions"} <= set(top)
    nested = 0
    for name, shape in rows.items():
        if "{" not in shape:
            continue
        if "." in name:  # items[].decision
            parent, child = name.split("[].")
            target = _object(_object(feature["properties"][parent])["properties"][child]["anyOf"][0])
        else:
            target = _object(feature["properties"][name])
        documented = _names(shape)
        assert documented == list(target["properties"]), name
        optional = {n.rstrip("?") for n in re.findall(r"\b(\w+\?)", shape)}
        assert optional == set(target["properties"]) - set(target["required"]) or name == "rounds", name
        nested += 1
    assert nested >= 10
    assert (
        rows["resolved"] == "same shape as `items`"
        and feature["properties"]["resolved"] == feature["properties"]["items"]
    )


def test_the_documented_repository_object_is_the_schemas():
    text = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    assert "`{root, features, fast_tracks?}`" in text and "`[{name, path, kind, note}, …]`" in text
    repo = DEFS["repository"]
    assert list(repo["properties"]) == ["root", "features", "fast_tracks"] and repo["required"] == ["root", "features"]
    assert list(repo["properties"]["fast_tracks"]["items"]["properties"]) == ["name", "path", "kind", "note"]


def test_the_shape_reader():
    assert _names("`[{a, b?, c [{x, y}], d}, …]`") == ["a", "b", "c", "d"]
    assert _names("`{verdict, record}`") == ["verdict", "record"]
