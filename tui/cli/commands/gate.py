"""`scars gate GATE [PATH]`: answer one human gate of a loop, at a terminal or from a script.

Shows the evidence (rich), asks (questionary: arrow keys or one letter per choice), records
the answer in the loop's own files and prints the result (a line, or one JSON object with
``--json``). Non-interactive: ``--answer VALUE [--reason TEXT]``, ``SCARS_ANSWER_<GATE>`` /
``SCARS_REASON_<GATE>``, or ``--answers FILE``. Without a terminal and without an answer it
exits 3 at once, naming the command that would answer it (with ``--json``: the evidence too) —
unless ``--wait``: then the gate is posted as a request in the repository's inbox
(``scars.core.gates.requests``), its id printed at once, and the command blocks until a person
answers it (the scars app's Loops inbox, or `scars answer ID`), records the answer through the
same record path and prints it as an answer given here. The TTY check happens before
questionary is imported.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from scars.core import settings
from scars.core.errors import HumanNeeded, ScarsError, UsageError
from scars.core.gatekit.answers import ROUND_GATES
from scars.core.gatekit.catalog import answers_hint
from scars.core.loops.registry import GATES, gate_paths, get_gate
from scars.core.sanitize import one_line, shell_join
from scars.tui.cli.commands._feature import (
    add_auto_entry_arguments,
    add_rule3_arguments,
    answered_here,
    attended,
    rule3_from_args,
)


def description() -> str:
    """The command's --help text, from the registered loops' catalogs (a loop's gates and what its
    PATH is appear without a change here)."""
    gates = "; ".join(
        f"{g.id} ({g.loop}: {', '.join(g.values) if g.id != 'triage' else 'item decisions'})" for g in GATES.values()
    )
    return f"Answer one human gate of an iteration loop. Gates: {gates}. PATH is {'; or '.join(gate_paths())}" + (
        "; default: the current directory. samsara gates write auto-decisions.md entries (one per decision point) in "
        "auto mode only, unless --auto-entry / --no-auto-entry says otherwise; the other loops' gates "
        "always write theirs. Exit codes: 0 answered; 2 usage error; 3 a human is needed (no TTY, no "
        "answer; --json prints the evidence; with --wait: still pending at --timeout, default 540 s); 4 invalid answer (or a "
        "request's answer refused: the loop moved on); 5 lock held; 130 interrupted (nothing recorded; a --wait "
        "request stays pending unless --withdraw-on-exit)."
    )


def __getattr__(name: str) -> str:
    """``DESCRIPTION`` (what main's parser shows) read from the registry whenever it is built."""
    if name == "DESCRIPTION":
        return description()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _selecting(key: str) -> str:
    """The gates that take the option selecting ``key`` (a catalog Gate's ``selects``)."""
    return ", ".join(g.id for g in GATES.values() if key in g.selects)


# `--wait`'s default: under the 600 s an agent's shell tool allows a command (Claude Code's Bash tool).
WAIT_TIMEOUT = 540.0


def add_arguments(parser) -> None:
    parser.add_argument("gate", metavar="GATE", choices=list(GATES), help="gate id: " + ", ".join(GATES))
    parser.add_argument(
        "path",
        metavar="PATH",
        nargs="?",
        default=None,
        help="feature directory or the loop's state directory/file (default: .)",
    )
    parser.add_argument("--answer", metavar="VALUE", help="answer without asking (its value or its letter)")
    parser.add_argument("--reason", metavar="TEXT", help="the question-specific reason recorded with the answer")
    parser.add_argument(
        "--answers",
        metavar="FILE",
        help="YAML file mapping gate ids and item ids to answers; validated entirely, then replayed",
    )
    parser.add_argument("--item", metavar="ID", help=f"{_selecting('item')}: the scar item")
    parser.add_argument(
        "--blocked", metavar="TEXT", help="blocked-fix: the implementer's BLOCKED / NEEDS_CONTEXT reason"
    )
    parser.add_argument(
        "--bkit-feature",
        dest="feature",
        metavar="NAME",
        help=f"{_selecting('feature')}: the bkit feature (default: the primary feature)",
    )
    parser.add_argument(
        "--value",
        metavar="N",
        help="sprint-pause: the new budget (tokens) of increase-budget, or the new phase timeout (hours) of extend-timeout",
    )
    # The earlier spelling: --feature names a feature directory in decide / undo / round, so here
    # it is kept only for scripts that used it (not shown in --help).
    parser.add_argument("--feature", dest="feature", metavar="NAME", help=argparse.SUPPRESS)
    parser.add_argument("--as", dest="user", metavar="NAME", help="who decides (default: $SCARS_USER, git user, login)")
    add_auto_entry_arguments(parser)
    parser.add_argument(
        "--wait",
        action="store_true",
        help="without a terminal and an answer: post the gate as a request in the repository's inbox "
        "(.scars/requests/), print its id, wait until a person answers it (scars app, or scars answer ID), "
        "then record and print the answer",
    )
    parser.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=_seconds,
        help=f"--wait: give up after SECONDS (default {WAIT_TIMEOUT:g}: fits an agent's shell tool; exit 3, the "
        "request stays and --request ID waits again)",
    )
    parser.add_argument(
        "--request",
        metavar="ID",
        help="--wait: re-attach to request ID (posted by an earlier --wait) instead of a new one",
    )
    parser.add_argument(
        "--withdraw-on-exit",
        action="store_true",
        help="--wait: withdraw the pending request when interrupted (Ctrl-C, SIGTERM); by default it stays",
    )
    add_rule3_arguments(parser)  # round-continue / safety-valve: the round's Rule-3 fields
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a line")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0 or value != value or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: the timeout must be a positive number of seconds")
    return value


