"""What every loop reader shares: the ``LoopState`` summary and tolerant, capped file reads.

A reader turns one loop's files into a :class:`LoopState`: budget used and left, the loop's
own stop rule evaluated with its reasons, the next route, the trend of its scores, and whether
a person is needed (``waiting_for_human`` with ``reason``). Real files drift: readers keep
unknown keys in ``raw``, normalise what the contract (formats.md §2–5) says to normalise, and
list anything unusable as a :class:`~scars.core.model.Problem` — they never raise on bad
input.

File reads are bounded: a JSON state file or a markdown log larger than its cap is not read at
all (a parse failure says so), a symlink that leaves the scanned root is refused.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scars.core.clock import parse_time  # noqa: F401 - the loop readers take it from here
from scars.core.model import Problem
from scars.core.records import field, record
from scars.core.storage import safe_read


@record(slots=True)
class Budget:
    """Iterations (or rounds) used against the loop's limit.

    ``left`` never goes below 0; a count above the limit is kept as read and shown through
    ``over`` (real files exceed their nominal limits: that is shown, never rejected).
    """

    used: int | None
    limit: int | None
    unit: str = "iterations"

    @property
    def left(self) -> int | None:
        if self.used is None or self.limit is None:
            return None
        return max(self.limit - self.used, 0)

    @property
    def over(self) -> int:
        if self.used is None or self.limit is None:
            return 0
        return max(self.used - self.limit, 0)

    @property
    def spent(self) -> bool:
        return self.used is not None and self.limit is not None and self.used >= self.limit

    def describe(self) -> str:
        if self.used is None and self.limit is None:
            return f"{self.unit}: unknown"
        used = "?" if self.used is None else str(self.used)
        limit = "?" if self.limit is None else str(self.limit)
        text = f"{used}/{limit} {self.unit}"
        if self.over:
            text += f" ({self.over} above the limit)"
        elif self.left is not None:
            text += f", {self.left} left"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {"used": self.used, "limit": self.limit, "left": self.left, "over": self.over, "unit": self.unit}


@record(slots=True)
class StopRule:
    """The loop's own stop rule evaluated. ``met`` is None when it cannot be evaluated."""

    met: bool | None
    reasons: tuple[str, ...] = ()
    outcome: str | None = None  # e.g. converged, positive_verdict, budget_spent, stalled

    def to_dict(self) -> dict[str, Any]:
        return {"met": self.met, "reasons": list(self.reasons), "outcome": self.outcome}


@record(slots=True)
class TrendPoint:
    """One point of a loop's history: a judge pass, a review round, a match-rate measure."""

    label: str  # "iteration 2", "round 3", "night 3 round 1"
    value: float | None  # None = not measured (a bkit matchRate of null stays null)
    note: str | None = None  # verdict, gap type …

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "value": self.value, "note": self.note}


