"""The guard of an agent's tool calls (`scars hook pre-tool-use`, Claude Code's ``PreToolUse``
hook): a shell call or a file edit that would answer a human-mode gate in the person's place is
stopped, with a message pointing at the ``request_gate`` tool; everything else passes.

Stopped, when the loop it touches runs in human mode:

* ``scars decide``, ``scars answer``, ``scars gate … --answer`` / ``--answers``, a gate answered by
  a ``SCARS_ANSWER_<GATE>`` variable, ``scars round start|close|flush`` — however spelt: after
  ``cd DIR &&``, ``;``, ``|``, behind ``VAR=value`` / ``env`` / ``command`` / ``exec`` / ``nohup`` /
  ``time`` prefixes, as ``python -m scars``, ``uv run scars``, a path to ``scars``, or inside
  ``bash -c '…'`` / ``sh -c`` / ``eval``;
* an edit (Edit, MultiEdit, Write, NotebookEdit) of a loop's ``iteration-log.yaml`` or
  ``auto-decisions.md``, and a shell redirection (``>``, ``>>``) or ``tee`` into one.

Whether a loop runs in human mode is THE rule the record path applies to an agent's answer
(``scars.core.gates.recording.human_mode`` of the gate's evidence, which ``provenance.decided_by``
is given): samsara unless pre-thinking.md says ``Execution mode: auto``, loop-spec unless the
feature runs autonomous, the other loops always. When the loop cannot be read the call is stopped
(human mode is the default of every loop). Read-only commands and ``scars gate … --wait`` (which
asks a person) pass. The rule never writes anything.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

from scars.core.gates import recording
from scars.core.gates import requests as rq
from scars.core.loops.registry import GATES
from scars.core.records import record

EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
SHELL_TOOLS = frozenset({"Bash"})
LOOP_DECISION_FILES = frozenset({"iteration-log.yaml", "auto-decisions.md"})
ROUND_WRITES = frozenset({"start", "close", "flush"})
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "|&", ";;", "(", ")", "\n"})
_WRAPPERS = frozenset({"env", "command", "exec", "nohup", "time", "builtin", "nice", "stdbuf"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
_PYTHONS = ("python", "python3")


@record(slots=True)
class Verdict:
    """Whether the tool call may run; ``reason`` says why not (shown to the agent)."""

    allowed: bool
    reason: str = ""

    def hook_output(self) -> dict[str, Any] | None:
        """Claude Code's PreToolUse JSON output for this verdict (None: allowed, print nothing and
        let the normal permission flow go on)."""
        if self.allowed:
            return None
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": self.reason,
            }
        }


ALLOW = Verdict(True)


def _refusal(what: str, where: str) -> Verdict:
    return Verdict(
        False,
        f"scars: stopped — {what} would answer a human gate in the person's place ({where} runs in "
        "human-in-the-loop mode). Ask the person instead: call the scars MCP tool `request_gate` with the "
        "gate and path, then `wait_for_answer` with the request id (from a shell: `scars gate GATE PATH "
        "--wait`). The person answers in the scars app or with `scars answer` at their terminal.",
    )


# -- the mode of a loop: the record path's one rule ---------------------------------------------


def human_mode_of_gate(gate: str, path: str | os.PathLike[str], **options: Any) -> bool:
    """Whether ``gate`` at ``path`` is a person's to answer (``recording.human_mode`` of its
    evidence, read without writing); True when the loop cannot be read."""
    tries: list[tuple[str, dict[str, Any]]] = [(gate, options)]
    if gate in GATES and GATES[gate].loop == "samsara" and gate != "entry":
        tries.append(("entry", {}))  # a samsara gate not open now (no round): the feature's own mode
    for gate_id, opts in tries:
        try:
            return recording.human_mode(recording.gather(gate_id, path, read_only=True, **opts))
        except Exception:  # noqa: BLE001 - an unreadable or missing loop: human mode, every loop's default
            continue
    return True


def human_mode_of_request(rid: str, path: str | os.PathLike[str], cwd: str | os.PathLike[str]) -> bool:
    try:
        root = rq.requests_root(path, cwd)
        req = rq.load_request(root, rid)
        return recording.human_mode(rq.current_evidence(req, root, read_only=True))
    except Exception:  # noqa: BLE001 - an unreadable request: human mode, every loop's default
        return True


def human_mode_of_dir(folder: str | os.PathLike[str]) -> bool:
    """The mode of the loop whose decision files are in ``folder``: a samsara feature's (its
    entry gate's evidence), else a loop-spec feature's, else human mode."""
    for gate in ("entry", "spec"):
        try:
            return recording.human_mode(recording.gather(gate, folder, read_only=True))
        except Exception:  # noqa: BLE001 - not this loop's folder, or unreadable: try the next
            continue
    return True


# -- reading a shell command --------------------------------------------------------------------


def _tokens(command: str) -> list[str] | None:
    lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:  # an unclosed quote: read it as words split on white space
        return None


def _simple_commands(tokens: list[str]) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for tok in tokens:
        if tok in _SEPARATORS or (set(tok) <= set("&|;") and tok):
            out.append([])
        else:
            out[-1].append(tok)
    return [c for c in out if c]


def _is_assignment(word: str) -> bool:
    name, eq, _value = word.partition("=")
    return bool(eq) and name.replace("_", "a").isalnum() and not name[0].isdigit()


def _after_options(words: list[str]) -> list[str]:
    """``words`` from the first that is not an option (``uv run --with x scars …``: ``scars …``)."""
    i = 0
    while i < len(words) and words[i].startswith("-"):
        i += 2 if words[i] in ("--with", "--from", "--python", "-p", "--spec") else 1
    return words[i:]


def _scars_argv(words: list[str]) -> list[str] | None:
    """The arguments after ``scars`` when the words run scars (``scars``, a path to it,
    ``python -m scars``, ``uv run scars``, ``uvx scars``, ``pipx run scars``), else None."""
    if not words:
        return None
    prog = os.path.basename(words[0])
    if prog == "scars":
        return words[1:]
    if prog.startswith(_PYTHONS):
        rest = words[1:]
        while rest and rest[0].startswith("-") and rest[0] != "-m":
            rest = rest[1:]
        if len(rest) >= 2 and rest[0] == "-m" and rest[1].split(".")[0] == "scars":
            return rest[2:]
        return None
    if prog in ("uv", "pipx") and words[1:2] == ["run"]:
        return _scars_argv(_after_options(words[2:]))
    if prog == "uvx":
        return _scars_argv(_after_options(words[1:]))
    return None


def _option(args: list[str], name: str) -> str | None:
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


def _has(args: list[str], name: str) -> bool:
    return any(a == name or a.startswith(name + "=") for a in args)


def _positionals(args: list[str], with_value: frozenset[str]) -> list[str]:
    out: list[str] = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a.startswith("-"):
            skip = a in with_value
            continue
        out.append(a)
    return out


_GATE_VALUED = frozenset(
    {
        "--answer",
        "--answers",
        "--reason",
        "--item",
        "--bkit-feature",
        "--feature",
        "--as",
        "--timeout",
        "--request",
        "--blocked",
    }
)


def _here(cwd: str, p: str | None) -> str:
    return str(Path(cwd, p) if p else Path(cwd))


def _check_scars(args: list[str], env: dict[str, str], cwd: str) -> Verdict:
    words = (
        [a for a in args if a not in ("--help", "-h", "--version")] if args[:1] in (["--help"], ["--version"]) else args
    )
    if not words or _has(words, "--help") or _has(words, "-h"):
        return ALLOW
    command, rest = words[0], words[1:]
    if command == "decide":
        feature = _option(rest, "--feature") or "."
        if human_mode_of_gate("entry", _here(cwd, feature)):
            return _refusal("`scars decide`", f"the feature {feature}")
        return ALLOW
    if command == "round" and rest[:1] and rest[0] in ROUND_WRITES:
        feature = _option(rest, "--feature") or "."
        if human_mode_of_gate("entry", _here(cwd, feature)):
            return _refusal(f"`scars round {rest[0]}`", f"the feature {feature}")
        return ALLOW
    if command == "answer":
        pos = _positionals(rest, frozenset({"--answer", "--reason", "--path", "--as"}))
        where = _option(rest, "--path") or "."
        if not pos or human_mode_of_request(pos[0], _here(cwd, where), cwd):
            return _refusal("`scars answer`", f"the loop of request {pos[0] if pos else '?'}")
        return ALLOW
    if command == "gate":
        pos = _positionals(rest, _GATE_VALUED)
        gate = pos[0] if pos else ""
        answers_by_env = any(k.startswith("SCARS_ANSWER_") for k in env)
        if not (_has(rest, "--answer") or _has(rest, "--answers") or answers_by_env):
            return ALLOW  # asking (a terminal prompt, --wait): a person answers
        target = _here(cwd, pos[1] if len(pos) > 1 else None)
        options: dict[str, Any] = {}
        if _option(rest, "--item"):
            options["item"] = _option(rest, "--item")
        if human_mode_of_gate(gate, target, **options):
            how = "`scars gate … --answer`" if _has(rest, "--answer") else "answering `scars gate` without a person"
            return _refusal(how, f"the {gate or 'gate'}'s loop at {pos[1] if len(pos) > 1 else '.'}")
        return ALLOW
    return ALLOW


def _written_files(words: list[str], redirects: list[str]) -> list[str]:
    files = list(redirects)
    if words and os.path.basename(words[0]) == "tee":
        files += [w for w in words[1:] if not w.startswith("-")]
    if words and os.path.basename(words[0]) in ("sed", "perl") and any(w.startswith("-i") for w in words[1:]):
        files += [w for w in words[1:] if not w.startswith("-")]
    return files


def check_shell(command: str, cwd: str, depth: int = 0) -> Verdict:
    """The verdict on the shell command line ``command`` run in ``cwd``."""
    if depth > 4:
        return ALLOW
    tokens = _tokens(command)
    if tokens is None:
        tokens = command.split()
    here = cwd
    for simple in _simple_commands(tokens):
        redirects: list[str] = []
        words: list[str] = []
        i = 0
        while i < len(simple):  # redirections: their target is a file written
            tok = simple[i]
            if tok and set(tok) <= set("<>"):
                if ">" in tok and i + 1 < len(simple):
                    redirects.append(simple[i + 1])
                i += 2
                continue
            words.append(tok)
            i += 1
        env: dict[str, str] = {}
        while words and (_is_assignment(words[0]) or os.path.basename(words[0]) in _WRAPPERS):
            w = words.pop(0)
            if _is_assignment(w):
                name, _eq, value = w.partition("=")
                env[name] = value
            else:
                while words and words[0].startswith("-"):  # env -i, nice -n 5 …
                    words.pop(0)
        for target in _written_files(words, redirects):
            full = Path(here, target)
            if full.name in LOOP_DECISION_FILES and human_mode_of_dir(full.parent):
                return _refusal(f"writing {full.name} from the shell", f"the loop in {full.parent}")
        if not words:
            continue
        prog = os.path.basename(words[0])
        if prog == "cd":
            target = words[1] if len(words) > 1 else os.path.expanduser("~")
            here = str(Path(here, os.path.expanduser(target)))
            continue
        if prog in _SHELLS and "-c" in words[1:]:
            at = words.index("-c")
            if at + 1 < len(words):
                inner = check_shell(words[at + 1], here, depth + 1)
                if not inner.allowed:
                    return inner
            continue
        if prog == "eval":
            inner = check_shell(" ".join(words[1:]), here, depth + 1)
            if not inner.allowed:
                return inner
            continue
        args = _scars_argv(words)
        if args is None:
            continue
        verdict = _check_scars(args, env, here)
        if not verdict.allowed:
            return verdict
    return ALLOW


def check_edit(file_path: str, cwd: str) -> Verdict:
    full = Path(cwd, file_path)
    if full.name in LOOP_DECISION_FILES and human_mode_of_dir(full.parent):
        return _refusal(f"editing {full.name}", f"the loop in {full.parent}")
    return ALLOW


def check_tool_call(payload: Any) -> Verdict:
    """The verdict on one PreToolUse payload (Claude Code's hook input: ``tool_name``,
    ``tool_input``, ``cwd``). Anything that is not a shell call or an edit passes, and so does a
    payload that is not one (the hook never breaks the agent's other tools)."""
    if not isinstance(payload, dict):
        return ALLOW
    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    given = payload.get("cwd")
    cwd: str = given if isinstance(given, str) else os.getcwd()
    if not isinstance(tool_input, dict):
        return ALLOW
    if tool in SHELL_TOOLS and isinstance(tool_input.get("command"), str):
        return check_shell(tool_input["command"], cwd)
    if tool in EDIT_TOOLS:
        path = tool_input.get("file_path") or tool_input.get("notebook_path")
        if isinstance(path, str):
            return check_edit(path, cwd)
    return ALLOW
