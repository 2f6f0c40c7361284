"""Errors a user can cause. Each is typed; the CLI edge maps them to exit codes.

Exit codes (documented in docs/commands.md, "Exit codes"):
  0  done (for reads: read, failures listed)
  2  usage error or path not found
  3  ``--strict`` and a parse failure exists; for gates: a human is needed
  4  a refused decision / an invalid answer
  5  another writer holds the lock
  6  a write (or a folder given) leads outside the repository through a symlink: refused
  7  an agent's answer at a human-in-the-loop gate (no terminal; agent answers not allowed)
  8  recorded in the journal, but a file it also goes to was not written (disk full …)
  130 interrupted by the user
"""

from __future__ import annotations

from collections import namedtuple


class ScarsError(Exception):
    """Base class of every error a user can cause. ``exit_code`` is used by the CLI."""

    exit_code = 1


class UsageError(ScarsError):
    """Bad arguments or a path that is not what the command needs."""

    exit_code = 2


class PathNotFound(UsageError):
    """A path given on the command line does not exist or holds no loop state."""

    @classmethod
    def missing(cls, path: object) -> PathNotFound:
        """The one wording of a path that is not there, whichever command was given it."""
        return cls(f"{path} does not exist")


class HumanNeeded(ScarsError):
    """A gate needs a person and none can be asked (no TTY, no answer given)."""

    exit_code = 3


class DecisionRefused(ScarsError):
    """A decision or an answer failed validation. ``errors`` names the fields."""

    exit_code = 4

    def __init__(self, message: str, errors: list[FieldError] | None = None):
        super().__init__(message)
        self.errors: list[FieldError] = list(errors or [])


class ReadOnly(DecisionRefused):
    """A write asked of a read-only session (``scars triage --read-only``, ``scars serve`` without
    ``--write``, a feature whose lock another writer holds): refused before anything is written."""


class IterationStopped(DecisionRefused):
    """A decision while no round is open and the iteration stopped (its latest round's decision
    was stop or forced_stop: the loop went on to Validation). Deciding again iterates again, so
    the next round is started explicitly first (``scars round start``; the app asks). ``round``
    and ``decision``: the round that stopped it and how."""

    def __init__(self, message: str, *, round: int, decision: str):  # the round's number
        super().__init__(message, [FieldError("round", f"the iteration stopped after round {round} ({decision})")])
        self.round = round
        self.decision = decision


READ_ONLY = "read-only (--read-only)"


def read_only_note(read_only: str | bool, what: str) -> str:
    """THE words of what a read-only session does not do: the reason (text, or True for
    :data:`READ_ONLY`), then ``what``. Shown where the write is offered (a disabled action says
    why before it is tried) and in the refusal when it is tried (:func:`refuse_if_read_only`)."""
    reason = read_only if isinstance(read_only, str) else READ_ONLY
    return f"{reason}: {what}"


def refuse_if_read_only(read_only: str | bool | None, what: str) -> None:
    """THE read-only rule, checked by every write path (the gates' record, a request's answer,
    apply and withdrawal, a samsara session's writes) before it touches any file: a truthy
    ``read_only`` (the reason as text, or True for :data:`READ_ONLY`) raises :class:`ReadOnly`
    saying what was not done. Falsy: the caller may write."""
    if read_only:
        reason = read_only if isinstance(read_only, str) else READ_ONLY
        raise ReadOnly(f"{read_only_note(reason, what)} — nothing was written", [FieldError("read_only", reason)])


class LockHeld(ScarsError):
    """Another writer holds the feature's lock. ``holder`` describes it."""

    exit_code = 5

    def __init__(self, message: str, holder: dict | None = None):
        super().__init__(message)
        self.holder = dict(holder or {})


class AgentAnswerRefused(ScarsError):
    """In human-in-the-loop mode, an answer from a detected agent session without a terminal
    (``scars.core.provenance``): a person answers there, never an agent in their name."""

    exit_code = 7


class PartlyWritten(ScarsError):
    """A record is durable in the journal, but a file it also goes to (auto-decisions.md,
    iteration-log.yaml) was not written — a durable write failed (disk full, I/O error). The
    message names what was written and what was not, and how the rest is written from the journal
    (`scars round flush`, or the next command that records in the feature): retrying the command
    would record it twice."""

    exit_code = 8


class ChangedOnDisk(ScarsError):
    """A file changed on disk since it was read, and the change cannot be merged."""

    exit_code = 5


class OutsideRepository(ScarsError):
    """A write whose target, or a folder a command was given, leads outside the repository (a
    symlink), or is not a regular file: refused, nothing written. ``link`` is the path met,
    ``leads_to`` where it leads."""

    exit_code = 6

    def __init__(self, message: str, *, link: str = "", leads_to: str = ""):
        super().__init__(message)
        self.link = link
        self.leads_to = leads_to


class FieldError(namedtuple("FieldError", ("field", "message"))):
    """One refused field: ``field`` is the decision field's name, ``message`` says why. A named
    tuple, not a record: every command imports this module, and `scars --help` imports no ``typing``
    (which ``scars.core.records`` does: tests/tui/cli/test_startup_imports.py)."""

    __slots__ = ()

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"
