"""The one place the app touches the durable layer (``scars.core.samsara.session.FeatureSession``).

Every decision the app shows as saved went through here and is on disk (fsynced) before
the call returns. A backend without a session (``ScarsApp.from_feature(feature)``, used to
look at an already-read feature) is read-only and refuses every write with a clear reason.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scars.core.errors import READ_ONLY, FieldError, LockHeld, ReadOnly, refuse_if_read_only
from scars.core.model import Feature
from scars.core.provenance import Provenance, provenance
from scars.core.samsara.decisions import Decision, resolve_user, validate_decision
from scars.core.samsara.session import FeatureSession, ReadAhead
from scars.core.samsara.watches import validate_watch
from scars.core.storage import WriteFailed, describe_holder

if TYPE_CHECKING:
    from scars.core.gatekit.evidence import Evidence, GateResult

__all__ = ["Backend", "ReadOnly", "app_provenance"]  # ReadOnly: core's refusal of a write in a read-only session


def app_provenance(channel: str = "app", via: str = "app") -> Provenance:
    """The provenance of a decision or answer taken in the app (``request-app``: a request answered
    there), by the one core function; ``tty``: the app's stdin and stdout are a terminal (under
    `scars serve` they are pipes to the browser's driver)."""
    try:
        tty = sys.stdin.isatty() and sys.stdout.isatty()
    except (AttributeError, ValueError):
        tty = False
    return provenance(channel, tty=tty, via=via)


