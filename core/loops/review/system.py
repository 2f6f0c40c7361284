"""The review loops (ARIS and Mechanist) as a loop system: a directory holding
``REVIEW_STATE.json`` or ``AUTO_REVIEW.md``, its review-continue gate, review scores /10 against
the loop's STOP score."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from scars.core.advice.advisor import number
from scars.core.gatekit.catalog import Answer, Gate
from scars.core.gatekit.evidence import Evidence, GateResult
from scars.core.loops.base import LoopState
from scars.core.loops.review.gates import apply_review, gather_review
from scars.core.loops.review.reader import read_review_dir
from scars.core.loops.system import LoopKind, LoopSystem, StateFileSystem, WalkedDir

SCALE = 10.0
MARKERS = ("REVIEW_STATE.json", "AUTO_REVIEW.md")


class Review(StateFileSystem):
    loop = "aris"
    kinds: tuple[LoopKind, ...] = (
        LoopKind("mechanist", "Mechanist review", SCALE),
        LoopKind("aris", "ARIS review", SCALE),
    )
    lineage: tuple[str, ...] = ("aris", "mechanist")
    file_names = "REVIEW_STATE.json, AUTO_REVIEW.md"

    def find(self, root: Path, walk: Sequence[WalkedDir], now: datetime | None) -> list[LoopState]:
        dirs = sorted(d.path for d in walk if any(m in d.files for m in MARKERS))
        return [read_review_dir(d, root, now=now) for d in dirs]

    def read_path(self, path: Path, root: Path, now: datetime | None) -> list[LoopState] | None:
        if path.name in (*MARKERS, "REVIEWER_MEMORY.md"):
            return [read_review_dir(path.parent, root, now=now)]
        return None

    def gate_call(self, state: LoopState) -> tuple[str, dict[str, Any]] | None:
        return "review-continue", {}

    def goal(self, kind: str, details: Mapping[str, Any]) -> tuple[float, float] | None:
        t = number(details.get("target_score"))
        return None if t is None else (t / SCALE, t / SCALE)

    def _gather(self, gate: Gate, where: Path, **options: Any) -> Evidence:
        return gather_review(gate, where, **options)

    def _apply(
        self, evidence: Evidence, ans: Answer, reason: str | None, *, user: str, source: str, now: str
    ) -> GateResult:
        return apply_review(evidence, ans, reason, user=user, source=source, now=now)


SYSTEM: LoopSystem = Review()
