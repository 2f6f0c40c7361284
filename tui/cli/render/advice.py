"""Rich reports of `scars budget-context`, `scars advise` and `scars watch check`.

Every string that comes from input files goes through ``scars.core.sanitize`` and is shown
as a ``Text`` (never markup). States are words (ACTIVE, near, FIRED, unobservable), never
colour alone.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from scars.core.sanitize import one_line
from scars.tui.cli.render.console import make_console


def _t(text: Any, style: str = "") -> Text:
    return Text(one_line(str(text), 400), style=style, no_wrap=False)


def _line(c: Console, *parts: tuple[str, str] | str) -> None:
    t = Text()
    for p in parts:
        if isinstance(p, tuple):
            t.append(p[0], style=p[1])
        else:
            t.append(p)
    c.print(t)


def print_budget(o: dict[str, Any], console: Console | None = None) -> None:
    c = console or make_console()
    env = o["iteration_budget_context"]
    _line(c, ("Feature ", "bold"), (one_line(o["feature"], 70), "bold"))
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column("field", style="bold")
    table.add_column("value")
    for key, value in env.items():
        if isinstance(value, list):
            value = ", ".join(value) if value else "(none)"
        table.add_row(key, _t(value))
    c.print(table)
    basis = o.get("basis") or {}
    if basis.get("strategy_rule"):
        _line(c, "strategy_hint rule: ", basis["strategy_rule"])
    if basis.get("last_round_decision") in ("stop", "forced_stop"):
        _line(
            c,
            f"note: the last round ended with decision {basis['last_round_decision']}; "
            "the envelope is for a round after it",
        )
    if basis.get("iteration_log") is None:
        _line(c, "no iteration-log.yaml: round 1, defaults max_rounds 3, reviewer_retry_limit 2")
    _print_valves(c, o.get("valves") or [])


def _print_valves(c: Console, valves: list[dict[str, Any]]) -> None:
    shown = [v for v in valves if v["active"] or v.get("near")]
    if not shown:
        _line(c, "Safety valves and watch-fors: none active")
        return
    _line(c, ("Safety valves and watch-fors:", "bold"))
    for v in shown:
        state = "ACTIVE" if v["active"] else "near"
        kind = "valve" if v["kind"] == "safety_valve" else "watch-for"
        _line(
            c,
            "  ",
            (f"{state:<6}", "bold red" if v["active"] else "yellow"),
            f" {kind} {v['id']}: ",
            one_line(v["message"], 300),
        )


def print_advice(a: dict[str, Any], console: Console | None = None) -> None:
    c = console or make_console()
    _line(c, ("Advice for ", "bold"), (one_line(a["subject"] or a["source"], 60), "bold"), f" ({a['source']})")
    _line(
        c,
        ("Recommended: ", "bold"),
        (a["action"], "bold"),
        f"  (gate: {a['gate_choice']})",
        f"  strategy: {a['strategy']}" if a.get("strategy") else "",
    )
    b = a["budget"]
    extra = ""
    if "token_share_left" in b:
        extra = f"; tokens left {b['token_share_left']:.0%}"
    _line(
        c,
        f"Iterations: {b['current_iteration']} of {b['max_iterations']} done, {b['remaining_iterations']} left{extra}",
    )
    t = a["trend"]
    pred = t.get("predicted_convergence_iteration")
    _line(
        c,
        f"Trend: {t['direction']} (slope {t['slope']:+.3f}), latest quality {t['latest_quality']:.2f} "
        f"of target {t['target']:.2f}"
        + (", plateau" if t.get("is_plateauing") else "")
        + (
            ", target reached"
            if t["latest_quality"] >= t["target"]
            else (f", converges ~ iteration {pred}" if pred is not None else ", no convergence predicted")
        ),
    )
    if a.get("fixability") is not None:
        _line(c, f"Fixability: {a['fixability']:.0%}")
    table = Table(show_header=True, box=None, pad_edge=False, header_style="bold")
    table.add_column("action")
    table.add_column("rule")
    table.add_column("why", overflow="fold")
    for r in a["recommendations"]:
        table.add_row(r["action"], r["rule"], _t(r["message"]))
    c.print(table)
    active = [f for f in a["failure_modes"] if f["active"]]
    off = [f["name"] for f in a["failure_modes"] if not f["evaluated"]]
    if active:
        _line(c, ("Failure modes:", "bold"))
        for f in active:
            _line(c, "  ", ("ACTIVE", "bold red"), f" {f['name']}: ", one_line(f["message"], 300))
    else:
        _line(c, "Failure modes: none active")
    if off:
        _line(c, "Not evaluated (history too short or no token budget): " + ", ".join(off))
    for note in a.get("notes") or ():
        c.print(Text("Note: " + one_line(note, 2000)), overflow="fold")
    _line(c, "Advice only: the gate's decision is yours.")


STATE_WORD = {"fired": "FIRED", "quiet": "quiet", "unobservable": "UNOBSERVABLE"}
STATE_STYLE = {"fired": "bold red", "quiet": "", "unobservable": "bold yellow"}


def print_watch_results(feature_name: str, results: list[dict[str, Any]], console: Console | None = None) -> None:
    c = console or make_console()
    _line(c, ("Watches of ", "bold"), (one_line(feature_name, 60), "bold"))
    if not results:
        _line(c, "  no accepted item carries a watch")
        return
    for r in results:
        _line(
            c,
            "  ",
            (f"{STATE_WORD[r['state']]:<12}", STATE_STYLE[r["state"]]),
            " ",
            one_line(r.get("item_id") or "(item not found)", 20),
            "  ",
            one_line(r["watch"], 60),
        )
        _line(c, "    ", one_line(r.get("text") or "", 100))
        _line(c, "    ", one_line(r["cause"], 200))
        if r.get("reopened"):
            _line(c, "    ", ("reopened", "bold"), ": ", one_line(r["reopened"], 200))
    counts = {s: sum(1 for r in results if r["state"] == s) for s in STATE_WORD}
    _line(c, f"  {counts['fired']} fired, {counts['quiet']} quiet, {counts['unobservable']} unobservable")
