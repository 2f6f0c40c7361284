"""The gate contract (issue 13, points 1–3): one gate model whatever front end asks.

(a) the figures the app's round-gate modal shows are those `scars gate … --json` reports for
    the same state (round-continue, safety-valve, blocked-fix);
(b) every gate-id scars writes to auto-decisions.md is in the catalog, each seed-002 decision
    point has exactly one, and `scars log verify` succeeds on everything scars wrote — human
    and auto mode, from the CLI, the app (Pilot) and an answers file;
(c) the same decision taken through the CLI, the app and an answers file leaves the same
    iteration-log.yaml and auto-decisions.md (timestamps and decided_by normalised) and the
    same number of entries.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
import yaml
from rich.console import Console
from textual.widgets import RadioButton

from scars.core.formats.auto_decisions import parse_auto_decisions
from scars.core.gatekit.evidence import PROMPT_LABEL
from scars.core.loops.registry import DECISION_POINTS, point_of
from scars.core.loops.samsara.catalog import SEED_002_POINTS
from scars.tui.app.app import ScarsApp
from scars.tui.cli import main as cli
from tests.factories import (
    ACCEPT,
    clean_env,
    item_id,
    report,
    resolve_in_report,
    wait_settled,
    wait_until,
    write_feature,
)

USER = "alice"
SIZE = (120, 40)
REASON = "the vendor API is not reachable from CI; the rest is accepted or deferred with owners"
DEFER_REASON = "needs the scheduler rework"

PRE_THINKING = "# Pre-thinking\n\nExecution mode: {mode}\n\n## Evaluation Contract\n\n**Primary evaluator:** pytest\n"

BLOCKED_REPORT = (
    "task_id: task-3\ncompletion_status: blocked\nknown_shortcuts:\n"
    '  - description: "Vendor API rate limit unknown"\n'
    "silent_failure_conditions: []\nassumptions_made: []\ndebt_registered: true\n"
    'debt_location: "src/vendor.py:1"\nnarrative: "NEEDS_CONTEXT: the vendor sandbox credentials"\n'
)


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_env(monkeypatch, USER)


def feature(root: Path, *, auto: bool) -> Path:
    """Five counted items (a cross-task pattern, one fix the implementer reported blocked)."""
    root.mkdir(parents=True, exist_ok=True)
    f = write_feature(
        root,
        {
            "task-1-scar.yaml": report(
                "task-1",
                ks=['description: "Retry count is hard-coded to 3"', 'description: "Shared cache key"'],
                sf=['"Timezone-naive timestamps compare as UTC"'],
            ),
            "task-2-scar.yaml": report("task-2", ks=['description: "Shared cache key"']),
        },
        files={
            "index.yaml": "feature: demo\ntasks:\n  - id: task-1\n    status: done\n",
            "pre-thinking.md": PRE_THINKING.format(mode="auto" if auto else "human-in-the-loop"),
        },
    )
    (f / "scar-reports" / "task-3-scar.yaml").write_text(BLOCKED_REPORT, encoding="utf-8")
    return f


def ids(f: Path) -> dict[str, str]:
    return {
        "retry": item_id(f, "Retry count is hard-coded to 3"),
        "vendor": item_id(f, "Vendor API rate limit unknown", "task-3"),
        "cache1": item_id(f, "Shared cache key", "task-1"),
        "cache2": item_id(f, "Shared cache key", "task-2"),
        "tz": item_id(f, "Timezone-naive timestamps compare as UTC"),
    }


def scars(*argv: str, capsys=None) -> tuple[int, str]:
    if capsys is not None:
        capsys.readouterr()  # only this command's output
    code = cli.main([str(a) for a in argv])
    out = capsys.readouterr().out if capsys is not None else ""
    return code, out


def entries(f: Path) -> list:
    p = f / "auto-decisions.md"
    return parse_auto_decisions(p.read_text(encoding="utf-8")) if p.is_file() else []


def normalised(f: Path) -> dict[str, str | None]:
    """The two logs with timestamps and the deciding user replaced by placeholders."""
    out: dict[str, str | None] = {}
    for name in ("iteration-log.yaml", "auto-decisions.md"):
        p = f / name
        if not p.is_file():
            out[name] = None
            continue
        text = p.read_text(encoding="utf-8")
        text = re.sub(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})", "<time>", text)
        # Where each answer came from differs by front end (scars.core.provenance): compared apart.
        text = re.sub(r"(?m)^    (start_)?provenance:\n(      .*\n)+", "", text)
        text = re.sub(r" gate \([a-z-]+, (at a terminal|no terminal)[^)\"]*\)", " gate", text)
        out[name] = text.replace(USER, "<user>")
    return out


def aio(coro):
    return asyncio.run(coro)


def plain(renderable) -> str:
    console = Console(width=400, color_system=None, record=True)
    with console.capture() as cap:
        console.print(renderable)
    return cap.get()


# ----------------------------------------------------------------------------- the three front ends


def via_cli(f: Path, capsys) -> None:
    i = ids(f)
    assert scars("round", "start", "--feature", f)[0] == 0
    assert scars("decide", i["retry"], "--fix", "--feature", f)[0] == 0
    assert scars("decide", i["vendor"], "--fix", "--feature", f)[0] == 0
    for c in ("cache1", "cache2"):
        sig, own, rat = ACCEPT["re_review_signal"], ACCEPT["owner"], ACCEPT["rationale"]
        code = scars("decide", i[c], "--accept", "--signal", sig, "--owner", own, "--rationale", rat, "--feature", f)[0]
        assert code == 0
    assert scars("decide", i["tz"], "--defer", "--reason", DEFER_REASON, "--feature", f)[0] == 0
    code = scars("gate", "blocked-fix", f, "--item", i["vendor"], "--answer", "defer", "--reason", REASON)[0]
    assert code == 0
    assert scars("gate", "round-continue", f, "--answer", "stop", "--reason", REASON)[0] == 0
    capsys.readouterr()


def via_answers_file(f: Path, tmp: Path, capsys) -> None:
    i = ids(f)
    answers = {
        i["retry"]: "fix",
        i["vendor"]: "fix",
        i["cache1"]: {"action": "accept", **ACCEPT},
        i["cache2"]: {"action": "accept", **ACCEPT},
        i["tz"]: {"action": "defer", "reason": DEFER_REASON},
        "blocked-fix": {"answer": "defer", "item": i["vendor"], "reason": REASON},
        "round-continue": {"answer": "stop", "reason": REASON},
    }
    p = tmp / "answers.yaml"
    p.write_text(yaml.safe_dump(answers, allow_unicode=True, sort_keys=False), encoding="utf-8")
    assert scars("round", "start", "--feature", f)[0] == 0
    assert scars("gate", "round-continue", f, "--answers", p)[0] == 0
    capsys.readouterr()


def via_app(f: Path) -> None:
    i = ids(f)

    async def run() -> None:
        app = ScarsApp(f, user=USER)
        async with app.run_test(size=SIZE) as pilot:
            await app.wait_loaded()
            b = app.backend
            assert b is not None
            b.decide(i["retry"], "fix")
            b.decide(i["vendor"], "fix")
            b.decide(i["cache1"], "accept", **ACCEPT)
            b.decide(i["cache2"], "accept", **ACCEPT)
            b.decide(i["tz"], "defer", reason=DEFER_REASON)
            app.reload()
            await pilot.press("g")
            await wait_until(pilot, lambda: type(app.screen).__name__ == "RoundGate", "the round gate")
            gate = app.screen
            gate.query_one("#blocked-0").query(RadioButton).last().value = True  # (B) reclassify as defer
            gate.query_one("#gate-reason").value = REASON
            await pilot.click("#gate-stop")
            await wait_until(
                pilot,
                lambda: "decision: stop" in (f / "iteration-log.yaml").read_text(encoding="utf-8"),
                "the round recorded",
            )

    aio(run())


def all_front_ends(tmp_path: Path, capsys, *, auto: bool) -> dict[str, Path]:
    mode = "auto" if auto else "human"
    out = {}
    f = feature(tmp_path / f"cli-{mode}", auto=auto)
    via_cli(f, capsys)
    out["cli"] = f
    f = feature(tmp_path / f"app-{mode}", auto=auto)
    via_app(f)
    out["app"] = f
    f = feature(tmp_path / f"answers-{mode}", auto=auto)
    via_answers_file(f, tmp_path / f"answers-{mode}", capsys)
    out["answers file"] = f
    return out


# ----------------------------------------------------------------------------- (c) and (b)


@pytest.mark.parametrize("auto", [False, True], ids=["human", "auto"])
def test_the_same_decision_leaves_the_same_logs_through_every_front_end(tmp_path, capsys, auto):
    made = all_front_ends(tmp_path, capsys, auto=auto)
    logs = {name: normalised(f) for name, f in made.items()}
    counts = {name: len(entries(f)) for name, f in made.items()}
    assert logs["app"] == logs["cli"], "the app and the CLI wrote different logs"
    assert logs["answers file"] == logs["cli"], "the answers file and the CLI wrote different logs"
    # auto mode: one entry per decision point (triage, blocked-fix, round continuation); human: none
    assert counts == dict.fromkeys(made, 3 if auto else 0)
    round_ = yaml.safe_load((made["cli"] / "iteration-log.yaml").read_text(encoding="utf-8"))["rounds"][-1]
    # The blocked fix went to defer; the other fix decision's item is still listed: not applied yet.
    assert (round_["decision"], round_["fixes_applied"]) == ("stop", 0)


@pytest.mark.parametrize("auto", [False, True], ids=["human", "auto"])
def test_log_verify_succeeds_on_everything_scars_wrote(tmp_path, capsys, auto, monkeypatch):
    # A person at a terminal gives the CLI's and the answers file's answers (else, in human mode,
    # `log verify` says nothing shows a person made them: test_provenance.py).
    monkeypatch.setattr("scars.tui.cli.commands._feature.attended", lambda: True)
    monkeypatch.setattr("scars.tui.cli.commands.gate.attended", lambda: True)
    made = all_front_ends(tmp_path, capsys, auto=auto)
    for name, f in made.items():
        code, out = scars("log", "verify", f, "--json", capsys=capsys)
        assert code == 0, f"{name}: {out}"
        for e in entries(f):
            assert point_of(e.gate_id) is not None, f"{name}: {e.gate_id!r} is not in the catalog"


@pytest.mark.parametrize("agent", [False, True], ids=["person", "agent"])
def test_every_front_end_keeps_the_provenance_the_one_core_function_built(tmp_path, capsys, monkeypatch, agent):
    """The app, the CLI and the answers file record through scars.core.provenance.provenance: every
    decision and gate answer of their journals holds its provenance, with each front end's
    channel, and the agent session (auto mode: the agent is the loop's gatekeeper) the same."""
    if agent:
        monkeypatch.setenv("CLAUDECODE", "1")
        monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "s-42")
    made = all_front_ends(tmp_path, capsys, auto=True)
    want = {"cli": {"flag"}, "app": {"app"}, "answers file": {"answers-file"}}
    for name, f in made.items():
        from scars.core.storage.journal import journal_path, read_journal

        records = read_journal(journal_path(f)).records
        decided = [r for r in records if r["type"] not in ("round_start",)]
        assert decided and all("provenance" in r for r in decided), name
        assert {r["provenance"]["channel"] for r in decided} == want[name], name
        assert {r["provenance"].get("agent") for r in decided} == {"claude-code" if agent else None}, name
        assert {r["by"] for r in decided} == {USER}, name  # auto mode: the gatekeeper's answer, as given


