"""Round arithmetic of samsara's iteration: budget context, safety valves and watch-fors.

Pure functions over what is on disk — an :class:`~scars.core.model.IterationLog` (its rounds),
the current ``signal_lost`` and, where given, the current decisions — so every figure of the
``iteration_budget_context`` envelope (formats.md §1.4) is computed, never a placeholder.

Definitions (docs/advice.md repeats them):

* A round is *done* when it carries a ``decision`` (continue / stop / forced_stop /
  interrupted); the last round without one is the *open* round (in progress).
* ``round`` of the next dispatch: the open round's number, else the last done round + 1,
  else 1 when there is no log or no round.
* ``remaining_rounds = max(0, max_rounds - round)`` (max_rounds from ``budget.max_rounds``,
  default 3).
* A done round is *flat* when ``signal_lost_after >= signal_lost_before``. When the latest
  done round has no ``signal_lost_after`` (an interrupted round) the current ``signal_lost``
  stands in for it. ``stagnation_count`` = the number of consecutive flat rounds counted back
  from the latest done round; a round whose before/after is unknown ends the count (unknown is
  not evidence of stagnation).
* Net rot of a round (seed 002, formats.md §1.4): ``new = fixes_scar_count`` (new scar items
  the round's fixes produced), ``resolved = fixes_applied`` (the items its fixes resolved: they
  left the remaining set through a fix; without ``fixes_applied`` the length of the fix list),
  ``net_rot = new - resolved``. Accepts and defers resolve nothing, so it is *not*
  ``signal_lost_after - signal_lost_before`` (a loop that stops counting its accepted items
  lowers signal_lost without resolving anything). A missing ``fixes_scar_count`` counts as 0
  new items and makes the figure unknown (the valve does not fire on it).
  ``net_rot_previous_round`` is the net rot of the latest done round (0 before any round).
* ``reviewer_retry_budget_remaining = max(0, reviewer_retry_limit - retries spent in the open
  round)`` (``budget_spent.reviewer_retries`` or ``reviewer_retries_consumed``); it is the full
  limit (default 2) when no round is open. The budget is *low* when it is 0, or when at least
  one retry was spent and at most half the limit (rounded down) remains.
* ``expected_signal_reduction``: the categories of the items decided ``fix`` (when decisions
  are given and some are fixes), else of every remaining counted item; ordered by item count,
  highest first, ties in the order known_shortcuts, silent_failure_conditions,
  unverified_assumptions.
* ``strategy_hint``, first rule that holds:
  1. ``minimal_fix`` — a safety valve is active or near: ``remaining_rounds == 0`` (this is the
     last allowed round, or beyond), ``stagnation_count >= 2``, ``net_rot_previous_round > 0``,
     or the reviewer retry budget is low;
  2. ``converge`` — ``signal_lost`` is flat (``stagnation_count >= 1``) or one round remains
     (``remaining_rounds == 1``);
  3. ``explore`` — otherwise (two or more rounds left, ``signal_lost`` fell in the previous
     round or no round has run, no valve).

Safety valves (advisory; gates decide), evaluated after the latest done round:

* ``max_rounds``: active when the done rounds reach ``max_rounds`` (forced stop, remaining
  items listed); near when the next round is the last allowed one.
* ``stagnation``: active when ``stagnation_count >= 2``; near when it is 1.
* ``net_rot``: active when the latest done round's ``new > resolved``.

Watch-fors (red flags, not stops), over the current decisions when given, else over the
latest round's ``triage_result`` in the log:

* ``accept_ratio``: accepts / triaged > 80 % (exactly 80 % does not fire) with zero fixes; a fix
  counts pending or applied (a fix decision whose item left the remaining set is a fix that landed).
* ``level1_wholesale``: two or more Level-1 deferred items remain and every one of them is
  accepted.
* ``same_files``: two or more fix items name the same file, read from every location a report
  gives, each said with its basis: the item's own ``where`` (Gen 3, :func:`files_of`), a path
  named in the item's text (``what`` / ``description`` / ``bites_when``, or a log description
  matched to no item), and its report's ``debt_location`` (the report's location, shared by
  every item of that report); :func:`files_in_text` reads the last two. An item that names a
  file in several ways counts once, with its strongest basis (where, then text, then
  debt_location).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from scars.core.model import CATEGORIES, Feature, IterationLog, Round, ScarItem, ScarReport
from scars.core.records import field, record, replace
from scars.core.sanitize import one_line
from scars.core.text import normalize

DEFAULT_MAX_ROUNDS = 3
DEFAULT_REVIEWER_RETRY_LIMIT = 2
STAGNATION_ROUNDS = 2  # signal_lost flat this many consecutive rounds -> valve
ACCEPT_RATIO_LIMIT = 0.8  # accept ratio strictly above this, with zero fixes -> watch-for
LEVEL1_WHOLESALE_MIN = 2  # at least this many Level-1 deferred items, all accepted

STRATEGY_HINTS = ("explore", "converge", "minimal_fix")
VALVE_IDS = ("max_rounds", "stagnation", "net_rot", "accept_ratio", "level1_wholesale", "same_files")


@record(slots=True)
class Valve:
    """A safety valve or watch-for, evaluated with the figures it used.

    ``active`` is True when it fires; ``near`` when one more step would fire it (only the
    round-based valves have a "near"). Valves advise; gates decide.
    """

    kind: Literal["safety_valve", "watch_for"]
    id: str
    message: str
    figures: dict[str, Any] = field(default_factory=dict)
    active: bool = False
    near: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "id": self.id,
            "active": self.active,
            "near": self.near,
            "message": self.message,
            "figures": dict(self.figures),
        }


# ----------------------------------------------------------------------------- rounds


def _is_done(r: Round) -> bool:
    return r.decision is not None and str(r.decision).strip() != ""


def split_rounds(log: IterationLog | None) -> tuple[list[Round], Round | None]:
    """(done rounds in order, the open round or None). Rounds are ordered by number."""
    if log is None:
        return [], None
    rounds = sorted(log.rounds, key=lambda r: r.round)
    done = [r for r in rounds if _is_done(r)]
    open_round = None
    if rounds and not _is_done(rounds[-1]):
        open_round = rounds[-1]
    return done, open_round


def rounds_done(log: IterationLog | None) -> int:
    """Rounds used of ``max_rounds``: the number of the latest done round (0 before any)."""
    done, _ = split_rounds(log)
    return max((r.round for r in done), default=0)


def next_round_number(log: IterationLog | None) -> int:
    done, open_round = split_rounds(log)
    if open_round is not None:
        return open_round.round
    if done:
        return max(r.round for r in done) + 1
    return 1


Basis = Literal["recorded", "recounted"]
BASIS_LABEL: dict[str, str] = {
    "recorded": "recorded by the loop (iteration-log.yaml)",
    "recounted": "recounted by scars (seed 002 Step 1 rules)",
}
# The basis said in a line of figures (the final transition, `scars loops`' trend).
BASIS_SHORT: dict[str, str] = {"recorded": "recorded by the loop", "recounted": "recounted by scars"}
# The key scars writes into every round it closes: its signal_lost figures are scars' recount.
COUNTED_BY_KEY = "counted_by"
COUNTED_BY_SCARS = "scars"


def counted_by_scars(r: Round) -> bool:
    """The round was closed by scars: its ``signal_lost_before`` / ``after`` are scars' recount
    by the seed's rules, not figures the loop recorded by its own count."""
    return isinstance(r.raw, Mapping) and r.raw.get(COUNTED_BY_KEY) == COUNTED_BY_SCARS


