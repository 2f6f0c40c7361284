"""`scars budget-context`, `scars advise` and `scars watch check` on features written to disk."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from scars.tui.cli.main import main

REPORT = textwrap.dedent(
    """\
    task_id: task-1
    completion_status: done_with_concerns
    known_shortcuts:
      - description: "Retry count is hard-coded to 3"
        deferred_to_feature_iteration: true
      - "CSV export skips empty rows"
    silent_failure_conditions:
      - "Timezone-naive timestamps compare as UTC"
    assumptions_made:
      - assumption: "Config file is UTF-8"
        verified: false
        note: "a Latin-1 file would fail"
    debt_registered: true
    debt_location: "src/export.py:40-88"
    """
)

LOG = textwrap.dedent(
    """\
    feature: "demo"
    signal_lost_initial: 6
    budget:
      max_rounds: 3
      reviewer_retry_limit: 2
    rounds:
      - round: 1
        signal_lost_before: 6
        budget_context:
          remaining_rounds_at_start: 2
          stagnation_count_at_start: 0
          net_rot_previous_round: 0
          strategy_hint: explore
        items_triaged: 6
        triage_result:
          fix: ["Old item"]
          accept: []
          defer: []
        fixes_applied: 1
        fixes_scar_count: 0
        signal_lost_after: 4
        decision: continue
        decision_reason: "user chose to continue"
    """
)


@pytest.fixture
def fdir(tmp_path: Path) -> Path:
    d = tmp_path / "repo" / "changes" / "2026-07-10_demo"
    (d / "scar-reports").mkdir(parents=True)
    (d / "scar-reports" / "task-1-scar.yaml").write_text(REPORT, encoding="utf-8")
    (d / "iteration-log.yaml").write_text(LOG, encoding="utf-8")
    (d / "index.yaml").write_text("feature: demo\nstatus: in_progress\ntasks: []\n", encoding="utf-8")
    return d


def run_json(capsys, *argv) -> dict:
    rc = main(list(argv))
    out = capsys.readouterr().out
    assert rc == 0, out
    return json.loads(out)


def test_budget_context_json(fdir, capsys):
    out = run_json(capsys, "budget-context", str(fdir), "--json")
    env = out["iteration_budget_context"]
    assert env == {
        "round": 2,
        "max_rounds": 3,
        "remaining_rounds": 1,
        "signal_lost_before": 4,
        "stagnation_count": 0,
        "net_rot_previous_round": -1,  # seed 002: 0 new - 1 resolved by the round's one fix
        "reviewer_retry_budget_remaining": 2,
        "expected_signal_reduction": ["known_shortcuts", "silent_failure_conditions", "unverified_assumptions"],
        "strategy_hint": "converge",
    }
    assert out["basis"]["strategy_rule"] == "one round remains"
    assert [v["id"] for v in out["valves"]] == [
        "max_rounds",
        "stagnation",
        "net_rot",
        "accept_ratio",
        "level1_wholesale",
        "same_files",
    ]
    assert next(v for v in out["valves"] if v["id"] == "max_rounds")["near"] is False


def test_budget_context_on_repository_root_lists_features(fdir, capsys):
    out = run_json(capsys, "budget-context", str(fdir.parent.parent), "--json")
    assert [f["feature"] for f in out["features"]] == ["2026-07-10_demo"]


def test_budget_context_table_names_every_field(fdir, capsys):
    assert main(["budget-context", str(fdir)]) == 0
    text = capsys.readouterr().out
    for key in ("round", "remaining_rounds", "strategy_hint", "expected_signal_reduction"):
        assert key in text
    assert "converge" in text and "one round remains" in text


def test_budget_context_missing_path_exits_2(tmp_path, capsys):
    assert main(["budget-context", str(tmp_path / "nope")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_advise_json_and_text(fdir, capsys):
    out = run_json(capsys, "advise", str(fdir), "--json")
    assert out["source"] == "samsara" and out["subject"] == "2026-07-10_demo"
    assert [p["quality"] for p in out["history"]] == [0.0, 0.3333]
    assert out["budget"] == {"max_iterations": 3, "current_iteration": 1, "remaining_iterations": 2}
    assert all(r["rule"] and r["figures"] for r in out["recommendations"])
    assert main(["advise", str(fdir)]) == 0
    text = capsys.readouterr().out
    assert "Recommended:" in text and "Advice only" in text


def test_advise_token_budget_both_or_neither(fdir, capsys):
    assert main(["advise", str(fdir), "--token-budget", "100"]) == 2
    assert "both" in capsys.readouterr().err
    out = run_json(capsys, "advise", str(fdir), "--json", "--token-budget", "100", "--tokens-used", "90")
    assert out["action"] == "ESCALATE"
    assert any(r["rule"] == "budget_matrix" and "(< 25%)" in r["message"] for r in out["recommendations"])


def test_hostile_text_is_inert_in_reports(tmp_path, capsys):
    d = tmp_path / "repo" / "changes" / "2026-07-10_evil"
    (d / "scar-reports").mkdir(parents=True)
    (d / "scar-reports" / "task-1-scar.yaml").write_text(
        'task_id: t\ncompletion_status: done\nknown_shortcuts:\n  - "[bold red]x[/] \\e]8;;http://evil\\a"\n'
        "silent_failure_conditions: []\nassumptions_made: []\ndebt_registered: true\ndebt_location: null\n",
        encoding="utf-8",
    )
    assert main(["budget-context", str(d)]) == 0
    assert main(["advise", str(d)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out


def test_commands_do_not_import_textual():
    code = (
        "import sys\nfrom scars.tui.cli.main import main\n"
        "import scars.tui.cli.commands.budget_context, scars.tui.cli.commands.advise\n"
        "print('textual' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_advise_over_a_tree_with_other_loops(upstream, capsys):
    out = run_json(capsys, "advise", str(upstream), "--json")
    by = {(a["source"], a["subject"]): a for a in out["advice"]}
    aris = by[("aris", "card-games-modeling/review-stage")]
    assert [p["quality"] for p in aris["history"]] == [0.5, 0.75, 0.85, 0.9]
    assert aris["action"] == "ACCEPT"  # review score 9/10 is past the 6/10 stop line: converged
    bkit = by[("bkit", "bkit-v1.5.7-comprehensive-test")]
    assert bkit["history"][0]["quality"] == 0.95 and bkit["budget"]["current_iteration"] == 6
    assert ("samsara", "2026-04-17_samsara-phase4-auto-iteration") in by
    assert {"kind": "loop-spec", "name": "gdd"}.items() <= out["skipped"][0].items()
