"""One problem shape (scars.core.model.Problem: severity, file, line, message) for what the readers,
the loop readers and `scars log verify` find wrong; the JSON of `scars status` and `scars log
verify` keeps its documented keys."""

from __future__ import annotations

import json

from scars.core.gates.verify import verify_feature
from scars.core.loops import discover_loops
from scars.core.model import Problem
from scars.core.samsara.feature import read_feature
from scars.core.samsara.status import feature_to_json
from tests.factories import report, run_cli, write_feature


def _odd_feature(root):
    return write_feature(
        root,
        {
            "task-1-scar.yaml": report(ks=['"Retry count is hard-coded to 3"'], extra="known_shortcuts: []\n"),
            "task-2-scar.yaml": "- a list, not a report\n",
        },
        files={
            "notes.txt": "",
            "scar-reports/notes.txt": "not a report\n",
            "index.yaml": "tasks: []\ntasks: [1]\n",
            "iteration-log.yaml": 'feature: "x"\nrounds:\n  - round: 1\n    signal_lost_before: 1\n',
        },
    )


def test_reader_loops_and_verify_give_problems(tmp_path):
    feature = _odd_feature(tmp_path)
    (tmp_path / ".loop-spec" / "features" / "bad").mkdir(parents=True)
    (tmp_path / ".loop-spec" / "features" / "bad" / "feature.json").write_text("{,}")
    f = read_feature(feature)
    found = {
        "parse failures": f.parse_failures,
        "warnings": f.warnings,
        "loop failures": [p for s in discover_loops(tmp_path) for p in s.parse_failures],
        "verify": verify_feature(feature).findings,
    }
    for what, problems in found.items():
        assert problems, what
        assert all(isinstance(p, Problem) for p in problems), what
    assert {p.severity for p in f.parse_failures} == {"failure"}
    assert {p.severity for p in f.warnings} == {"warning"}
    dup = next(w for w in f.warnings if w.file == "index.yaml")
    assert (dup.line, str(dup)) == (2, f"index.yaml:2: {dup.message}") and "duplicate key 'tasks'" in dup.message
    log = next(w for w in f.warnings if w.file == "iteration-log.yaml")
    assert log.line == 3 and "round 1 has no signal_lost_after" in log.message


def test_the_json_keys_stay_as_documented(tmp_path, capsys):
    feature = _odd_feature(tmp_path)
    data = feature_to_json(read_feature(feature))
    assert set(data["parse_failures"][0]) == {"file", "line", "reason"}
    assert all(isinstance(w, str) for w in data["warnings"])
    code, out, _ = run_cli(["log", "verify", str(feature), "--json"], capsys)
    result = json.loads(out)
    assert code == 1 and {"feature", "outcome", "reasons", "notes", "checked"} <= set(result)
    assert set(result["reasons"][0]) == {"level", "file", "line", "message"}
