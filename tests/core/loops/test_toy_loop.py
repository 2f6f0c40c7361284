"""A new loop is one folder and one registry line (issue 30): a toy loop written into a temporary
package (its system and its catalog) and registered for the test only (one registry line; no
catalog is patched) is picked up by every surface: `scars loops` (text and JSON), the app's Loops
inbox and its gate screen, `scars gate` (show and answer), a gate request (`scars requests`,
`scars answer`, applied through the record path)."""

from __future__ import annotations

import json
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from scars.core.gates import requests as rq
from scars.core.loops import discover_loops, registry
from scars.tui.cli.main import main

TOY_SYSTEM = '''
"""A toy loop: `.toy/state.json` holds a round, a limit and whether it waits for a person."""

from __future__ import annotations

import json
from pathlib import Path

from scars.core.gatekit.catalog import Answer, Gate
from scars.core.gatekit.evidence import Evidence, GateResult
from scars.core.gatekit.state_io import gate_result, record_entry, state_lock
from scars.core.loops.base import Budget, LoopState, StopRule, rel
from scars.core.loops.system import LoopKind, StateFileSystem
from scars.core.storage.intent import Plan


def read(path, root):
    data = json.loads(path.read_text(encoding="utf-8"))
    return LoopState(
        kind="toy",
        name=data["name"],
        path=rel(path, root),
        budget=Budget(data["round"], data["limit"], "rounds"),
        stop_rule=StopRule(data["round"] >= data["limit"], ("the toy's limit",)),
        route=None,
        waiting_for_human=not data["answers"],
        reason="the toy asks a person" if not data["answers"] else "answered",
        details={"target": 8, "scores": data["scores"]},
    )


class Toy(StateFileSystem):
    loop = "toy"
    kinds = (LoopKind("toy", "Toy loop", 10.0),)
    root_markers = (".toy",)
    file_names = "state.json"

    def find(self, root, walk, now):
        return [read(d.path / "state.json", root) for d in walk if d.path.name == ".toy" and "state.json" in d.files]

    def read_path(self, path, root, now):
        return [read(path, root)] if path.name == "state.json" and path.parent.name == ".toy" else None

    def gate_call(self, state):
        return ("toy-go", {}) if state.waiting_for_human else None

    def _gather(self, gate, where, **options):
        sf = where / ".toy" / "state.json" if where.is_dir() else where
        root = sf.parent.parent
        state = read(sf, root)
        return Evidence(
            gate=gate,
            target=sf.parent,
            state_file=sf,
            workflow_prompt=gate.prompt.format(name=state.name),
            figures=[("toy", state.name), ("budget", state.budget.describe())],
            files_read=[".toy/state.json"],
            context={"root": root, "decisions_dir": sf.parent, "loop_state": state},
            default="go",
        )

    def _apply(self, evidence, ans, reason, *, user, source, now):
        sf = evidence.state_file
        with state_lock(sf.parent, user, root=evidence.context["root"]):
            plan = Plan(sf.parent, root=evidence.context["root"])
            ad_path, number = record_entry(plan, evidence, ans, reason, user=user, now=now)
            data = json.loads(sf.read_text(encoding="utf-8"))
            data["answers"].append({"answer": ans.value, "by": user})
            plan.replace(sf, json.dumps(data).encode("utf-8"))
            plan.commit()
        return gate_result(evidence, ans, reason, user, [ad_path, sf], number)


SYSTEM = Toy()
'''

