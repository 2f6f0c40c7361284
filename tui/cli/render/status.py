"""Rich summaries of a feature and of a repository (`scars status`).

Every untrusted string goes through ``scars.core.sanitize`` and is rendered as a ``Text``
object, never as markup. Meaning is carried by words, not colour alone.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scars.core.model import GROUP_LABEL, GROUPS, Feature, FeatureSummary
from scars.core.samsara.decisions import describe_carried
from scars.core.samsara.layout import FAST_TRACK_SAID
from scars.core.samsara.reconcile import reconcile
from scars.core.samsara.rounds import BASIS_LABEL, series_by_basis, signal_series
from scars.core.samsara.status import reopened_json
from scars.core.sanitize import one_line
from scars.tui.cli.render import plain

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

MAX_ITEMS_PER_GROUP = 50
ITEM_INDENT = 6  # an item's meta, decision and note lines
TAG = {"known_shortcuts": "KS", "silent_failure_conditions": "SF", "unverified_assumptions": "UA"}
VERDICT_STYLE = {"gate": "bold yellow", "skip": "green", "unknown": "bold red"}


def _line(console: Any, *parts: tuple[str, str] | str) -> None:
    """One logical line, wrapped at the console's width (80 columns without a terminal): a
    parse failure's reason or an item's text is never cut."""
    if isinstance(console, _PlainBatch):
        console.add("".join(p[0] if isinstance(p, tuple) else p for p in parts))
        return
    from rich.text import Text  # lazy: with a console only (a plain report needs none)

    t = Text(overflow="fold")
    for p in parts:
        if isinstance(p, tuple):
            t.append(p[0], style=p[1])
        else:
            t.append(p)
    console.print(t, overflow="fold")


class _Batch:
    """The lines of a report gathered and printed in one ``Console.print``: each line is wrapped
    exactly as printed alone, but rich's per-print work (size, render, segments) is paid once
    instead of once per line (hundreds of lines: most of `scars status`'s time after start-up)."""

    def __init__(self, console: Console):
        self.console = console
        self.width = console.width
        self.lines: list[Text] = []

    def print(self, line: Text | None = None, overflow: str = "fold") -> None:
        from rich.text import Text

        self.lines.append(line if line is not None else Text())

    def flush(self) -> None:
        from rich.text import Text

        if self.lines:
            self.console.print(Text("\n", overflow="fold").join(self.lines), overflow="fold")
            self.lines = []


class _PlainBatch:
    """A _Batch for make_console's plain console (no terminal, no FORCE_COLOR), printing the
    same bytes without rich's console (:mod:`scars.tui.cli.render.plain`); styles are dropped
    as that console drops them."""

    width = plain.WIDTH

    def __init__(self, stream: Any):
        self.stream = stream
        self.lines: list[str] = []

    def print(self, line: None = None) -> None:
        self.lines.append("")

    def add(self, line: str) -> None:
        self.lines.append(line)

    def flush(self) -> None:
        if not self.lines:
            return
        text = plain.folded("\n".join(self.lines))
        if text is None:  # a tab: rich's own rules
            from rich.text import Text

            from scars.tui.cli.render.console import make_console

            make_console().print(Text("\n", overflow="fold").join(Text(ln) for ln in self.lines), overflow="fold")
        else:
            plain.write(self.stream, text)
        self.lines = []


def print_feature(
    feature: Feature, console: Console | None = None, decisions: dict | None = None, possible: bool = True
) -> None:
    """The summary of one feature; ``decisions``: the decisions in force (journal and carried).
    Its possible patterns come last, so that a cold read prints the rest while they are computed
    (``possible`` false: all but them, which :func:`print_possible_patterns` prints when ready)."""
    batch = _batch(console)
    try:
        _feature_lines(batch, feature, decisions or {})
        if possible:
            _possible_pattern_lines(batch, feature)
    finally:
        batch.flush()


def print_possible_patterns(feature: Feature, console: Console | None = None) -> None:
    """The last part of :func:`print_feature`: the feature's possible patterns (nothing without any)."""
    batch = _batch(console)
    try:
        _possible_pattern_lines(batch, feature)
    finally:
        batch.flush()


def _batch(console: Console | None) -> _Batch | _PlainBatch:
    if console is None and plain.wanted(sys.stdout):
        return _PlainBatch(sys.stdout)
    from scars.tui.cli.render.console import make_console

    return _Batch(console or make_console())


def _feature_lines(c: Any, feature: Feature, decisions: dict) -> None:
    w = min(c.width, 80) if c.width else 80
    _line(c, ("Feature ", "bold"), (one_line(feature.name, w - 8), "bold"))
    counts = feature.counts
    _line(
        c,
        ("signal_lost ", "bold"),
        (str(feature.signal_lost), "bold"),
        f"  = {counts.get('known_shortcuts', 0)} shortcuts"
        f" + {counts.get('silent_failure_conditions', 0)} silent failures"
        f" + {counts.get('unverified_assumptions', 0)} unverified assumptions",
    )
    reports = len(feature.reports)
    uncounted = sum(1 for it in feature.items if not it.counted)
    reg = feature.registry.state if feature.registry else "missing"
    _line(c, f"{reports} report(s); {len(feature.resolved)} item(s) resolved or verified; {uncounted} not counted")
    # Missing or unreadable: refs are unknown and still counted (formats.md §1.7); an
    # unreadable registry is also listed under the parse failures below.
    _line(c, f"systemic registry: {reg}" + ("" if reg == "present" else " — systemic_refs unknown, still counted"))
    if feature.entry:
        v = feature.entry.verdict
        _line(c, ("Entry: ", "bold"), (v.upper(), VERDICT_STYLE.get(v, "")))
        for chunk in _wrap(one_line(feature.entry.record), w - 2):
            _line(c, "  " + chunk)
    if feature.execution_mode:
        _line(c, f"Execution mode: {one_line(feature.execution_mode, 40)}")
    contract = feature.contract
    if contract is not None and (contract.primary_evaluator or contract.pass_signal or contract.fail_signal):
        _line(c, ("Evaluation Contract", "bold"), f" ({one_line(contract.file, 40)})")
        for label, value in (
            ("primary evaluator", contract.primary_evaluator),
            ("pass signal", contract.pass_signal),
            ("fail signal", contract.fail_signal),
        ):
            if value:
                for n, chunk in enumerate(_wrap(one_line(value, 600), w - 22)):
                    _line(c, f"  {label + ':' if n == 0 else '':19} {chunk}")
    decided = sum(1 for it in feature.items if it.id in decisions)
    carried = sum(1 for it in feature.items if getattr(decisions.get(it.id), "carried", False))
    _line(
        c,
        ("Decided ", "bold"),
        f"{decided} of {len(feature.items)}"
        + (f" ({carried} carried from earlier rounds of iteration-log.yaml)" if carried else ""),
    )

    by_id = {it.id: it for it in feature.items}
    for g in GROUPS:
        ids = feature.groups.get(g, ())
        c.print()
        _line(c, (f"{GROUP_LABEL[g]} ({len(ids)})", "bold underline"))
        if g == "cross_task_patterns" and feature.cross_task_patterns:
            for n, pat in enumerate(feature.cross_task_patterns, 1):
                _line(
                    c,
                    ("  pattern ", "dim"),
                    f"{n}: {len(pat)} items in {len({by_id[i].file for i in pat if i in by_id})} reports",
                )
        for i in ids[:MAX_ITEMS_PER_GROUP]:
            it = by_id[i]
            _item_line(c, it, w, decisions.get(i))
        if len(ids) > MAX_ITEMS_PER_GROUP:
            _line(c, ("  … ", "dim"), f"{len(ids) - MAX_ITEMS_PER_GROUP} more (scars status --json lists all)")

    if feature.parse_failures:
        c.print()
        _line(
            c, (f"Parse failures ({len(feature.parse_failures)}) — a failed report's items are not counted", "bold red")
        )
        for f in feature.parse_failures:
            _line(c, "  ✗ ", (one_line(f.where, 300), "bold"), " ", one_line(f.message, 300))
        uncounted_items = [it for it in feature.items if not it.counted]
        for it in uncounted_items[:MAX_ITEMS_PER_GROUP]:
            _item_line(c, it, w)
    if feature.dangling_refs:
        _line(
            c,
            ("Dangling systemic_refs: ", "bold red"),
            ", ".join(one_line(f"{f}: {i}", 300) for f, i in feature.dangling_refs),
        )
    if feature.warnings:
        c.print()
        _line(c, (f"Warnings ({len(feature.warnings)})", "bold"))
        for wmsg in map(str, feature.warnings[:20]):
            _line(c, "  ! ", one_line(wmsg, 300))
        if len(feature.warnings) > 20:
            _line(c, f"  … {len(feature.warnings) - 20} more")

    _print_log_matches(c, feature)

    reopened = reopened_json(feature)
    if reopened:
        c.print()
        _line(c, (f"Reopened by a watch ({len(reopened)}) — back to triage", "bold"))
        for r in reopened[:MAX_ITEMS_PER_GROUP]:
            _line(c, "  ↺ ", (one_line(r["item_id"], 20), "bold"), " ", one_line(r.get("cause") or "", 300))

    c.print()
    log = feature.iteration_log
    if log is None or not log.rounds:
        _line(c, ("Rounds: ", "bold"), "none yet")
    else:
        rec = reconcile(feature)
        by_basis = series_by_basis(signal_series(log, feature.signal_lost))
        for basis, points in by_basis.items():
            if points:
                trail = " → ".join(f"{p.value}" for p in points)
                _line(c, (f"signal_lost {BASIS_LABEL[basis]}: ", "bold"), trail)
        if rec.difference:
            for chunk in _wrap(one_line(rec.summary(), 4000), w - 2):
                _line(c, "  " + chunk)
        _line(c, ("Rounds ", "bold"), f"({len(log.rounds)} of max {log.max_rounds})")
        for rnd in log.rounds:
            before = "?" if rnd.signal_lost_before is None else str(rnd.signal_lost_before)
            after = "?" if rnd.signal_lost_after is None else str(rnd.signal_lost_after)
            _line(
                c,
                f"  round {rnd.round}: signal_lost {before} → {after}; fix {len(rnd.fix)}, "
                f"accept {len(rnd.accept)}, defer {len(rnd.defer)}; ",
                (one_line(rnd.decision or "no decision", 20), "bold"),
                (" — " + one_line(rnd.decision_reason, 2000)) if rnd.decision_reason else "",
            )


def _possible_pattern_lines(c: Any, feature: Feature) -> None:
    if not feature.possible_patterns:
        return
    c.print()
    _line(
        c,
        (
            f"Possible patterns ({len(feature.possible_patterns)}) — similar wording, not counted as cross-task",
            "bold",
        ),
    )
    for p in feature.possible_patterns[:10]:
        _line(c, f"  {len(p['ids'])} items, similarity {p['similarity']:.2f}: ", ", ".join(p["ids"][:4]))
        _line(c, ("    ", ""), (one_line(str(p.get("reason", "")), 300), "dim"))


def _wrap(text: str, width: int, hyphens: bool = True) -> list[str]:
    """``text`` in lines of at most ``width`` terminal cells (at least 20): a Chinese text (two cells
    a character) wraps by cells, as the terminal shows it, so a hanging indent holds. A text of
    one-cell characters wraps as textwrap does (its lines as they always were; ``hyphens`` False:
    never inside a hyphenated word, as an item's text that must read whole once unwrapped)."""
    # lazy: rich's cell widths and wrapping rules only (rich is the front end's, never core's)
    from rich._wrap import divide_line
    from rich.cells import cell_len

    width = max(width, 20)
    if cell_len(text) == len(text):
        import textwrap

        return textwrap.wrap(text, width=width, break_on_hyphens=hyphens) or [""]
    offsets = divide_line(text, width, fold=True)
    lines = [text[a:b].strip() for a, b in zip([0, *offsets], [*offsets, len(text)], strict=True)]
    return [ln for ln in lines if ln] or [""]


def _hanging(c: Any, head: list[tuple[str, str] | str], text: str, width: int, indent: int) -> None:
    """``head`` then ``text`` wrapped by cells to ``width``: its continuation lines start at
    column ``indent`` (a hanging indent), never at column 0."""
    from rich.cells import cell_len  # lazy: rich's cell widths only

    used = sum(cell_len(p[0] if isinstance(p, tuple) else p) for p in head)
    room = max(width - used, 20)
    first, *rest = _wrap(text, room, hyphens=False) if text else [""]
    _line(c, *head, first)
    remainder = " ".join(rest)
    for chunk in _wrap(remainder, width - indent, hyphens=False) if remainder else []:
        _line(c, " " * indent + chunk)


def _print_log_matches(c: Console, feature: Feature) -> None:
    """How the log's triaged descriptions were matched to items; the ones not taken listed."""
    matches = feature.log_matches
    if not matches:
        return
    c.print()
    by_conf: dict[str, int] = {}
    for m in matches:
        by_conf[m.confidence] = by_conf.get(m.confidence, 0) + 1
    taken = sum(1 for m in matches if m.confident)
    parts = ", ".join(f"{n} {k}" for k, n in sorted(by_conf.items(), key=lambda kv: CONFIDENCE_ORDER.index(kv[0])))
    _line(
        c,
        ("Iteration log ", "bold"),
        f"{taken} of {len(matches)} triaged descriptions matched to an item or resolved entry ({parts})",
    )
    shown = [m for m in matches if not m.confident]
    for m in shown[:MAX_ITEMS_PER_GROUP]:
        cand = ", ".join(f"{i} {sc:.2f}" for i, sc in m.candidates[:2])
        _line(
            c,
            f"  round {m.round} {m.action}: ",
            (m.confidence, "bold"),
            f" '{one_line(m.description)}'",  # whole and as written (wrapped, never cut or repr'd)
            (f" — {cand}" if cand else ""),
        )
    if len(shown) > MAX_ITEMS_PER_GROUP:
        _line(c, f"  … {len(shown) - MAX_ITEMS_PER_GROUP} more (scars status --json: log_matches)")


CONFIDENCE_ORDER = ("exact", "normalized", "similar", "weak", "ambiguous", "none")


def _item_line(c: Console, it, width: int, decision=None) -> None:
    flags = []
    if it.deferred:
        flags.append("deferred")
    if it.systemic_ref:
        flags.append(f"ref {it.systemic_ref}" + ("?" if it.registry_state != "found" else ""))
    if not it.counted:
        flags.append("NOT COUNTED")
    if it.status and it.status not in ("open",):
        flags.append(it.status)
    loc = it.file.rsplit("/", 1)[-1] + (f":{it.line}" if it.line else "")
    head: list[tuple[str, str] | str] = ["  ", (TAG[it.category], "bold"), " ", (it.id, "dim"), " "]
    start = 2 + len(TAG[it.category]) + 1 + len(it.id) + 1
    # Continuation lines hang under the text (under the meta line's indent when the id is long).
    _hanging(c, head, one_line(it.text, 2000), width, start if width - start >= 40 else ITEM_INDENT)
    # Caps only against hostile sizes: a task id, a location or a flag is never cut in practice.
    meta = f"      {one_line(it.task_id or '-', 200)} · {one_line(loc, 300)}"
    if flags:
        meta += " · " + one_line(", ".join(flags), 600)
    _line(c, (meta, "dim"))
    if decision is not None:
        _line(c, "      ", ("→ ", "bold"), one_line(_decision_words(decision), 300))
    for note in it.notes:
        _line(c, "      ! ", one_line(note, 300))


def _decision_words(d) -> str:
    """A decision as words: carried ones say where they come from."""
    if getattr(d, "carried", False):
        return describe_carried(d)
    action = getattr(d, "action", "?")
    by = getattr(d, "decided_by", "") or "?"
    if action == "accept" and getattr(d, "pending_review", False):
        return f"accept by {by}, waiting for a second person's sign-off"
    return f"{action} by {by}" + (f", signed off by {d.reviewed_by}" if getattr(d, "reviewed_by", None) else "")


# `scars status REPO`'s columns: header, justify, min_width. A feature's name is its id on the
# command line: never cut; one longer than the room the figures leave it (80 columns without a
# terminal) folds onto the next line. The figures' columns keep their headers whole, one space
# apart: upstream's 44-character names fit.
REPO_COLUMNS = [
    ("feature", "left", 0),
    ("signal_lost", "right", 11),
    ("entry", "left", 7),
    ("failures", "right", 8),
    ("rounds", "right", 6),
]


def print_repo(
    root: Path, features: list[FeatureSummary], fast_tracks: Sequence[Path] = (), console: Console | None = None
) -> None:
    """The repository's features, one line each, then the ``changes/`` directories that hold only
    fast-track artefacts, listed as what they are (never silently left out)."""
    if not features:
        batch = _batch(console)
        try:
            _line(batch, f"No feature directories under {one_line(str(root / 'changes'), 200)}")
            _fast_track_lines(batch, fast_tracks)
        finally:
            batch.flush()
        return
    _print_features(root, features, console)
    if fast_tracks:
        batch = _batch(console)
        try:
            _fast_track_lines(batch, fast_tracks)
        finally:
            batch.flush()


def _fast_track_lines(batch: Any, fast_tracks: Sequence[Path]) -> None:
    for p in fast_tracks:
        _line(batch, f"{one_line(p.name)}  {FAST_TRACK_SAID}")


def _print_features(root: Path, features: list[FeatureSummary], console: Console | None) -> None:
    rows = [
        (
            one_line(f.name),
            str(f.signal_lost),
            f.entry.verdict if f.entry else "unknown",
            str(len(f.parse_failures)),
            str(f.rounds),
        )
        for f in features
    ]
    if console is None and plain.wanted(sys.stdout):
        text = plain.table(REPO_COLUMNS, rows)
        if text is not None:  # else rich's own rules: a name that folds, a line break
            plain.write(sys.stdout, text)
            return
    from rich.table import Table
    from rich.text import Text

    from scars.tui.cli.render.console import make_console

    table = Table(box=None, show_edge=False, pad_edge=False, expand=False, padding=(0, 1, 0, 0))
    for header, justify, min_width in REPO_COLUMNS:
        if min_width:  # a figure: never wrapped
            table.add_column(header, justify=justify, no_wrap=True, min_width=min_width)  # type: ignore[arg-type]
        else:  # the name: folds when longer than its room
            table.add_column(header, overflow="fold")
    for (name, lost, verdict, failures, rounds), f in zip(rows, features, strict=True):
        table.add_row(
            Text(name),
            Text(lost),
            Text(verdict, style=VERDICT_STYLE.get(verdict, "")),
            Text(failures, style="bold red" if f.parse_failures else ""),
            Text(rounds),
        )
    (console or make_console()).print(table)