def _user(explicit: str | None) -> str:
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.samsara.decisions import resolve_user

    return resolve_user(explicit)


def _is_interactive() -> bool:
    return attended()


def _noninteractive_answer(args, gate) -> tuple[str | None, str | None, str]:
    """(answer, reason, source) from the flag, SCARS_ANSWER_<GATE>, or loop-spec's variables."""
    if args.answer is not None:
        return args.answer, args.reason, answered_here("flag", "flag --answer")
    env = settings.current()
    env_answer = env.gate_answer(gate.id)
    if env_answer is not None and env_answer.strip():
        reason = args.reason if args.reason is not None else env.gate_reason(gate.id)
        return env_answer, reason, answered_here("env", f"environment {settings.env_var(gate.id)}")
    if gate.id == "spec" and env.loop_spec_non_interactive:
        raw = env.loop_spec_iterate_spec_answer
        value = raw.strip() or "reopen"
        if value not in ("reopen", "ship"):
            raise UsageError(f"LOOP_SPEC_ANSWER_ITERATE_SPEC={raw!r}: must be reopen (default) or ship")
        reason = args.reason
        if reason is None:
            reason = f"LOOP_SPEC_ANSWER_ITERATE_SPEC={value} under LOOP_SPEC_NON_INTERACTIVE (prepared answer of this non-interactive run)"
        return value, reason, answered_here("env", "environment LOOP_SPEC_ANSWER_ITERATE_SPEC")
    return None, args.reason, answered_here("prompt", "terminal")


def _emit(args, results: list, named: str) -> None:

    main = next((r for r in results if r.gate == named), results[-1])
    if args.json:
        obj = main.as_json()
        others = [r.as_json() for r in results if r is not main]
        if others:
            obj["replayed"] = others
        print(json.dumps(obj, ensure_ascii=True))
        return
    for r in results:
        reason = f" — {one_line(r.reason, 100)}" if r.reason else ""
        print(
            one_line(
                f"gate {r.gate}: {r.answer} → {r.decision} (by {r.decided_by}){reason}; "
                f"recorded: {', '.join(r.recorded) or 'nothing'}"
            )
        )
        if r.extra.get("transition"):  # the iteration ended: seed 002's final transition line
            print(one_line(str(r.extra["transition"])))


def _fail_json(args, gate_id: str, exc: ScarsError, evidence) -> None:
    if args.json:
        args.json_error_printed = True  # the command line prints no second error object
        out: dict[str, Any] = {"gate": gate_id, "answer": None, "error": str(exc), "exit_code": exc.exit_code}
        if evidence is not None:
            out["evidence"] = evidence.as_json()
        print(json.dumps(out, ensure_ascii=True))


def run(args) -> int:
    gate = get_gate(args.gate)
    shown: list = []  # the evidence once read: printed with a refusal or a "human needed"
    try:
        return _run(args, gate, shown)
    except ScarsError as exc:
        _fail_json(args, gate.id, exc, shown[-1] if shown else None)
        raise