class Backend:
    """Decisions, history and round records of one feature, through a FeatureSession."""

    def __init__(
        self,
        feature: Feature,
        session: FeatureSession | None = None,
        *,
        read_only: bool | None = None,
        lock_holder: dict | None = None,
        read_only_reason: str | None = None,
        write_refused: str | None = None,
    ):
        self.session = session
        self.write_refused = write_refused  # why this checkout cannot be written (opened read-only)
        self.feature = feature
        self.lock_holder = lock_holder
        self.round_override: str | None = None  # the reason to start a round past max_rounds
        self._reopened: dict[str, dict[str, Any]] | None = None  # without a session: read once
        if read_only is None:
            read_only = session is None or session.read_only
        self.read_only = read_only
        self.read_only_reason = read_only_reason or (
            f"read-only: the lock is held by {describe_holder(lock_holder)}"
            if lock_holder
            else ("read-only: no session" if session is None else (READ_ONLY if read_only else None))
        )

    # -- opening ----------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        feature_dir: str | Path,
        *,
        read_only: bool = False,
        user: str | None = None,
        meanwhile: Callable[[Backend], None] | None = None,
        ahead: ReadAhead | None = None,
    ) -> Backend:
        """Open a session; when another writer holds the lock, open read-only and say who.

        ``meanwhile``: called, when the feature is read, with the backend (the one returned) over
        the feature but for its possible patterns, while they are computed (FeatureSession.open's);
        its feature gets them before this returns. ``ahead``: the read of the feature the CLI
        started before the app (FeatureSession.open's)."""
        holder: dict | None = None
        why: str | None = None
        early: list[Backend] = []

        def backend(session: FeatureSession) -> Backend:
            return cls(
                session.feature,
                session,
                read_only=read_only or holder is not None or why is not None or session.read_only,
                lock_holder=holder,
                read_only_reason=why,
                write_refused=why,
            )

        def opened(session: FeatureSession) -> None:
            early.append(backend(session))
            assert meanwhile is not None
            meanwhile(early[0])

        hook = opened if meanwhile is not None else None
        try:
            session = FeatureSession.open(
                feature_dir, read_only=read_only, user=user, meanwhile=hook, provenance=app_provenance(), ahead=ahead
            )
        except LockHeld as exc:
            holder = exc.holder or {}
            session = FeatureSession.open(feature_dir, read_only=True, user=user, meanwhile=hook, ahead=ahead)
        except WriteFailed as exc:  # a read-only checkout: look, and say why nothing can be recorded
            why = f"read-only: {exc}"
            session = FeatureSession.open(feature_dir, read_only=True, user=user, meanwhile=hook, ahead=ahead)
        if early and early[-1].session is session:
            early[-1].feature = session.feature  # with its possible patterns now
            return early[-1]
        return backend(session)

    # -- reads ------------------------------------------------------------------------
    @property
    def user(self) -> str:
        if self.session is not None and self.session.user:
            return str(self.session.user)
        try:
            return resolve_user()
        except Exception:  # noqa: BLE001 - an unknown user is shown, never fatal
            return "unknown"

    @property
    def decisions(self) -> dict[str, Decision]:
        if self.session is None:
            return {}
        return self.session.decisions

    @property
    def moved(self) -> dict[str, Any]:
        """Decisions taken back: made on another item than the one holding their id now."""
        if self.session is None:
            return {}
        return self.session.moved

    def reopened(self) -> dict[str, dict[str, Any]]:
        """Items a fired watch reopened (``FeatureSession.reopened_now``: the session's replay, no
        disk read); a backend without a session reads them once, from disk."""
        if self.session is not None:
            return self.session.reopened_now()
        if self._reopened is None:
            # lazy: only a look at an already-read feature (no session) reads the journal here
            from scars.core.samsara.decisions import reopened_now

            self._reopened = reopened_now(self.feature.path)
        return self._reopened

    def history(self, item_id: str) -> list[dict]:
        if self.session is None:
            return []
        try:
            return list(self.session.history(item_id))
        except KeyError:
            return []

    def current_round(self) -> int | None:
        if self.session is not None:
            return self.session.current_round()
        log = self.feature.iteration_log
        if log and log.rounds:
            return log.rounds[-1].round
        return None

    def round_info(self) -> dict[str, Any]:
        """{round, signal_lost_before, triage}: the open round (or the one triage will open)."""
        s = self.session
        if s is None:
            return {"round": self.current_round(), "signal_lost_before": None, "triage": dict(self.decisions)}
        open_round = s.open_round() or {}
        number = open_round.get("round") or s.next_round_number()
        return {
            "round": number,
            "signal_lost_before": open_round.get("signal_lost_before"),
            "triage": dict(s.round_triage()),
        }

    # -- validation -------------------------------------------------------------------
    @staticmethod
    def validate(action: str, fields: dict[str, Any]) -> list[FieldError]:
        """Core's validation of a decision's fields (one FieldError per refused field)."""
        problems = validate_decision(action, **fields)
        watch = fields.get("watch")
        if watch and not any(p.field == "watch" for p in problems):
            msg = validate_watch(watch)
            if msg:
                problems.append(FieldError("watch", msg))
        return problems

    # -- writes -----------------------------------------------------------------------
    def _writable(self) -> FeatureSession:
        refuse_if_read_only(
            (self.read_only_reason or READ_ONLY) if self.read_only or self.session is None else None,
            "this decision is not recorded",
        )
        assert self.session is not None
        return self.session

    def _as(self, decided_by: str | None) -> FeatureSession:
        """The writable session, recording as ``decided_by`` (the pair's current driver)."""
        s = self._writable()
        if decided_by:
            s.user = decided_by
        return s

    def stopped(self) -> tuple[int, str] | None:
        """(round, decision) when no round is open and the latest round ended the iteration (stop,
        forced_stop): the loop went on to Validation, and going on is an explicit round start
        (core's ``FeatureSession.stopped``; without a session, the log's last round)."""
        if self.session is not None:
            return self.session.stopped()
        log = self.feature.iteration_log
        last = log.rounds[-1] if log is not None and log.rounds else None
        if last is None or last.decision not in ("stop", "forced_stop"):
            return None
        return last.round, last.decision

    def round_open(self) -> bool:
        return self.session is not None and self.session.current_round() is not None

    # A decision opens a round by core's one rule (FeatureSession.open_round_for_decision), as
    # `scars decide` and an answers file do: refused after a stop (IterationStopped: the app asks
    # to start the next round, ``start_round``) and past max_rounds until ``round_override`` gives
    # the reason to go on anyway (the app asks for it: ``OverrideReason``).
    # In auto mode the decision that completes the round's triage writes its entry then (core's
    # gates.record_triage_decided, as `scars decide`).
    def decide(self, item_id: str, action: str, *, decided_by: str | None = None, **fields: Any) -> Any:
        s = self._as(decided_by)
        saved = s.decide(item_id, action, override_max_rounds=self.round_override, **fields)
        _triage_decided(s)
        return saved

    def decide_many(self, item_ids: list[str], action: str, *, decided_by: str | None = None, **fields: Any) -> list:
        s = self._as(decided_by)
        saved = s.decide_many(item_ids, action, override_max_rounds=self.round_override, **fields)
        _triage_decided(s)
        return saved

    def start_round(self, *, decided_by: str | None = None) -> dict[str, Any]:
        """Start the next round explicitly (the person confirmed it, as `scars round start`): after
        a stop, or to answer the round gate when no round is open. Past max_rounds only with
        ``round_override``."""
        return self._as(decided_by).start_round(override_max_rounds=self.round_override)

    def undo(self, *, decided_by: str | None = None) -> list[str]:
        return self._as(decided_by).undo()

    def undo_item(self, item_id: str, *, decided_by: str | None = None) -> list[str]:
        return self._as(decided_by).undo_item(item_id)

    def sign_off(self, item_id: str, reviewed_by: str) -> Any:
        return self._as(reviewed_by).sign_off(item_id, reviewed_by)

    def round_gate(self, *, decided_by: str | None = None) -> tuple[Evidence, list[Evidence]]:
        """The open round's gate Evidence and the blocked-fix Evidence of each fix awaiting its
        outcome. Looking writes nothing: with no round open, gathering refuses (UsageError) and
        the app asks first whether to start one (:meth:`start_round`)."""
        # lazy: the gates (every loop's gatherers and writers) load at the first gate, not for the first paint
        from scars.core import gates

        s = self._as(decided_by)
        # When a valve fired, the safety valve's gate: its warnings on screen, a continue there is
        # the explicit override (with its reason). Gathered once (it was gathered as round-continue,
        # where continue is refused, then again as the safety valve's).
        evidence = gates.gather("round-continue", s.path, session=s, follow_state=True)
        blocked = [gates.gather("blocked-fix", s.path, session=s, item=i) for i in evidence.context["blocked"]]
        return evidence, blocked

    def record_gate(
        self,
        evidence: Evidence,
        answer: str,
        reason: str | None,
        *,
        decided_by: str | None = None,
        round_fields: dict[str, Any] | None = None,
    ) -> GateResult:
        """Record a gate's answer through the gates' one record path, under this session."""
        # lazy: loaded with the gate's evidence already (round_gate)
        from scars.core import gates

        s = self._as(decided_by)
        result = gates.record(
            evidence, answer, reason, user=s.user, source=app_provenance(), session=s, round_fields=round_fields
        )
        self.feature = s.feature
        return result

    def reload(self) -> Feature:
        if self.session is not None:
            self.session.reload()
            self.feature = self.session.feature
        return self.feature

    def close(self) -> None:
        if self.session is not None:
            try:
                self.session.close()
            finally:
                self.session = None


def _triage_decided(session: FeatureSession) -> None:
    """The triage entry, when this decision completed the round's triage (auto mode only: a
    human-mode decision never loads the gates)."""
    if session.feature is not None and session.feature.auto_mode:
        # lazy: the gates (every loop's gatherers and writers) load at the first gate, not for the first paint
        from scars.core import gates

        gates.record_triage_decided(session)