@record(slots=True)
class LoopState:
    """One loop's state as read and evaluated.

    ``points`` is the loop's history with labels and notes (``history()``), unmeasured points
    included; ``trend`` is derived from it: the measured numbers in order (for a sparkline),
    so the two can never disagree.
    ``path`` is relative to the directory that was scanned (posix separators).
    """

    kind: str
    name: str
    path: str
    budget: Budget
    stop_rule: StopRule
    route: str | None
    waiting_for_human: bool
    reason: str
    parse_failures: tuple[Problem, ...] = ()
    raw: Any = field(default=None, compare=False, repr=False)
    status: str | None = None
    trend_label: str = ""
    points: tuple[TrendPoint, ...] = ()
    details: dict[str, Any] = field(default_factory=dict, compare=False)
    # The points the trend joins when not all of ``points`` are one count (samsara: the loop's
    # record and scars' recount are never joined; ``trend_label`` says which one it is).
    trend_points: tuple[TrendPoint, ...] | None = None

    @property
    def trend(self) -> tuple[float, ...]:
        """The measured values of :attr:`trend_points` (default :attr:`points`), oldest first
        (unmeasured points left out)."""
        return make_points_trend(self.points if self.trend_points is None else self.trend_points)

    def history(self) -> list[TrendPoint]:
        """Every point of the loop's history, oldest first (what a chart draws)."""
        return list(self.points)

    def brief(self) -> dict[str, Any]:
        """What a gate reports of the loop it stands in (``scars gate … --json`` ``loop``): the
        same budget and stop rule as ``scars loops --json``."""
        return {
            "kind": self.kind,
            "name": self.name,
            "budget": self.budget.to_dict(),
            "stop_rule": self.stop_rule.to_dict(),
            "waiting_for_human": self.waiting_for_human,
        }

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (``scars loops --json``); ``raw`` is left out."""
        return {
            "kind": self.kind,
            "name": self.name,
            "path": self.path,
            "status": self.status,
            "waiting_for_human": self.waiting_for_human,
            "reason": self.reason,
            "route": self.route,
            "budget": self.budget.to_dict(),
            "stop_rule": self.stop_rule.to_dict(),
            "trend_label": self.trend_label,
            "trend": list(self.trend),
            "history": [p.to_dict() for p in self.points],
            "details": _jsonable(self.details),
            "parse_failures": [{"file": f.file, "line": f.line, "reason": f.message} for f in self.parse_failures],
        }


def make_points_trend(points: list[TrendPoint] | tuple[TrendPoint, ...]) -> tuple[float, ...]:
    return tuple(p.value for p in points if p.value is not None)


def _jsonable(value: Any, depth: int = 0) -> Any:
    if depth > 32:
        return None
    if isinstance(value, dict):
        return {str(k): _jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, depth + 1) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if hasattr(value, "to_dict"):
        return _jsonable(value.to_dict(), depth + 1)
    return str(value)


# --------------------------------------------------------------------------- file reads


def rel(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` in posix form (the path itself when outside root)."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _read(path: Path, root: Path, what: str, load: Callable[[], Any]) -> tuple[Any, Problem | None]:
    """``load()`` (a ``storage/safe_read`` read of ``path`` within ``root``) or the Problem
    saying why it cannot be used: the one read policy, as the loop readers report it."""
    try:
        return load(), None
    except FileNotFoundError:
        return None, Problem(rel(path, root), None, f"{what} not found")
    except safe_read.Unreadable as exc:
        return None, Problem(rel(path, root), exc.line, exc.reason)


def read_json(path: Path, root: Path) -> tuple[Any, Problem | None]:
    """A JSON file (safe_read: at most 8 MiB, no NaN / Infinity, nesting, a symlink only inside
    ``root``), or ``(None, Problem)`` saying why it cannot be used. Never raises on input."""
    return _read(path, root, "JSON file", lambda: safe_read.load_json(path, root=root))


def read_text(path: Path, root: Path) -> tuple[str | None, Problem | None]:
    """A text file a person reads (undecodable bytes replaced), at most 8 MiB."""
    return _read(path, root, "file", lambda: safe_read.read_text(path, root=root, strict=False))


def read_yaml(path: Path, root: Path) -> tuple[Any, Problem | None]:
    """A YAML file through ``storage/safe_read`` (size, alias, depth and duplicate-key guards)."""
    return _read(path, root, "YAML file", lambda: safe_read.load_yaml(path, root=root, what="YAML file").value)


# --------------------------------------------------------------------------- values

_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
# "7/10", "6.5 / 10", and a range "6-6.5/10" (its first number: a score is 1–10, never negative).
_OUT_OF_TEN = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)(?:\s*[-–—]\s*\d+(?:\.\d+)?)?\s*/\s*10(?!\d)")


def as_number(value: Any) -> float | None:
    """A number from a JSON value: int/float, or a string such as ``"6.5"`` / ``"7/10"``.

    Booleans, NaN and infinities are not numbers here.
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        f = float(value)
        return f if math.isfinite(f) else None
    if isinstance(value, str):
        m = _OUT_OF_TEN.search(value) or _NUMBER.search(value)
        if m:
            return float(m.group(1) if m.re is _OUT_OF_TEN else m.group(0))
    return None


def score_out_of_ten(text: str) -> float | None:
    """The first number written before ``/10`` in ``text`` (markdown emphasis ignored); of a range
    ``6-6.5/10`` its lower end (a review score is 1–10: the dash is never a minus sign)."""
    m = _OUT_OF_TEN.search(text.replace("*", "").replace("`", ""))
    return float(m.group(1)) if m else None


def as_int(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        return int(value.strip())
    return None


def configured_number(value: Any, default: float) -> float:
    """A configured number exactly as written (fractional, or 0); ``default`` only when the value
    is absent or not a number. Every loop's configured threshold is read through here."""
    number = as_number(value)
    return default if number is None else number


def configured_count(value: Any, default: int) -> int:
    """A configured count (a whole number ≥ 0, 0 included) exactly as written; ``default`` only
    when the value is absent or not a count. Every loop's configured limit is read through here."""
    count = as_int(value)
    return default if count is None or count < 0 else count


def fmt_number(value: float | None) -> str:
    if value is None:
        return "—"
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def now_utc() -> datetime:
    return datetime.now(UTC)