def _run(args, gate, shown: list) -> int:
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core import gates as core

    path = args.path if args.path is not None else "."
    options: dict[str, Any] = {"item": args.item, "blocked": args.blocked, "feature": args.feature, "value": args.value}
    if args.answers:
        if args.answer is not None:
            raise UsageError("give either --answer or --answers, not both")
        results = core.replay_answers_file(
            gate.id,
            path,
            args.answers,
            user=_user(args.user),
            options=options,
            auto_entry=args.auto_entry,
            tty=attended(),
        )
        _emit(args, results, gate.id)
        return 0
    if (args.timeout is not None or args.request or args.withdraw_on_exit) and not args.wait:
        raise UsageError("--timeout, --request and --withdraw-on-exit go with --wait")
    if gate.id == "triage":
        if args.wait and (args.request or not _is_interactive()):
            # Triaged item by item in the app (Enter on the request opens the feature), then "done".
            return _wait(args, gate, path, {}, None if args.request else core.gather("triage", path))
        return _triage(args, path)
    answer, reason, source = _noninteractive_answer(args, gate)
    if args.wait and args.request and answer is None:
        return _wait(args, gate, path, options, None)
    evidence = core.gather(gate.id, path, **options)
    shown.append(evidence)
    round_gate = evidence.gate.id in ROUND_GATES
    fields = rule3_from_args(args)
    if fields and not round_gate:
        raise UsageError("--evidence, --residual-risk, --budget-spent and --rule3-none belong to a round gate")
    if answer is None:
        if args.wait and not _is_interactive():
            return _wait(args, gate, path, options, evidence)
        if not _is_interactive():
            raise HumanNeeded(
                f"gate {gate.id} needs a human: no terminal and no answer given. Answer it with:\n  "
                + core.answer_hint(evidence, args.path)
            )
        answer, reason = _ask(evidence)
        source = answered_here("prompt", "terminal")
        if round_gate:
            fields = _ask_rule3(evidence, fields)
    else:
        # Validate before anything else so a bad flag never half-records.
        core.validate_answer(evidence, answer, reason)
    result = _answer_waiting_request(args, path, evidence, answer, reason, source, fields)
    if result is None:
        result = core.record(
            evidence,
            answer,
            reason,
            user=_user(args.user),
            source=source,
            auto_entry=args.auto_entry,
            round_fields=fields or None,
        )
    _emit(args, [result], gate.id)
    return 0


def _answer_waiting_request(args, path: str, evidence, answer: str, reason: str | None, source, fields: dict[str, Any]):
    """When a process waits on this very gate (`scars gate … --wait`), the answer given here
    answers its request (with a round gate's Rule-3 fields) and is recorded through it, so that
    the process wakes; else None."""
    if args.auto_entry is not None:  # an entry choice the request does not carry: recorded in place
        return None
    # lazy: loaded when the command runs, not for `scars --help` (every command module is imported)
    from scars.core.gates import requests as rq

    root = rq.requests_root(path)
    if not rq.inbox_dir(root).is_dir():
        return None
    asked = rq.pending_for(root, evidence)
    if asked is None:
        return None
    user = _user(args.user)
    rid = asked.request.id
    rq.answer_request(
        root,
        rid,
        answer,
        reason,
        user=user,
        source=source,
        value=args.value,
        shown=asked.fingerprint,
        round_fields=fields or None,
    )
    print(f"scars: {asked.request.asked_by} waits on this gate: answered its request {rid}", file=sys.stderr)
    return rq.apply_request(root, rid, user=user)


def _wait(args, gate, path: str, options: dict[str, Any], evidence) -> int:
    """Post the gate as a request (or re-attach to ``--request``), wait for a person's answer,
    record it through the one record path, print it as an answer given here."""
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    import signal

    def _terminate(signum, frame):  # a signal handler
        raise KeyboardInterrupt

    # SIGTERM is Ctrl-C from the moment the request can exist: its id is printed, it stays (or is withdrawn).
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        result = _post_and_wait(args, gate, path, options, evidence)
    finally:
        signal.signal(signal.SIGTERM, previous)
    _emit(args, [result], gate.id)
    return 0