@record(slots=True)
class SignalPoint:
    """One point of a feature's signal_lost series (:func:`signal_series`)."""

    label: str  # "start", "round N" or "now"
    value: int
    round: int | None = None  # the done round whose result this is (None for start and now)
    source: str = ""  # where the value was read: the field, or "current signal_lost"
    decision: str | None = None  # the round's decision (round points only)
    basis: Basis = "recorded"  # recorded by the loop, or recounted by scars (the "now" point, scars' rounds)


def signal_series(log: IterationLog | None, signal_now: int) -> list[SignalPoint]:
    """signal_lost across the iteration: THE series of a feature.

    The app's header and trends screen, ``scars loops``, the advisor and the gates all read it
    from here (formats.md §1.4–1.5: N₀ → … → N_final):

    * **start** — ``signal_lost_initial`` (the value at iteration entry), else the first done
      round's ``signal_lost_before``; no start point when neither is recorded.
    * **one point per done round**, in round order — its ``signal_lost_after``; when that is
      missing, the next round's ``signal_lost_before`` (what the round handed on); for the
      latest done round the current signal_lost (as the stagnation count reads an interrupted
      round); otherwise the round has no point (an unknown value is not invented).
    * **now** — the current signal_lost, when there is no point yet or it differs from the last.
    """
    done, _ = split_rounds(log)
    points: list[SignalPoint] = []
    first: Basis = "recounted" if done and counted_by_scars(done[0]) else "recorded"
    if first == "recounted" and log is not None and log.signal_lost_initial not in (None, done[0].signal_lost_before):
        first = "recorded"  # the loop's own start before scars' first round: another count
    if log is not None and log.signal_lost_initial is not None:
        points.append(SignalPoint("start", int(log.signal_lost_initial), None, "signal_lost_initial", basis=first))
    elif done and done[0].signal_lost_before is not None:
        points.append(
            SignalPoint(
                "start",
                int(done[0].signal_lost_before),
                None,
                f"round {done[0].round} signal_lost_before",
                basis=first,
            )
        )
    for i, r in enumerate(done):
        nxt = done[i + 1] if i + 1 < len(done) else None
        basis: Basis = "recounted" if counted_by_scars(r) else "recorded"
        if r.signal_lost_after is not None:
            value, source = r.signal_lost_after, f"round {r.round} signal_lost_after"
        elif nxt is not None and nxt.signal_lost_before is not None:
            value, source = nxt.signal_lost_before, f"round {nxt.round} signal_lost_before"
            basis = "recounted" if counted_by_scars(nxt) else "recorded"
        elif nxt is None:
            value, source, basis = signal_now, "current signal_lost", "recounted"
        else:
            continue
        points.append(SignalPoint(f"round {r.round}", int(value), r.round, source, str(r.decision), basis))
    if not points or points[-1].value != signal_now or points[-1].basis != "recounted":
        points.append(SignalPoint("now", int(signal_now), None, "current signal_lost", basis="recounted"))
    return points


def series_by_basis(points: list[SignalPoint]) -> dict[str, list[SignalPoint]]:
    """The series split in its two labelled series: what the loop recorded, what scars recounted."""
    out: dict[str, list[SignalPoint]] = {"recorded": [], "recounted": []}
    for p in points:
        out[p.basis].append(p)
    return out


def advice_series(log: IterationLog | None, signal_now: int) -> list[SignalPoint]:
    """The part of the series one rule counted, for reasoning across points (the advisor, the
    trend): the latest run of points of one basis, without the "now" point. A run of scars'
    rounds that follows the loop's recorded ones starts at its first round's own
    ``signal_lost_before`` (a recount): the loop's 22 and scars' 85 are never compared as if one
    count had grown from 22 to 85."""
    points = [p for p in signal_series(log, signal_now) if p.label != "now"]
    if not points:
        return []
    basis = points[-1].basis
    run: list[SignalPoint] = []
    for p in reversed(points):
        if p.basis != basis:
            break
        run.append(p)
    run.reverse()
    if run[0].label != "start" and run[0].round is not None:
        done, _ = split_rounds(log)
        r = next((d for d in done if d.round == run[0].round), None)
        if r is not None and r.signal_lost_before is not None:
            run.insert(
                0,
                SignalPoint(
                    "start", int(r.signal_lost_before), None, f"round {r.round} signal_lost_before", basis=basis
                ),
            )
    return run


