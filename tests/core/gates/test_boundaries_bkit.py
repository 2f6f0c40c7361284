"""bkit rules at their boundaries: exactly at each threshold and on both sides.

Both paths are checked: the reader (`scars loops`, scars.core.loops.bkit.reader) and the
`pdca-continue` gate (scars.core.gatekit.state_io), which must agree on every configured threshold
(fractional, or 0) because the gate calls the reader's rule.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scars.core import gates
from scars.core.errors import DecisionRefused
from scars.core.loops import discover_loops
from scars.core.loops.bkit import reader as bkit
from scars.tui.cli import main as cli
from tests.factories import bkit_project, clean_env


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_env(monkeypatch)


def _project(root: Path, rate, *, count=2, history=None, config: dict | None = None) -> Path:
    sf = bkit_project(root, rate=rate, count=count, history=history if history is not None else (rate,))
    if config is not None:
        (root / "bkit.config.json").write_text(json.dumps({"pdca": config}))
    return sf


def _reader(root: Path):
    (state,) = [s for s in discover_loops(root) if s.kind == "bkit"]
    return state


def _gate(root: Path):
    ev = gates.gather("pdca-continue", root)
    return ev, dict(ev.figures)["Match Rate"]


# ---------------------------------------------------------------- default threshold 90 %


@pytest.mark.parametrize(
    "rate, met",
    [
        (80, False),  # the old mutant 90 -> 80 passes this
        (85, False),  # between 80 and 90
        (89.9, False),  # just below
        (90, True),  # exactly at the threshold (>= , not >)
        (90.1, True),  # just above
        (92, True),  # the mutant 90 -> 95 fails this
    ],
)
def test_default_match_rate_threshold_both_paths(tmp_path, rate, met):
    _project(tmp_path, rate)
    state = _reader(tmp_path)
    assert state.details["threshold"] == 90
    assert state.stop_rule.met is met
    assert state.stop_rule.outcome == ("success" if met else None)
    assert state.route == ("report" if met else "iterate")
    assert state.stop_rule.reasons[0] == f"match rate {rate:g}% {'≥' if met else '<'} 90%"
    ev, shown = _gate(tmp_path)
    assert shown == f"{rate:g}% (threshold 90%): {'pass' if met else 'below'}"
    assert ev.default == ("stop" if met else "iterate")
    assert ev.decision_overrides == ({"stop": "proceed"} if met else {})
    assert ("iterate" in ev.reason_required) is met


def test_unmeasured_rate_never_passes_even_at_threshold_zero(tmp_path):
    _project(tmp_path, None, history=(), config={"matchRateThreshold": 0})
    state = _reader(tmp_path)
    assert state.details["threshold"] == 0 and state.stop_rule.met is False
    ev, shown = _gate(tmp_path)
    assert shown == "not measured (threshold 0%): below" and ev.default == "iterate"


# ---------------------------------------------------------------- configured thresholds: agreement


@pytest.mark.parametrize(
    "threshold, rate, met",
    [
        (92.5, 92, False),  # int(92.5) == 92 would pass it: a configured fraction is kept
        (92.5, 92.4, False),
        (92.5, 92.5, True),  # exactly at the fractional threshold
        (92.5, 92.6, True),
        (0, 0, True),  # 0 is used as configured, never read as "absent -> 90"
        (0, 50, True),
        (85, 84.9, False),
        (85, 85, True),
    ],
)
def test_configured_threshold_reader_and_gate_agree(tmp_path, threshold, rate, met):
    _project(tmp_path, rate, config={"matchRateThreshold": threshold})
    state = _reader(tmp_path)
    assert state.details["threshold"] == threshold
    assert state.stop_rule.met is met and state.details["match_rate_met"] is met
    ev, shown = _gate(tmp_path)
    assert shown == f"{rate:g}% (threshold {threshold:g}%): {'pass' if met else 'below'}"
    assert ev.default == ("stop" if met else "iterate")
    assert f"(threshold {threshold:g}%)" in ev.workflow_prompt
    assert "bkit.config.json" in ev.files_read


def _cli(capsys, *argv: str) -> tuple[int, dict]:
    code = cli.main(list(argv))
    out = capsys.readouterr().out
    return code, json.loads(out)


@pytest.mark.parametrize("threshold, rate", [(92.5, 92), (92.5, 92.5), (0, 40)])
def test_scars_loops_and_scars_gate_agree_on_the_command_line(tmp_path, capsys, threshold, rate):
    """`scars loops --json` and `scars gate pdca-continue --json` read the same rule.

    A met rule makes `iterate` need a reason (exit 4, nothing written); an unmet one records it.
    """
    sf = _project(tmp_path, rate, config={"matchRateThreshold": threshold})
    code, loops = _cli(capsys, "loops", "--json", str(tmp_path))
    assert code == 0
    (feature,) = [s for s in loops["loops"] if s["kind"] == "bkit"]
    met = feature["stop_rule"]["met"]
    assert met is (rate >= threshold)
    assert feature["details"]["threshold"] == threshold
    before = sf.read_bytes()
    code, answer = _cli(capsys, "gate", "pdca-continue", str(tmp_path), "--answer", "iterate", "--json")
    if met:
        assert code == 4 and answer["exit_code"] == 4 and "needs a reason" in answer["error"]
        assert not (sf.parent / "auto-decisions.md").exists()
        assert sf.read_bytes() == before
    else:
        assert code == 0 and answer["answer"] == "iterate" and answer["decision"] == "proceed"
        text = (sf.parent / "auto-decisions.md").read_text()
        assert f"(threshold {threshold:g}%): below" in text
        after = json.loads(sf.read_text())
        assert after["features"]["login"]["phase"] == "check"  # iterate itself moves nothing
        assert after["history"][-1]["answer"] == "iterate"


def test_config_without_threshold_uses_90_and_a_non_number_falls_back(tmp_path):
    assert bkit.pdca_settings({}) == (90.0, 5)
    assert bkit.pdca_settings({"matchRateThreshold": 92.5, "maxIterations": 0}) == (92.5, 0)
    assert bkit.pdca_settings({"matchRateThreshold": 0}) == (0.0, 5)
    assert bkit.pdca_settings({"matchRateThreshold": True, "maxIterations": 7.5}) == (90.0, 5)


# ---------------------------------------------------------------- iteration limits


@pytest.mark.parametrize("count, spent", [(4, False), (5, True), (6, True)])
def test_max_iterations_boundary_both_paths(tmp_path, count, spent):
    _project(tmp_path, 70, count=count, history=(60, 70))
    state = _reader(tmp_path)
    assert state.budget.spent is spent
    assert state.stop_rule.outcome == ("failure" if spent else None)
    assert state.waiting_for_human is spent
    ev = gates.gather("pdca-continue", tmp_path)
    assert any("iteration limit reached" in w for w in ev.warnings) is spent
    # bkit's guardCanIterate: ITERATE only below the limit; the forced report only at it.
    assert ("iterate" in ev.refused) is spent and ("partial" in ev.refused) is not spent
    assert dict(ev.figures).get("forced report") == ("REPORT_DONE (check → report)" if spent else None)


def _config(root: Path, config: dict) -> None:
    (root / "bkit.config.json").write_text(json.dumps(config))


def test_the_state_machines_loop_breaker_limit_is_the_limit(tmp_path):
    """Before: scars read pdca.maxIterations and never the loop breaker bkit's state machine uses."""
    _project(tmp_path, 70, count=3, history=(70,))
    _config(tmp_path, {"pdca": {"maxIterations": 8}, "guardrails": {"loopBreaker": {"maxPdcaIterations": 3}}})
    state = _reader(tmp_path)
    assert (state.budget.limit, state.details["iterator_max"]) == (3, 8)
    assert state.stop_rule.outcome == "failure"
    assert "iterate" in gates.gather("pdca-continue", tmp_path).refused