def test_every_other_writer_uses_catalog_ids_and_verifies(tmp_path, capsys):
    """The entry gate, `scars round close`, `scars decide --blocked` and a fired watch."""
    f = feature(tmp_path / "repo", auto=True)
    i = ids(f)
    assert scars("gate", "entry", f, "--answer", "enter")[0] == 0
    assert scars("round", "start", "--feature", f)[0] == 0
    assert scars("decide", i["vendor"], "--fix", "--feature", f)[0] == 0
    watch = ["--watch", "path-changed: src/cache.py"]
    sig, own, rat = ACCEPT["re_review_signal"], ACCEPT["owner"], ACCEPT["rationale"]
    acc = ["--accept", "--signal", sig, "--owner", own, "--rationale", rat, *watch, "--feature", f]
    assert scars("decide", i["cache1"], *acc)[0] == 0
    code = scars("decide", i["vendor"], "--blocked", "retry", "--reason", "credentials arrive today", "--feature", f)
    assert code[0] == 0
    assert (
        scars("round", "close", "--decision", "continue", "--reason", "the retry lands next round", "--feature", f)[0]
        == 0
    )
    (f.parents[1] / "src").mkdir(exist_ok=True)
    (f.parents[1] / "src" / "cache.py").write_text("x = 1\n", encoding="utf-8")
    scars("watch", "check", f)
    capsys.readouterr()
    written = [e.gate_id for e in entries(f)]
    assert written == ["entry", "triage", "blocked-fix", "round-continuation"] + (
        ["watch-reopen"] if "watch-reopen" in written else []
    )
    assert all(point_of(g) is not None for g in written)
    code, out = scars("log", "verify", f, "--json", capsys=capsys)
    assert code == 0, out