def _post_and_wait(args, gate, path: str, options: dict[str, Any], evidence):
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    import time

    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.errors import LockHeld
    from scars.core.gates import requests as rq
    from scars.core.gates.outcome import loop_next

    root = rq.requests_root(path)
    user = _user(args.user)
    if args.request:
        req = rq.load_request(root, args.request)
        if req.gate != gate.id:
            raise UsageError(f"request {req.id} is for gate {req.gate}, not {gate.id}")
    else:
        req = rq.post_request(evidence, path, user=user, options=options, root=root)
    again = shell_join(["scars", "gate", gate.id, str(path), "--wait", "--request", req.id])
    try:
        # The wait lock is held before the id is printed: whoever reads the id sees a waiter.
        with rq.waiting(root, req.id, user):
            if args.json:
                line = {
                    "request": req.id,
                    "status": req.status,
                    "gate": gate.id,
                    "path": req.path,
                    "inbox": str(rq.inbox_dir(root)),
                }
                print(json.dumps(line, ensure_ascii=True), flush=True)
            else:
                print(
                    f"scars: gate {gate.id} waits for a person: request {req.id} (answer it in the scars app's Loops "
                    f"inbox, or: scars answer {req.id} --answer … --reason …)",
                    file=sys.stderr,
                    flush=True,
                )
            timeout = WAIT_TIMEOUT if args.timeout is None else args.timeout
            deadline = time.monotonic() + timeout
            told = False  # said once that the answer waits for the loop's writer lock
            while True:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                try:
                    got = rq.wait_for_answer(root, req.id, timeout=left)
                except HumanNeeded:
                    raise HumanNeeded(
                        f"gate {gate.id}: request {req.id} is still pending after {timeout:g} s; it stays in "
                        f"the inbox. Wait again with:\n  {again}"
                    ) from None
                if got.status == "withdrawn":
                    raise HumanNeeded(
                        f"gate {gate.id}: request {req.id} was withdrawn by {(got.withdrawn or {}).get('by', '?')}; "
                        "nothing was recorded"
                    )
                try:
                    result = rq.apply_request(root, req.id, user=user)
                except LockHeld as exc:  # the loop's writer is busy (an open app): the answer waits, so do we
                    if deadline is not None and time.monotonic() >= deadline:
                        raise
                    if not told:
                        told = True
                        print(
                            f"scars: request {req.id} is answered ({got.answered_text()}); it is recorded once the "
                            f"loop's writer lets go: {exc}",
                            file=sys.stderr,
                            flush=True,
                        )
                    time.sleep(0.5)
                    continue
                # what the loop does next: the same words as the MCP server's wait_for_answer
                result.extra["next"] = loop_next(result.gate, result.answer, req.loop_path(root))
                return result
    except KeyboardInterrupt:
        if args.withdraw_on_exit:
            after = rq.withdraw_request(root, req.id, user=user)
            state = "withdrawn" if after.status == "withdrawn" else f"{after.status} (an answer is never lost)"
        else:
            state = f"still pending; wait again with: {again}"
        print(f"scars: request {req.id} {state}", file=sys.stderr, flush=True)
        raise


def _ask(evidence):
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.tui.cli.render.console import make_console
    from scars.tui.cli.render.gate_prompts import ask, render_evidence

    render_evidence(make_console(), evidence)
    return ask(evidence)


def _ask_rule3(evidence, given: dict[str, Any]) -> dict[str, Any]:
    """At a terminal, the Rule-3 fields the round's fix reports do not give (and no flag gave)."""
    # lazy: loaded when the command runs, not for `scars --help` (every command module is imported)
    from scars.tui.cli.render.gate_prompts import ask_rule3

    missing = [k for k in evidence.facts.get("rule3_missing", ()) if k not in given]
    return {**given, **ask_rule3(missing)} if missing else given


def _triage(args, path: str) -> int:
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core import gates as core

    if args.answer is not None:
        raise UsageError("triage takes item decisions: use --answers FILE (or run it at a terminal)")
    if not _is_interactive():
        raise HumanNeeded(
            "gate triage needs a human: no terminal and no answers file. Answer it with:\n  "
            + answers_hint(get_gate("triage"), args.path)
        )
    # lazy: another command's module, loaded when this command runs
    from scars.tui.cli.commands import triage as triage_cmd

    evidence = core.gather("triage", path)
    app_args = argparse.Namespace(
        feature_dir=str(evidence.target), read_only=False, pair=None, require_second=[], as_user=args.user, keymap=None
    )
    code = int(triage_cmd.run(app_args) or 0)
    if code != 0:
        return code
    result = core.record_triage(
        evidence,
        user=_user(args.user),
        source=answered_here("app", "terminal (scars triage app)"),
        auto_entry=args.auto_entry,
    )
    if result is None:
        print("gate triage: no decision was made in the app; nothing recorded", file=sys.stderr)
        return 0
    _emit(args, [result], "triage")
    return 0