def test_configured_max_iterations_zero_is_spent_at_once(tmp_path):
    _project(tmp_path, 70, count=0, history=(70,))
    _config(tmp_path, {"guardrails": {"loopBreaker": {"maxPdcaIterations": 0}}})
    assert _reader(tmp_path).stop_rule.outcome == "failure"
    ev = gates.gather("pdca-continue", tmp_path)
    assert dict(ev.figures)["iterations"].startswith("0 of max 0 (")


def test_the_critical_ceiling_is_shown_not_enforced(tmp_path):
    """Seed 001's CRITICAL_MAX_ITERATIONS (10) is display only: the gate names it beside bkit's limit
    (which alone decides, test below)."""
    assert bkit.CRITICAL_MAX_ITERATIONS == 10
    _project(tmp_path, 70, count=2, history=(60, 70))
    figures = dict(gates.gather("pdca-continue", tmp_path).figures)
    assert figures["iterations"].endswith(", critical work up to 10)")


@pytest.mark.parametrize("count, refused", [(9, False), (10, False), (11, False), (12, True)])
def test_no_hard_coded_critical_maximum(tmp_path, count, refused):
    """Before: iterate was refused at 10 whatever bkit's limit; now bkit's own limit decides."""
    _project(tmp_path, 70, count=count, history=(60, 70))
    _config(tmp_path, {"guardrails": {"loopBreaker": {"maxPdcaIterations": 12}}})
    ev = gates.gather("pdca-continue", tmp_path)
    assert ("iterate" in ev.refused) is refused
    if refused:
        with pytest.raises(DecisionRefused, match="guardCanIterate"):
            gates.record(ev, "iterate", "one more cycle for the login form", user="alice")