def test_each_seed_002_decision_point_has_exactly_one_id():
    # seed 002 "Auto Mode Gate": triage, blocked-fix, round continuation, safety valve
    assert set(SEED_002_POINTS) == {"triage", "blocked-fix", "round continuation", "safety valve"}
    assert SEED_002_POINTS["round continuation"] == "round-continuation"  # formats.md §1.6's example
    ids_ = list(SEED_002_POINTS.values())
    assert len(set(ids_)) == len(ids_)
    assert all(i in DECISION_POINTS for i in ids_)


# ----------------------------------------------------------------------------- (a)


def cli_evidence(gate: str, f: Path, capsys, *extra: str) -> dict:
    code, out = scars("gate", gate, f, "--json", *extra, capsys=capsys)
    assert code == 3, out  # no terminal and no answer: the evidence, and the command that answers
    return json.loads(out)["evidence"]


def modal_text(app: ScarsApp, pilot_query: str) -> str:
    return plain(app.screen.query_one(pilot_query).render())


def app_gate(f: Path, check) -> None:
    async def run() -> None:
        app = ScarsApp(f, user=USER)
        async with app.run_test(size=SIZE) as pilot:
            await app.wait_loaded()
            await pilot.press("g")
            await wait_until(pilot, lambda: type(app.screen).__name__ == "RoundGate", "the round gate")
            await wait_settled(pilot, "the round gate laid out")
            check(app)

    aio(run())


