"""Shared plumbing of the writing commands (decide, undo, round): the feature argument,
opening a session, JSON / text output of decisions and errors. Standard library and
scars.core only (no terminal library), like every command module."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from scars.core.sanitize import one_line


def add_feature_arguments(parser: argparse.ArgumentParser, *, user: bool = True) -> None:
    parser.add_argument(
        "--feature",
        metavar="DIR",
        default=".",
        help="the feature directory (changes/<date>_<feature>/) to act on (default: the current directory)",
    )
    if user:
        parser.add_argument(
            "--as",
            dest="as_user",
            metavar="NAME",
            help="who decides (default: $SCARS_USER, then git's user.name, then the login name)",
        )
    parser.add_argument("--json", action="store_true", help="print one JSON object (errors too) instead of text")


def add_auto_entry_arguments(parser: argparse.ArgumentParser) -> None:
    """--auto-entry / --no-auto-entry: whether a samsara gate answer appends its auto-decisions.md
    entries (default: the feature's execution mode — auto yes, human no)."""
    auto = parser.add_mutually_exclusive_group()
    auto.add_argument(
        "--auto-entry",
        dest="auto_entry",
        action="store_const",
        const=True,
        help="append the auto-decisions.md entries even in human mode (default: in auto mode only)",
    )
    auto.add_argument(
        "--no-auto-entry",
        dest="auto_entry",
        action="store_const",
        const=False,
        help="append no auto-decisions.md entry, even in auto mode",
    )


def add_rule3_arguments(parser: argparse.ArgumentParser) -> None:
    """Rule 3 of the iteration log: what the round spent, learned and left at risk."""
    parser.add_argument(
        "--evidence", action="append", default=None, metavar="TEXT", help="evidence gained (repeatable; none: none)"
    )
    parser.add_argument(
        "--residual-risk", action="append", default=None, metavar="TEXT", help="residual risk (repeatable; none: none)"
    )
    parser.add_argument(
        "--budget-spent",
        metavar="K=N,…",
        help="budget spent, e.g. implementer_dispatches=1,reviewer_dispatches=2,reviewer_retries=0,validation_runs=2 "
        "(none: none)",
    )
    parser.add_argument(
        "--rule3-none",
        action="store_true",
        help="record budget_spent, evidence_gained and residual_risk as none, explicitly",
    )


def rule3_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The round's Rule-3 fields from the flags (those not given are left out: the round takes
    them from its fix-round reports, or refuses). Raises DecisionRefused on a malformed value."""
    # lazy: the samsara gates' module, loaded when a round is recorded
    from scars.core.gates import round_fields

    return round_fields(
        budget_spent=args.budget_spent,
        evidence_gained=args.evidence,
        residual_risk=args.residual_risk,
        rule3="none" if args.rule3_none else None,
    )


def attended() -> bool:
    """Whether a person is at this command's terminal: stdin and stdout are terminals (what a
    decision's provenance says, scars.core.provenance)."""
    try:
        return sys.stdin.isatty() and sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def answered_here(channel: str, via: str):
    """The provenance of an answer this command takes (``channel``: flag, env, prompt,
    answers-file, request-answer), built by the one core function."""
    # lazy: loaded when a command records, not for its --help or completion
    from scars.core.provenance import provenance

    return provenance(channel, tty=attended(), via=via)


def open_session(args: argparse.Namespace, *, read_only: bool = False, via: str | None = None):
    """The feature's session; ``via``: the command's words (`scars decide`), given when its changes
    are a person's decisions — their provenance (a flag of this command) goes into every record."""
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.samsara.session import FeatureSession

    return FeatureSession.open(
        Path(args.feature),
        read_only=read_only,
        user=getattr(args, "as_user", None),
        provenance=answered_here("flag", via) if via is not None else None,
    )


def emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=True, indent=2) + "\n")


def decision_json(d) -> dict[str, Any]:
    return d.to_dict()


def decision_line(d, description: str | None = None) -> str:
    what = {"fix": "fix", "accept": "accept", "defer": "defer"}.get(d.action, d.action)
    parts = [f"{d.item_id}  {what.upper()}"]
    if description:
        parts.append(one_line(description, 60))
    extra = []
    if d.action == "accept":
        extra.append(f"owner: {one_line(d.owner or '', 40)}")
        extra.append(f"signal: {one_line(d.re_review_signal or '', 60)}")
    if d.action == "defer" and d.reason:
        extra.append(f"reason: {one_line(d.reason, 60)}")
    if d.blocked_outcome:
        extra.append(f"blocked fix: {d.blocked_outcome.replace('_', ' ')}")
    if d.reviewed_by:
        extra.append(f"reviewed by {one_line(d.reviewed_by, 40)}")
    extra.append(f"by {one_line(d.decided_by, 40)} at {d.decided_at}")
    return "  ".join(parts) + "\n    " + "; ".join(extra)