@record(slots=True)
class OneBasis:
    """signal_lost on one basis (:func:`one_basis_series`): the figures a person reads as one
    count — ``scars loops``' trend, the app's sparkline, seed 002's final transition line."""

    basis: Basis
    points: tuple[SignalPoint, ...]  # oldest first: the first is N₀ of this basis, the last N_final
    now: SignalPoint | None = None  # scars' recount now when it is the other basis (never joined)
    from_round: int | None = None  # the round whose start begins the span, when it is not the series' start

    @property
    def first(self) -> int:
        return self.points[0].value

    @property
    def last(self) -> int:
        return self.points[-1].value

    def label(self) -> str:
        """The basis said: "recounted by scars, from round 2"."""
        since = f", from round {self.from_round}" if self.from_round is not None else ""
        return BASIS_SHORT[self.basis] + since

    def apart(self) -> str:
        """The other basis's point, said apart: "scars recounts 16 now" (or "")."""
        return f"scars recounts {self.now.value} now" if self.now is not None else ""


def one_basis_series(log: IterationLog | None, signal_now: int) -> OneBasis:
    """THE one-basis span of signal_lost: the two bases are never joined (docs/app.md, "Recorded vs
    recounted"). It is :func:`advice_series`' run — the latest run of points of one basis, a run
    of scars' rounds starting at its first round's own ``signal_lost_before`` — with scars'
    recount now appended when the run is scars' recount and now is not already its last point;
    when the run is the loop's record, now is kept apart (``now``), labelled, never a point of it.
    With no round and no recorded start the span is the recount now alone."""
    run = advice_series(log, signal_now)
    current = SignalPoint("now", int(signal_now), None, "current signal_lost", basis="recounted")
    if not run:
        return OneBasis("recounted", (current,))
    whole = [p for p in signal_series(log, signal_now) if p.label != "now"]
    rounds = [p.round for p in run if p.round is not None]
    from_round = rounds[0] if whole[0] != run[0] and rounds else None
    if run[-1].basis == "recounted":
        points = tuple(run) if run[-1].value == signal_now else (*run, current)
        return OneBasis("recounted", points, None, from_round)
    return OneBasis("recorded", tuple(run), current, from_round)


def signal_before_round(log: IterationLog | None, round_no: int, signal_now: int) -> int:
    """signal_lost at the start of round ``round_no``: the round's own ``signal_lost_before``,
    else the series' last point before it (the previous round's result, or the start), else now."""
    rounds = log.rounds if log is not None else ()
    this = next((r for r in rounds if r.round == round_no), None)
    if this is not None and this.signal_lost_before is not None:
        return int(this.signal_lost_before)
    earlier = [
        p for p in signal_series(log, signal_now) if p.label != "now" and (p.round is None or p.round < round_no)
    ]
    return earlier[-1].value if earlier else int(signal_now)


def _after(r: Round, fallback: int | None) -> int | None:
    return r.signal_lost_after if r.signal_lost_after is not None else fallback


def stagnation_count(done: list[Round], signal_now: int | None = None) -> int:
    """Consecutive done rounds, counted back from the latest, whose signal_lost did not fall.

    The latest round's missing ``signal_lost_after`` is taken from ``signal_now``; any round
    whose before or after stays unknown ends the count.
    """
    count = 0
    for i, r in enumerate(reversed(done)):
        after = _after(r, signal_now if i == 0 else None)
        if r.signal_lost_before is None or after is None:
            break
        if after >= r.signal_lost_before:
            count += 1
        else:
            break
    return count


def round_rot(r: Round, signal_now: int | None = None) -> dict[str, Any]:
    """Net-rot figures of one round by seed 002's rule (formats.md §1.4): ``new`` = the scar items
    the round's fixes produced (``fixes_scar_count``), ``resolved`` = the items its fixes resolved
    (``fixes_applied``: each applied fix took its item out of the remaining set; a log without it
    gives the length of its fix list), ``net_rot = new - resolved``. Accepts and defers resolve
    nothing, so signal_lost falling because the loop stopped counting accepted items hides no rot.
    ``signal_delta`` (after - before) is given beside it, never used for it. A round without
    ``fixes_scar_count`` has ``known`` False (its new items are unknown; 0 is used)."""
    before = r.signal_lost_before
    after = _after(r, signal_now)
    new = r.fixes_scar_count
    resolved = r.fixes_applied if r.fixes_applied is not None else (len(r.fix) if r.fix else None)
    figures: dict[str, Any] = {
        "round": r.round,
        "signal_lost_before": before,
        "signal_lost_after": after,
        "fixes_scar_count": new,
        "fixes_applied": r.fixes_applied,
        "signal_delta": (after - before) if before is not None and after is not None else None,
    }
    known = new is not None and resolved is not None
    new_n = new if new is not None else 0
    resolved_n = resolved if resolved is not None else 0
    figures.update(new=new_n, resolved=resolved_n, net_rot=new_n - resolved_n, known=known)
    return figures


def _retries_spent(r: Round | None) -> int:
    if r is None or not isinstance(r.budget_spent, Mapping):
        return 0
    for key in ("reviewer_retries", "reviewer_retries_consumed"):
        value = r.budget_spent.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, int):
            return max(0, value)
        if isinstance(value, str) and value.strip().isdigit():
            return int(value.strip())
    return 0


REVIEW_RULE = (
    "both reviewers must PASS before the per-fix commit; either FAIL blocks it; a missing reviewer "
    "output is FAIL (never PASS): re-dispatch at most reviewer_retry_limit times, then escalate"
)