def _decide(f: Path, *pairs: tuple[str, str]) -> None:
    assert scars("round", "start", "--feature", f)[0] == 0
    for item, action in pairs:
        extra = ["--reason", DEFER_REASON] if action == "defer" else []
        assert scars("decide", item, f"--{action}", *extra, "--feature", f)[0] == 0


def test_the_round_gate_modal_shows_the_cli_figures(tmp_path, capsys):
    f = feature(tmp_path / "repo", auto=False)
    i = ids(f)
    _decide(f, (i["retry"], "fix"), (i["vendor"], "fix"), (i["tz"], "defer"))
    resolve_in_report(f, "Retry count is hard-coded to 3")  # one of the two fixes landed
    ev = cli_evidence("round-continue", f, capsys)
    facts = ev["facts"]
    assert (facts["round"], facts["fixed"], facts["fix_open"], facts["deferred"]) == (1, 1, 1, 1)

    def check(app: ScarsApp) -> None:
        title = modal_text(app, "#gate-title")
        assert ev["headline"] == (
            f"Round {facts['round']} done. signal_lost {facts['signal_lost_before']} → "
            f"{facts['signal_lost_after']}. Fixed {facts['fixed']} (1 fix decided, not applied yet), "
            f"{facts['remaining']} remaining."
        )
        assert title.strip() == ev["headline"]
        shown = modal_text(app, "#gate-figures")
        for label, value in ev["figures"]:
            assert f"{label}: {value}" in shown

    app_gate(f, check)