TOY_CATALOG = '''
"""The toy loop's gate as data."""

from scars.core.gatekit.catalog import Gate, answer_of

WHERE = "the toy's .toy/state.json"

POINTS = (
    Gate(
        id="toy-go",
        entry_id="toy-go",
        loop="toy",
        title="The toy loop asks whether to go on",
        stage="iteration",
        prompt_type="question",
        answers=(
            answer_of("go", "g", "(A) go on", "proceed", False, "the toy runs another round"),
            answer_of("halt", "h", "(B) halt", "reject", True, "the toy stops"),
        ),
        principle="the toy's rule",
        source="the toy loop",
        prompt="Toy {name}: go on or halt?",
    ),
)
'''


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy loop's folder written as a package of its own (its system and its catalog) and
    registered for this test only: one line in the registry, nothing else."""
    name = f"toyloop_{uuid.uuid4().hex[:8]}"
    pkg = tmp_path / "pkgs" / name
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""A toy loop."""\n')
    (pkg / "system.py").write_text(textwrap.dedent(TOY_SYSTEM))
    (pkg / "catalog.py").write_text(textwrap.dedent(TOY_CATALOG))
    monkeypatch.syspath_prepend(str(tmp_path / "pkgs"))
    monkeypatch.setitem(registry.REGISTRY, "toy", f"{name}.system")
    root = tmp_path / "proj"
    (root / ".toy").mkdir(parents=True)
    (root / ".git").mkdir()
    state = {"name": "widget", "round": 2, "limit": 3, "answers": [], "scores": [5, 6]}
    (root / ".toy" / "state.json").write_text(json.dumps(state))
    yield root
    sys.modules.pop(f"{name}.system", None)
    sys.modules.pop(f"{name}.catalog", None)
    sys.modules.pop(name, None)


def _state(root: Path) -> dict:
    return json.loads((root / ".toy" / "state.json").read_text())


def test_scars_loops_lists_the_toy_loop_in_text_and_json(toy, capsys):
    assert main(["loops", str(toy), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    loops = listed["loops"] if isinstance(listed, dict) else listed
    (mine,) = [s for s in loops if s["kind"] == "toy"]
    assert mine["name"] == "widget" and mine["waiting_for_human"] is True
    assert "toy-go" in json.dumps(mine)  # the gate that answers it, named by its system
    assert main(["loops", str(toy)]) == 0
    text = capsys.readouterr().out
    assert "Toy loop" in text and "widget" in text and "scars gate toy-go" in text


def test_scars_gate_help_names_the_toy_gate_and_its_path(toy, capsys):
    """`scars gate --help` lists the toy's gate (the GATE choices, the description) and what its
    PATH is, read from the toy's catalog: tui/cli names no loop of its own."""
    with pytest.raises(SystemExit) as exc:
        main(["gate", "--help"])
    assert exc.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "toy-go (toy: go, halt)" in out and "the toy's .toy/state.json" in out
    assert "toy-go" in out.split("positional arguments:")[1]  # the GATE argument's choices


def test_a_state_file_given_directly_is_read_by_its_system(toy):
    (state,) = discover_loops(toy / ".toy" / "state.json")
    assert (state.kind, state.name) == ("toy", "widget")


def test_scars_gate_shows_and_records_the_toy_gate(toy, capsys):
    assert main(["gate", "toy-go", str(toy), "--json"]) == 3  # no terminal, no answer: a human is needed
    shown = json.loads(capsys.readouterr().out)
    assert shown["gate"] == "toy-go" and "Toy widget: go on or halt?" in json.dumps(shown)
    assert main(["gate", "toy-go", str(toy), "--answer", "halt"]) == 4  # halt needs a reason
    capsys.readouterr()
    assert _state(toy)["answers"] == []
    assert main(["gate", "toy-go", str(toy), "--answer", "go", "--as", "alice", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["answer"] == "go"
    assert _state(toy)["answers"] == [{"answer": "go", "by": "alice"}]
    assert "toy-go" in (toy / ".toy" / "auto-decisions.md").read_text()
    assert not [s for s in discover_loops(toy) if s.waiting_for_human]


def test_a_toy_gate_request_is_listed_answered_and_applied(toy, capsys):
    from scars.core import gates

    assert rq.requests_root(toy / ".toy") == toy  # the toy's root marker is the git root's neighbour
    evidence = gates.gather("toy-go", toy)
    req = rq.post_request(evidence, toy, user="agent")
    assert main(["requests", str(toy), "--json"]) == 0
    assert req.id in capsys.readouterr().out
    assert main(["answer", req.id, "--answer", "go", "--path", str(toy), "--as", "bob"]) == 0
    capsys.readouterr()
    result = rq.apply_request(toy, req.id, user="agent")
    assert result.answer == "go"
    assert _state(toy)["answers"] == [{"answer": "go", "by": "bob"}]
    assert rq.load_request(toy, req.id).status == "applied"