def retry_budget(log: IterationLog | None, fix_reports: Sequence[ScarReport] = ()) -> dict[str, Any]:
    """The reviewer re-dispatch budget of the open round under seed 002's review aggregation
    rule (``REVIEW_RULE``): the retries the log's open round records, plus the
    ``reviewer_retries_consumed`` the round's fix-round reports give (seed 002's fix result
    budget report; ``fix_reports``: :func:`fix_round_reports`). ``escalate``: the budget is spent
    — a reviewer still missing now escalates instead of another re-dispatch."""
    limit = log.reviewer_retry_limit if log is not None else DEFAULT_REVIEWER_RETRY_LIMIT
    _, open_round = split_rounds(log)
    spent = _retries_spent(open_round)
    for r in fix_reports:
        b = (r.extra or {}).get("budget_spent")
        if isinstance(b, Mapping):
            spent += _count(b.get("reviewer_retries_consumed")) or 0
    remaining = max(0, limit - spent)
    low = remaining == 0 or (spent > 0 and remaining <= limit // 2)
    return {"limit": limit, "spent": spent, "remaining": remaining, "low": low, "escalate": remaining == 0}


def strategy_hint(*, remaining_rounds: int, stagnation: int, net_rot_previous: int, retry_low: bool) -> tuple[str, str]:
    """(hint, the rule that chose it)."""
    reasons = []
    if remaining_rounds <= 0:
        reasons.append("remaining_rounds == 0 (last allowed round)")
    if stagnation >= STAGNATION_ROUNDS:
        reasons.append(f"stagnation_count {stagnation} >= {STAGNATION_ROUNDS}")
    if net_rot_previous > 0:
        reasons.append(f"net_rot_previous_round {net_rot_previous} > 0")
    if retry_low:
        reasons.append("reviewer retry budget low")
    if reasons:
        return "minimal_fix", "; ".join(reasons)
    if stagnation >= 1:
        return "converge", f"signal_lost flat (stagnation_count {stagnation})"
    if remaining_rounds == 1:
        return "converge", "one round remains"
    return "explore", f"{remaining_rounds} rounds remain and signal_lost is not flat"


def _snapshot(
    log: IterationLog | None, signal_now: int | None, fix_reports: Sequence[ScarReport] = ()
) -> dict[str, Any]:
    done, _ = split_rounds(log)
    max_rounds = log.max_rounds if log is not None else DEFAULT_MAX_ROUNDS
    rnd = next_round_number(log)
    remaining = max(0, max_rounds - rnd)
    stag = stagnation_count(done, signal_now)
    rot = round_rot(done[-1], signal_now) if done else None
    net_rot_prev = rot["net_rot"] if rot is not None else 0
    retry = retry_budget(log, fix_reports)
    hint, rule = strategy_hint(
        remaining_rounds=remaining, stagnation=stag, net_rot_previous=net_rot_prev, retry_low=retry["low"]
    )
    return {
        "round": rnd,
        "max_rounds": max_rounds,
        "remaining_rounds": remaining,
        "stagnation_count": stag,
        "net_rot_previous_round": net_rot_prev,
        "previous_round_rot": rot,
        "retry": retry,
        "strategy_hint": hint,
        "strategy_rule": rule,
        "done_rounds": len(done),
    }


def round_start_snapshot(log: IterationLog | None, signal_now: int) -> dict[str, Any]:
    """The ``budget_context`` block of the round about to start (iteration-log.yaml §1.5).

    The round is the open one when the log has a round without a decision, else the next.
    """
    s = _snapshot(log, signal_now)
    return {
        "remaining_rounds_at_start": s["remaining_rounds"],
        "stagnation_count_at_start": s["stagnation_count"],
        "net_rot_previous_round": s["net_rot_previous_round"],
        "strategy_hint": s["strategy_hint"],
    }


# ----------------------------------------------------------------------------- decisions


def field_of(obj: Any, name: str) -> Any:
    """A decision's (or mapping's) field: Decision objects and plain dicts alike."""
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def norm(text: Any) -> str:
    """The same normalisation as ScarItem.normalized (whitespace collapsed, case folded)."""

    return normalize(str(text))


_attr = field_of
_norm = norm


def _decisions_by_action(decisions: Mapping[str, Any] | None, feature: Feature) -> dict[str, list[ScarItem]]:
    """Current remaining items by decided action (fix / accept / defer)."""
    out: dict[str, list[ScarItem]] = {"fix": [], "accept": [], "defer": []}
    if not decisions:
        return out
    by_id = {it.id: it for it in feature.items}
    for key, d in decisions.items():
        item_id = _attr(d, "item_id") or key
        action = _attr(d, "action")
        it = by_id.get(item_id)
        if it is None or action not in out:
            continue
        out[action].append(it)
    return out


def expected_signal_reduction(feature: Feature, decisions: Mapping[str, Any] | None = None) -> list[str]:
    items: Iterable[ScarItem] = [it for it in feature.items if it.counted]
    fixes = _decisions_by_action(decisions, feature)["fix"]
    if fixes:
        items = [it for it in fixes if it.counted]
    counts: dict[str, int] = {c: 0 for c in CATEGORIES}
    for it in items:
        if it.category in counts:
            counts[it.category] += 1
    order: list[str] = sorted((c for c in CATEGORIES if counts[c] > 0), key=lambda c: (-counts[c], CATEGORIES.index(c)))
    return order


def budget_context(
    feature: Feature, decisions: Mapping[str, Any] | None = None, open_round: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The ``iteration_budget_context`` envelope for the next dispatch (formats.md §1.4).
    ``open_round``: the journal's ``round_start`` record of the open round — its fix-round
    reports' reviewer retries count against ``reviewer_retry_budget_remaining``."""
    reports = fix_round_reports(feature, open_round) if open_round else []
    s = _snapshot(feature.iteration_log, feature.signal_lost, reports)
    return {
        "round": s["round"],
        "max_rounds": s["max_rounds"],
        "remaining_rounds": s["remaining_rounds"],
        "signal_lost_before": feature.signal_lost,
        "stagnation_count": s["stagnation_count"],
        "net_rot_previous_round": s["net_rot_previous_round"],
        "reviewer_retry_budget_remaining": s["retry"]["remaining"],
        "expected_signal_reduction": expected_signal_reduction(feature, decisions),
        "strategy_hint": s["strategy_hint"],
    }


def budget_basis(feature: Feature, open_round: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """How the envelope was computed: the rule behind the hint and the figures used."""
    reports = fix_round_reports(feature, open_round) if open_round else []
    s = _snapshot(feature.iteration_log, feature.signal_lost, reports)
    log = feature.iteration_log
    done, log_open = split_rounds(log)
    return {
        "iteration_log": log.file if log is not None else None,
        "last_round_decision": done[-1].decision if done else None,
        "open_round": log_open.round if log_open is not None else None,
        "budget_in_log": bool(log.budget_present) if log is not None else False,
        "done_rounds": s["done_rounds"],
        "strategy_rule": s["strategy_rule"],
        "previous_round_rot": s["previous_round_rot"],
        "reviewer_retries": {**s["retry"], "fix_reports": [r.file for r in reports]},
        "review_rule": REVIEW_RULE,
    }


# ----------------------------------------------------------------------------- valves

_PATH_TOKEN = re.compile(r"[A-Za-z0-9_.@+\-/\\]+")


def files_of(where: str | None) -> list[str]:
    """Files named in a ``where`` / ``debt_location`` text (``src/a.py:40-88, b.py`` …).

    A token counts as a file when it holds a ``/`` or ends in ``.<ext>``; ``:line`` and
    ``#anchor`` suffixes and surrounding punctuation are dropped.
    """
    if not where or not isinstance(where, str):
        return []
    out: list[str] = []
    for raw in re.split(r"[\s,;()\[\]`'\"]+", where):
        tok = raw.split("#", 1)[0]
        tok = re.sub(r"(:\d+([-–:]\d+)*)+$", "", tok)  # :40-88, :12:3
        tok = tok.rstrip(".:")
        if not tok or not _PATH_TOKEN.fullmatch(tok):
            continue
        if tok.startswith(("http:", "https:")) or tok in (".", ".."):
            continue
        if "/" in tok or re.search(r"\.[A-Za-z][A-Za-z0-9]{0,7}$", tok):
            tok = tok.replace("\\", "/")
            while tok.startswith("./"):
                tok = tok[2:]
            if tok and tok not in out:
                out.append(tok)
    return out


_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]*://\S+")
_TEXT_PATH = re.compile(r"[A-Za-z0-9_@+\-./\\]+")
_FILE_NAME = re.compile(r"[A-Za-z0-9_@+\-]+(\.[A-Za-z0-9_@+\-]+)*\.[A-Za-z][A-Za-z0-9]{0,7}")
_NOT_FILES = frozenset({"e.g", "i.e", "etc", "vs", "cf", "approx", "a.k.a"})


def files_in_text(text: str | None) -> list[str]:
    """Files a prose text names (an item's text, a report's ``debt_location``), in order.

    Stricter than :func:`files_of`, because prose is not a location field: a token counts when
    its last ``/`` segment is a file name with an extension (``SKILL.md``,
    ``skills/iteration/SKILL.md:12``), whatever surrounds it (CJK text needs no spaces: the
    token is the run of path characters). Bare directories (``skills/pre-thinking/``), word
    pairs (``and/or``), abbreviations (``e.g.``, ``n/a``), URLs and version numbers (``v1.2``:
    an extension starts with a letter) are not files.
    """
    if not text or not isinstance(text, str):
        return []
    out: list[str] = []
    for m in _TEXT_PATH.finditer(_URL.sub(" ", text)):
        tok = m.group(0).split("#", 1)[0].replace("\\", "/").rstrip(".-").lstrip("-")
        while tok.startswith("./"):
            tok = tok[2:]
        last = tok.rsplit("/", 1)[-1]
        if not last or tok.casefold() in _NOT_FILES or last.casefold() in _NOT_FILES:
            continue
        if _FILE_NAME.fullmatch(last) and "//" not in tok and tok not in out:
            out.append(tok)
    return out


# The bases of a file named by a fix item, strongest first (same_files watch-for).
FILE_BASES = ("where", "text", "debt_location")


def files_named(x: ScarItem | str) -> dict[str, str]:
    """Every file a fix names → its strongest basis (:data:`FILE_BASES`): an item's own
    ``where``, its text (and ``bites_when``), its report's ``debt_location``; a log description
    matched to no item, its text."""
    if not isinstance(x, ScarItem):
        return dict.fromkeys(files_in_text(x), "text")
    out: dict[str, str] = dict.fromkeys(files_of(x.where), "where")
    for f in (*files_in_text(x.text), *files_in_text(x.bites_when)):
        out.setdefault(f, "text")
    for f in files_in_text(x.debt_location):
        out.setdefault(f, "debt_location")
    return out


def _triage_view(feature: Feature, decisions: Mapping[str, Any] | None) -> dict[str, Any]:
    """fix / accept / defer lists of ScarItem-or-text, from decisions, else the latest log round."""
    acted = _decisions_by_action(decisions, feature)
    fixed = _applied_fixes(decisions, feature)
    if any(acted.values()) or fixed:
        return {
            "source": "decisions",
            "fix": acted["fix"],
            "fixed": fixed,
            "accept": acted["accept"],
            "defer": acted["defer"],
        }
    log = feature.iteration_log
    if log is not None:
        for r in sorted(log.rounds, key=lambda r: r.round, reverse=True):
            if r.fix or r.accept or r.defer:
                # Each description resolved to its item by the one matcher (feature.log_matches);
                # a description matched to no item confidently stays text.
                by_id: dict[str, ScarItem] = {it.id: it for it in (*feature.items, *feature.resolved)}
                view: dict[str, Any] = {
                    "source": f"iteration-log round {r.round}",
                    "fix": [],
                    "fixed": [],
                    "accept": [],
                    "defer": [],
                }
                for m in feature.log_matches:
                    if m.round == r.round and m.action in ("fix", "accept", "defer"):
                        item = by_id.get(m.item_id) if m.item_id else None
                        view[m.action].append(item if item is not None else m.description)
                return view
    return {"source": None, "fix": [], "fixed": [], "accept": [], "defer": []}


def _applied_fixes(decisions: Mapping[str, Any] | None, feature: Feature) -> list[str]:
    """The ids of the fix decisions whose item left the remaining set (resolved in its report,
    or gone from it): fixes applied, as ``fixes_applied`` counts them."""
    listed = {it.id for it in feature.items}
    out = []
    for key, d in (decisions or {}).items():
        item_id = _attr(d, "item_id") or key
        if _attr(d, "action") == "fix" and item_id not in listed:
            out.append(item_id)
    return out


def _label(x: ScarItem | str) -> str:
    return x.id if isinstance(x, ScarItem) else x


def _bases(named: Mapping[str, str]) -> str:
    """``where``, ``text ×2, debt_location`` …: how the fixes named one file."""
    counts = {b: list(named.values()).count(b) for b in FILE_BASES}
    return ", ".join(b if n == 1 else f"{b} ×{n}" for b, n in counts.items() if n)


# How many remaining items a one-line valve message names by id (the gate lists them all).
REMAINING_NAMED = 10


def _remaining_ids(remaining: Sequence[ScarItem]) -> str:
    if not remaining:
        return "no item remains"
    ids = ", ".join(it.id for it in remaining[:REMAINING_NAMED])
    more = f" and {len(remaining) - REMAINING_NAMED} more" if len(remaining) > REMAINING_NAMED else ""
    return f"{len(remaining)} item(s) remain: {ids}{more}"


def remaining_items(feature: Feature) -> list[ScarItem]:
    """The items a forced stop leaves (seed 002: "forced stop with remaining items listed"): the
    counted remaining items (``signal_lost``), in the feature's order."""
    return [it for it in feature.items if it.counted]


def remaining_items_listed(feature: Feature, width: int = 100) -> list[str]:
    """:func:`remaining_items`, each on one inert line: ``ID [category] text``."""
    return [f"{it.id} [{it.category}] {one_line(it.text, width)}" for it in remaining_items(feature)]


def evaluate_valves(feature: Feature, decisions: Mapping[str, Any] | None = None) -> list[Valve]:
    """Every safety valve and watch-for, in VALVE_IDS order, each with ``active``/``near``."""
    log = feature.iteration_log
    done, _ = split_rounds(log)
    max_rounds = log.max_rounds if log is not None else DEFAULT_MAX_ROUNDS
    signal_now = feature.signal_lost
    valves: list[Valve] = []

    # max rounds
    done_n = rounds_done(log)
    nxt = next_round_number(log)
    active = done_n >= max_rounds
    near = not active and nxt >= max_rounds
    remaining = remaining_items(feature)
    if active:
        msg = (
            f"Max rounds reached ({done_n} of {max_rounds}): forced stop (decision: forced_stop, reason "
            f"names max_rounds), {_remaining_ids(remaining)}."
        )
    elif near:
        msg = f"Round {nxt} is the last of {max_rounds}: after it the max-rounds valve forces a stop."
    else:
        msg = f"{done_n} of {max_rounds} rounds done."
    valves.append(
        Valve(
            "safety_valve",
            "max_rounds",
            msg,
            {
                "rounds_done": done_n,
                "max_rounds": max_rounds,
                "next_round": nxt,
                "remaining_items": signal_now,
                **({"remaining": [it.id for it in remaining]} if active else {}),
            },
            active,
            near,
        )
    )

    # stagnation
    stag = stagnation_count(done, signal_now)
    trail = (
        [
            {
                "round": r.round,
                "before": r.signal_lost_before,
                "after": _after(r, signal_now if r is done[-1] else None),
            }
            for r in done[-max(stag, 1) :]
        ]
        if done
        else []
    )
    if stag >= STAGNATION_ROUNDS:
        first, last = trail[0], trail[-1]
        msg = (
            f"signal_lost did not decrease for {stag} consecutive rounds "
            f"({first['before']} → {last['after']}): iteration may be spinning, suggest stop."
        )
    elif stag == 1:
        msg = "signal_lost did not decrease in the last round: one more flat round trips the stagnation valve."
    else:
        msg = "signal_lost fell in the last round." if done else "No round has run yet."
    valves.append(
        Valve(
            "safety_valve",
            "stagnation",
            msg,
            {"stagnation_count": stag, "threshold": STAGNATION_ROUNDS, "rounds": trail},
            stag >= STAGNATION_ROUNDS,
            stag == STAGNATION_ROUNDS - 1,
        )
    )

    # net rot
    rot = round_rot(done[-1], signal_now) if done else None
    if rot is None:
        valves.append(Valve("safety_valve", "net_rot", "No round has run yet.", {"net_rot": 0}, False, False))
    else:
        active = rot["known"] and rot["new"] > rot["resolved"]
        delta = ""
        if rot["signal_delta"] is not None and rot["signal_delta"] != rot["net_rot"]:
            delta = (
                f" signal_lost {rot['signal_lost_before']} → {rot['signal_lost_after']} is not net rot: "
                "accepts, defers and items the loop stopped counting resolve nothing."
            )
        if active:
            msg = (
                f"Round {rot['round']}'s fixes produced {rot['new']} new scar items and resolved "
                f"{rot['resolved']}: net rot increased, suggest stop.{delta}"
            )
        elif not rot["known"]:
            missing = "fixes_scar_count" if rot["fixes_scar_count"] is None else "fixes_applied"
            msg = f"Round {rot['round']} records no {missing}: net rot unknown."
        else:
            msg = (
                f"Round {rot['round']}: its fixes produced {rot['new']} new scar items and resolved "
                f"{rot['resolved']} (net rot {rot['net_rot']}).{delta}"
            )
        valves.append(Valve("safety_valve", "net_rot", msg, dict(rot), active, False))

    # watch-fors
    view = _triage_view(feature, decisions)
    n_fix, n_acc, n_def = len(view["fix"]), len(view["accept"]), len(view["defer"])
    # A fix counts whether it is pending or applied (its item left the remaining set).
    fixes = n_fix + len(view["fixed"])
    total = fixes + n_acc + n_def
    ratio = (n_acc / total) if total else 0.0
    active = total > 0 and fixes == 0 and ratio > ACCEPT_RATIO_LIMIT
    msg = (
        f"{n_acc} of {total} triaged items accepted ({ratio:.0%}) with zero fixes: cargo-cult triage?"
        if active
        else f"{n_acc} of {total} triaged items accepted ({ratio:.0%}), {fixes} fixes."
    )
    valves.append(
        Valve(
            "watch_for",
            "accept_ratio",
            msg,
            {
                "fix": fixes,
                "fixes_applied": len(view["fixed"]),
                "accept": n_acc,
                "defer": n_def,
                "ratio": round(ratio, 4),
                "limit": ACCEPT_RATIO_LIMIT,
                "source": view["source"],
            },
            active,
            False,
        )
    )

    level1 = [it for it in feature.items if it.deferred and it.counted]
    accepted_ids = {x.id for x in view["accept"] if isinstance(x, ScarItem)}
    l1_accepted = [it for it in level1 if it.id in accepted_ids]
    active = len(level1) >= LEVEL1_WHOLESALE_MIN and len(l1_accepted) == len(level1)
    msg = (
        f"All {len(level1)} items deferred from Level 1 were accepted: check each was scrutinised."
        if active
        else f"{len(l1_accepted)} of {len(level1)} Level-1 deferred items accepted."
    )
    valves.append(
        Valve(
            "watch_for",
            "level1_wholesale",
            msg,
            {
                "level1_deferred": len(level1),
                "accepted": len(l1_accepted),
                "minimum": LEVEL1_WHOLESALE_MIN,
                "items": [it.id for it in l1_accepted],
                "source": view["source"],
            },
            active,
            False,
        )
    )

    by_file: dict[str, dict[str, str]] = {}  # file → fix label → basis
    for x in view["fix"]:
        for f, basis in files_named(x).items():
            by_file.setdefault(f, {}).setdefault(_label(x), basis)
    shared = {f: named for f, named in sorted(by_file.items()) if len(named) >= 2}
    if shared:
        parts = ", ".join(f"{f} ({len(named)} fixes, by {_bases(named)})" for f, named in shared.items())
        msg = f"Fixes touch the same files: {parts} — potential conflicts."
    else:
        msg = (
            f"{n_fix} fix items, no file named by two of them "
            "(read from each item's where, its text and its report's debt_location)."
        )
    valves.append(
        Valve(
            "watch_for",
            "same_files",
            msg,
            {
                "files": {f: list(named) for f, named in shared.items()},
                "basis": shared,
                "fix_items": n_fix,
                "source": view["source"],
            },
            bool(shared),
            False,
        )
    )
    return valves


def active_valves(feature: Feature, decisions: Mapping[str, Any] | None = None) -> list[Valve]:
    return [v for v in evaluate_valves(feature, decisions) if v.active]


# ----------------------------------------------------------------------------- the round gate


@record(slots=True)
class RoundFigures:
    """The open round as its gate shows it and its close writes it: "Round R done. signal_lost
    N → N'. Fixed K, J remaining" (formats.md §1.4) — one computation for the app's modal,
    ``scars gate round-continue`` / ``safety-valve``, answers files and ``scars round close``.

    ``fixed`` is the round's fix decisions whose item left the remaining set (resolved in its
    report, or gone from it): the items its fixes resolved (iteration-log.yaml ``fixes_applied``,
    seed 002's net-rot input); ``fix_open`` the round's fix decisions whose item is still listed
    (the fix is not applied yet); ``remaining`` the counted remaining items (= ``signal_lost_after``);
    ``new_items`` the counted items that were not there when the round started
    (``fixes_scar_count``); ``undecided`` the counted items with no decision in force (none in
    scars, none carried from an earlier round of the log).
    """

    round: int
    max_rounds: int
    signal_lost_before: int
    signal_lost_after: int
    fixed: int
    accepted: int
    deferred: int
    triaged: int
    remaining: int
    new_items: tuple[str, ...] = ()
    fix_open: tuple[str, ...] = ()
    undecided: tuple[str, ...] = ()
    rule3: dict[str, Any] = field(default_factory=dict)  # Rule-3 fields the round's fix reports give
    rule3_sources: tuple[str, ...] = ()  # those fix-round reports

    def to_dict(self) -> dict[str, Any]:
        return {
            "round": self.round,
            "max_rounds": self.max_rounds,
            "signal_lost_before": self.signal_lost_before,
            "signal_lost_after": self.signal_lost_after,
            "fixed": self.fixed,
            "fix_open": len(self.fix_open),
            "accepted": self.accepted,
            "deferred": self.deferred,
            "triaged": self.triaged,
            "undecided": len(self.undecided),
            "remaining": self.remaining,
            "new_items": len(self.new_items),
            "rule3_from_reports": dict(self.rule3),
            "fix_reports": list(self.rule3_sources),
        }


def round_figures(
    feature: Feature,
    open_round: Mapping[str, Any],
    triage: Mapping[str, Any],
    decisions: Mapping[str, Any] | None = None,
) -> RoundFigures:
    """The figures of the open round (its journal ``round_start`` record) with ``triage``, the
    decisions made since the previous round closed, over the reports as they are now;
    ``decisions``: every decision in force (carried ones included), for the undecided count
    (default: ``triage``)."""
    actions = [field_of(d, "action") for d in triage.values()]
    counted = [it for it in feature.items if it.counted]
    listed = {it.id for it in feature.items}
    start_ids = set(open_round.get("item_ids") or ())
    log = feature.iteration_log
    max_rounds = open_round.get("max_rounds")
    if not isinstance(max_rounds, int):
        max_rounds = log.max_rounds if log is not None else DEFAULT_MAX_ROUNDS
    number = int(open_round.get("round") or next_round_number(log))
    before = open_round.get("signal_lost_before")
    if not isinstance(before, int):  # a round_start record without it: the series' point before the round
        before = signal_before_round(log, number, feature.signal_lost)
    fixes = [i for i, d in triage.items() if field_of(d, "action") == "fix"]
    in_force = decisions if decisions is not None else triage
    reports = fix_round_reports(feature, open_round)
    return RoundFigures(
        round=number,
        max_rounds=max_rounds,
        signal_lost_before=before,
        signal_lost_after=feature.signal_lost,
        fixed=sum(1 for i in fixes if i not in listed),
        accepted=actions.count("accept"),
        deferred=actions.count("defer"),
        triaged=len(actions),
        remaining=len(counted),
        new_items=tuple(it.id for it in counted if it.id not in start_ids),
        fix_open=tuple(i for i in fixes if i in listed),
        undecided=tuple(it.id for it in counted if it.id not in in_force),
        rule3=rule3_from_reports(reports),
        rule3_sources=tuple(r.file for r in reports),
    )


def transition_line(
    log: IterationLog | None,
    *,
    round_no: int,
    signal_before: int | None,
    signal_after: int | None,
    fixed: int,
    accepted: int,
    deferred: int,
) -> str:
    """Seed 002's final transition, said when the iteration ends with round ``round_no`` (stop or
    forced_stop): 「Iteration 完成。R 輪執行，signal_lost: N₀ → N_final。K items fixed, J items
    accepted, D items deferred。進入 Validate & Ship（Step 0 security gate）。」 R is ``round_no``;
    N₀ and N_final come from one basis (:func:`one_basis_series` of the log with this round closed
    by scars): N_final is ``signal_after`` (scars' recount), N₀ the start of the run of scars'
    counts that ends with it — the log's start when every round is scars', else the
    ``signal_lost_before`` of scars' first round after the loop's own — and the line says which
    basis, from which round; K, J, D add up the log's done rounds before this one (K: ``fixes_applied``,
    else the length of the fix list) and this round's ``fixed`` / ``accepted`` / ``deferred``.
    ``log`` is the log as it was before this round was written."""
    done, _ = split_rounds(log)
    earlier = [r for r in done if r.round < round_no]
    if signal_after is None:
        n0, n_final, said = signal_before, signal_after, ""
    else:
        closing = Round(
            round=round_no,
            signal_lost_before=signal_before,
            signal_lost_after=signal_after,
            decision="stop",
            raw={COUNTED_BY_KEY: COUNTED_BY_SCARS},
        )
        base = log if log is not None else IterationLog(file="iteration-log.yaml")
        span = one_basis_series(replace(base, rounds=(*earlier, closing)), signal_after)
        n0, n_final, said = span.first, span.last, f"（{span.label()}）"
    k = sum(r.fixes_applied if r.fixes_applied is not None else len(r.fix) for r in earlier) + fixed
    j = sum(len(r.accept) for r in earlier) + accepted
    d = sum(len(r.defer) for r in earlier) + deferred
    return (
        f"Iteration 完成。{round_no} 輪執行，signal_lost: {n0} → {n_final}{said}。"
        f"{k} items fixed, {j} items accepted, {d} items deferred。"
        "進入 Validate & Ship（Step 0 security gate）。"
    )


# Rule 3 of the iteration-log template: a round records what it spent, what it learned and the
# risk it leaves (an empty list / mapping records none, said explicitly).
RULE_3: tuple[str, ...] = ("budget_spent", "evidence_gained", "residual_risk")


def fix_round_reports(feature: Feature, open_round: Mapping[str, Any]) -> list[ScarReport]:
    """The scar reports this round's fixes wrote (seed 002 Step 3: "scar report per fix"): the
    reports that carry a fix result's ``budget_spent`` / ``evidence_gained`` / ``residual_risk``
    and were not there when the round started (the ``round_start`` record's ``reports``; a record
    without them: reports holding an item that is new since the round started)."""
    at_start = open_round.get("reports")
    start_items = set(open_round.get("item_ids") or ())
    out = []
    for r in feature.reports:
        if r.parse_failure is not None or not any(k in (r.extra or {}) for k in RULE_3):
            continue
        if isinstance(at_start, list):
            new = r.file not in at_start
        else:
            new = any(it.id not in start_items for it in r.items if not it.resolved)
        if new:
            out.append(r)
    return out


def _count(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return max(0, value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


# The counts a round's ``budget_spent`` holds (formats.md §1.5), and the fix result's own name
# for one of them (seed 002's "Fix result budget report": ``reviewer_retries_consumed``).
BUDGET_SPENT_KEYS: tuple[str, ...] = (
    "implementer_dispatches",
    "reviewer_dispatches",
    "reviewer_retries",
    "validation_runs",
)
_FIX_RESULT_NAMES = {"reviewer_retries": ("reviewer_retries", "reviewer_retries_consumed")}


def rule3_from_reports(reports: list[ScarReport]) -> dict[str, Any]:
    """The round's Rule-3 fields as the fix results report them (seed 002, "Fix result budget
    report"): ``budget_spent`` sums each count of the round's ``budget_spent`` (formats.md §1.5:
    ``implementer_dispatches``, ``reviewer_dispatches``, ``reviewer_retries`` — a report's
    ``reviewer_retries_consumed`` when it gives no ``reviewer_retries`` —, ``validation_runs``)
    that some report gives, and only those: a count no report gives is not made up (an inline fix
    dispatches no implementer; :func:`budget_spent_not_given` names them). ``evidence_gained`` and
    ``residual_risk`` are their lists, in report order. Only the fields some report gives are
    returned."""
    out: dict[str, Any] = {}
    spent: dict[str, int] = {}
    given = False
    for r in reports:
        extra = r.extra or {}
        b = extra.get("budget_spent")
        if isinstance(b, Mapping):
            given = True
            for key in BUDGET_SPENT_KEYS:
                for src in _FIX_RESULT_NAMES.get(key, (key,)):
                    n = _count(b.get(src))
                    if n is not None:
                        spent[key] = spent.get(key, 0) + n
                        break
        for key in ("evidence_gained", "residual_risk"):
            v = extra.get(key)
            if isinstance(v, list):
                out.setdefault(key, []).extend(str(x) for x in v if isinstance(x, (str, int, float)) and str(x).strip())
            elif isinstance(v, str) and v.strip():
                out.setdefault(key, []).append(v.strip())
    if given:
        out["budget_spent"] = {k: spent[k] for k in BUDGET_SPENT_KEYS if k in spent}
    return out


def budget_spent_not_given(spent: Mapping[str, Any]) -> list[str]:
    """The counts of formats.md §1.5's ``budget_spent`` that ``spent`` (taken from the round's fix
    reports) lacks, named as ``rule3_not_given`` names them: ``budget_spent.<count>``."""
    return [f"budget_spent.{k}" for k in BUDGET_SPENT_KEYS if k not in spent]


def valves_after_round(feature: Feature, decisions: Mapping[str, Any], fig: RoundFigures) -> list[Valve]:
    """The valves as the loop checks them after this round: the open round counted as done
    (formats.md §1.4, "checked after each round")."""
    pseudo = Round(
        round=fig.round,
        signal_lost_before=fig.signal_lost_before,
        signal_lost_after=fig.signal_lost_after,
        fixes_scar_count=len(fig.new_items),
        fixes_applied=fig.fixed,
        decision="pending",
        raw={COUNTED_BY_KEY: COUNTED_BY_SCARS},
    )
    log = feature.iteration_log
    if log is None:
        log = IterationLog(file="iteration-log.yaml", max_rounds=fig.max_rounds)
    rounds = tuple(r for r in log.rounds if r.round != fig.round) + (pseudo,)
    return evaluate_valves(replace(feature, iteration_log=replace(log, rounds=rounds)), decisions)