def test_an_open_round_with_nothing_decided_reads_the_same_in_the_app_and_the_cli(tmp_path, capsys):
    """The round gate's headline and warnings are core's (``round_headline``): the app's modal, the
    terminal's `scars gate` and `--json` say the same, and none calls an untouched round done."""
    from scars.core import gates
    from scars.tui.cli.render.gate_prompts import render_evidence

    f = feature(tmp_path / "repo", auto=False)
    assert scars("round", "start", "--feature", f)[0] == 0
    ev = cli_evidence("round-continue", f, capsys)
    assert ev["headline"].startswith("Round 1 is open and nothing was decided in it yet.")
    console = Console(width=400, color_system=None, record=True)
    with console.capture() as cap:
        render_evidence(console, gates.gather("round-continue", f))
    terminal = cap.get()
    assert ev["headline"] in terminal and " done" not in terminal
    # The loop's own prompt ("Round 1 完成", done) is kept verbatim, introduced as the loop's words
    # (not scars' reading, which is the headline above it).
    lines = [line.rstrip() for line in terminal.splitlines()]
    assert lines[lines.index(PROMPT_LABEL) + 1] == ev["workflow_prompt"].splitlines()[0]

    def check(app: ScarsApp) -> None:
        assert modal_text(app, "#gate-title").strip() == ev["headline"]
        assert ev["warnings"][0] in " ".join(modal_text(app, "#gate-warnings").split())

    app_gate(f, check)


def test_the_safety_valve_modal_shows_the_cli_figures_and_warnings(tmp_path, capsys):
    f = feature(tmp_path / "repo", auto=False)
    assert scars("round", "start", "--feature", f)[0] == 0
    assert (
        scars("round", "close", "--decision", "continue", "--reason", "one more look at the cache", "--feature", f)[0]
        == 0
    )
    _decide(f)
    ev = cli_evidence("safety-valve", f, capsys)
    assert ev["facts"]["valves"] == ["stagnation"]

    def check(app: ScarsApp) -> None:
        shown = modal_text(app, "#gate-figures")
        for label, value in ev["figures"]:
            assert f"{label}: {value}" in shown
        warnings = modal_text(app, "#gate-warnings")
        for w in ev["warnings"]:
            assert w in " ".join(warnings.split()).replace("  ", " ") or w in warnings

    app_gate(f, check)


def test_the_blocked_fix_in_the_modal_shows_the_cli_figures(tmp_path, capsys):
    f = feature(tmp_path / "repo", auto=False)
    i = ids(f)
    _decide(f, (i["vendor"], "fix"))
    ev = cli_evidence("blocked-fix", f, capsys, "--item", i["vendor"])
    assert ev["facts"]["item"] == i["vendor"]

    def check(app: ScarsApp) -> None:
        shown = modal_text(app, "#blocked-figures-0")
        for label, value in ev["figures"]:
            assert f"{label}: {value}" in shown

    app_gate(f, check)
