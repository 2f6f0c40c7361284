"""samsara as a loop system: the features under every ``changes/`` directory (and the fast-track
directories), its five gates (entry, triage, blocked-fix, round-continue, safety-valve) recorded
through the feature's FeatureSession, and its advice read from the feature itself."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from scars.core.gatekit.answers import AnswersFile
from scars.core.gatekit.catalog import Answer, Gate
from scars.core.gatekit.evidence import Evidence, GateResult
from scars.core.loops.base import LoopState
from scars.core.loops.samsara.gather import gather as gather_evidence
from scars.core.loops.samsara.reader import fast_track_state, read_samsara_feature
from scars.core.loops.samsara.record import apply as apply_answer
from scars.core.loops.samsara.record import record as record_answer
from scars.core.loops.samsara.replay import replay as replay_answers
from scars.core.loops.system import LoopKind, LoopSystem, WalkedDir
from scars.core.provenance import Provenance
from scars.core.samsara.layout import find_fast_tracks, find_features
from scars.core.storage import safe_read


def _samsara_features(repo: Path) -> list[Path]:
    try:
        return list(find_features(repo))
    except Exception:  # noqa: BLE001 - a broken tree must not hide the other loops
        return []


def _fast_tracks(repo: Path) -> list[Path]:
    try:
        return list(find_fast_tracks(repo))
    except Exception:  # noqa: BLE001 - a broken tree must not hide the other loops
        return []


class Samsara:
    loop = "samsara"
    kinds: tuple[LoopKind, ...] = (LoopKind("samsara", "samsara"), LoopKind("samsara-fast-track", "samsara fast-track"))
    root_markers: tuple[str, ...] = ()  # samsara's own root rule comes first (samsara.layout.find_repo_root)
    lineage: tuple[str, ...] = ()
    file_names = ""
    item_decisions = True

    def find(self, root: Path, walk: Sequence[WalkedDir], now: datetime | None) -> list[LoopState]:
        samsara_dirs: list[Path] = []
        fast_dirs: list[Path] = []
        if root.parent.name == "changes":  # a samsara feature directory given directly
            samsara_dirs.extend(p for p in _samsara_features(root.parent.parent) if p.resolve() == root.resolve())
            fast_dirs.extend(p for p in _fast_tracks(root.parent.parent) if p.resolve() == root.resolve())
        for d in walk:
            if "changes" in d.dirnames:
                samsara_dirs.extend(_samsara_features(d.path))
                fast_dirs.extend(_fast_tracks(d.path))
        states = []
        seen: set[Path] = set()
        for feature_dir in samsara_dirs:
            key = Path(feature_dir).resolve()
            if key in seen:
                continue
            seen.add(key)
            states.append(read_samsara_feature(Path(feature_dir), root))
        for fast in fast_dirs:
            key = Path(fast).resolve()
            if key not in seen:
                seen.add(key)
                states.append(fast_track_state(Path(fast), root))
        return states

    def read_path(self, path: Path, root: Path, now: datetime | None) -> list[LoopState] | None:
        return None

    def record_dir(self, state: LoopState, root: Path) -> Path | None:
        return None  # its records are its journal's

    def gate_call(self, state: LoopState) -> tuple[str, dict[str, Any]] | None:
        return "triage", {}

    def goal(self, kind: str, details: Mapping[str, Any]) -> tuple[float, float] | None:
        return None

    def advise(self, state: LoopState, *, token_budget: float | None, tokens_used: float | None) -> Any:
        return None  # a samsara feature is advised through its Feature (advice.feature.advise_feature)

    def gather(self, gate: Gate, where: Path, *, read_only: str | bool | None = None, **options: Any) -> Evidence:
        return gather_evidence(gate, where, **options)

    def human_mode(self, evidence: Evidence) -> bool:
        """A person answers unless pre-thinking.md says ``Execution mode: auto`` (the feature's
        FeatureSession applies the rule)."""
        return not evidence.context.get("auto_mode")

    def entry_option(self, auto_entry: bool | None) -> None:
        return None

    def apply(
        self,
        evidence: Evidence,
        ans: Answer,
        reason: str | None,
        *,
        user: str,
        session: Any = None,
        source: Provenance | str = "terminal",
        now: str | None = None,
        auto_entry: bool | None = None,
    ) -> GateResult:
        return apply_answer(evidence, ans, reason, user=user, session=session, source=source, auto_entry=auto_entry)

    def record(
        self,
        evidence: Evidence,
        answer_text: str,
        reason: str | None,
        *,
        user: str,
        source: Provenance | str = "terminal",
        session: Any = None,
        auto_entry: bool | None = None,
        round_fields: dict[str, Any] | None = None,
    ) -> GateResult:
        return record_answer(
            evidence,
            answer_text,
            reason,
            user=user,
            source=source,
            session=session,
            auto_entry=auto_entry,
            round_fields=round_fields,
        )

    def replay(
        self,
        path: str | os.PathLike,
        af: AnswersFile,
        *,
        user: str,
        options: dict[str, Any],
        source: Provenance,
        auto_entry: bool | None = None,
    ) -> list[GateResult]:
        return replay_answers(path, af, user=user, options=options, source=source, auto_entry=auto_entry)

    def proof_file(self, evidence: Evidence) -> Path | None:
        return None  # its record writes its entry only in auto mode

    def loop_files(self, evidence: Evidence, root: Path) -> set[Path]:
        """Every file of the feature directory, its reports and its journal (the folders listed
        by the read rule inside ``root``: one leading out of the repository is never listed)."""
        files: set[Path] = set()
        target = Path(evidence.target)
        for directory in (target, target / "scar-reports"):
            with contextlib.suppress(OSError, safe_read.Unreadable):
                names = safe_read.list_dir(directory, root=root)
                files.update(p for p in (directory / n for n in names) if p.is_file() and not p.is_symlink())
        files.update(target / ".scars" / name for name in ("journal.jsonl", "watches.jsonl"))
        return files


SYSTEM: LoopSystem = Samsara()