@pytest.mark.parametrize(
    "history, streak",
    [
        ((70, 70, 70), 2),  # two flat steps: one short of the limit
        ((70, 70, 70, 70), 3),  # three: the rule fires
        ((70, 70, 69, 71), 0),  # a rise resets the run
    ],
)
def test_no_improvement_boundary_in_the_gate(tmp_path, history, streak):
    _project(tmp_path, history[-1], count=len(history) - 1, history=history)
    ev = gates.gather("pdca-continue", tmp_path)
    assert dict(ev.figures)["no-improvement streak"] == f"{streak} of 3"
    fired = streak >= 3
    assert any("no improvement for" in w for w in ev.warnings) is fired
    assert ("iterate" in ev.reason_required) is fired


# ---------------------------------------------------------------- sprints


def _sprint(root: Path, rates, **config) -> Path:
    path = root / ".bkit/state/sprints/s1.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    conf = {"maxIterations": 5, "matchRateTarget": 100, "matchRateMinAcceptable": 90}
    conf.update(config)
    path.write_text(
        json.dumps(
            {
                "id": "s1",
                "config": conf,
                "phases": {
                    "iterate": {
                        "iterateHistory": [
                            {"iteration": i, "matchRate": r, "fixedTaskIds": [], "durationMs": None}
                            for i, r in enumerate(rates, 1)
                        ]
                    }
                },
            }
        )
    )
    return path


@pytest.mark.parametrize(
    "rates, outcome",
    [
        ((70, 75, 80, 85, 89.9), "iteration_exhausted"),  # just below the minimum at the limit
        ((70, 75, 80, 85, 90), "partial"),  # exactly at the minimum
        ((70, 75, 80, 85, 99.9), "partial"),  # just below the target
        ((70, 100), "success"),  # exactly at the target
        ((70, 75, 80, 85), None),  # one iteration left
    ],
)
def test_sprint_target_and_minimum_boundaries(tmp_path, rates, outcome):
    state = bkit.read_sprint(_sprint(tmp_path, rates), tmp_path)
    assert state.stop_rule.outcome == outcome


def test_sprint_configured_zero_minimum_is_kept(tmp_path):
    state = bkit.read_sprint(_sprint(tmp_path, (10, 20, 30, 40, 50), matchRateMinAcceptable=0), tmp_path)
    assert state.details["min_acceptable"] == 0 and state.stop_rule.outcome == "partial"
    state = bkit.read_sprint(_sprint(tmp_path, (10, 20, 30, 40, 50), matchRateMinAcceptable=50.5), tmp_path)
    assert state.stop_rule.outcome == "iteration_exhausted"


@pytest.mark.parametrize(
    "rates, fired",
    [
        ((80, 80, 80), False),  # 2 flat steps
        ((80, 80, 80, 80), True),  # 3 flat steps
        ((80, 79, 78, 77), True),  # falling counts as no improvement
        ((80, 80, 80, 81), False),
    ],
)
def test_sprint_no_improvement_boundary(tmp_path, rates, fired):
    state = bkit.read_sprint(_sprint(tmp_path, rates, maxIterations=10), tmp_path)
    assert (state.stop_rule.outcome == "no_improvement") is fired
    assert state.waiting_for_human is fired


@pytest.mark.parametrize(
    "rates, outcome",
    [
        ((80, 85, 88, 89, 89.9), "iteration_exhausted"),  # 5 iterations (the default limit), below 90
        ((80, 85, 88, 89, 90), "partial"),  # exactly the default minimum 90
        ((80, 85, 88, 99.9), None),  # below the default target 100, 1 iteration left
        ((80, 100), "success"),  # exactly the default target
    ],
)
def test_sprint_defaults_without_config(tmp_path, rates, outcome):
    path = tmp_path / ".bkit/state/sprints/s1.json"
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps(
            {
                "id": "s1",
                "iterateHistory": [
                    {"iteration": i, "matchRate": r, "fixedTaskIds": [], "durationMs": None}
                    for i, r in enumerate(rates, 1)
                ],
            }
        )
    )
    state = bkit.read_sprint(path, tmp_path)
    assert (state.details["target"], state.details["min_acceptable"], state.budget.limit) == (100, 90, 5)
    assert state.stop_rule.outcome == outcome
