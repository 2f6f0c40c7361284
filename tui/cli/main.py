"""The `scars` command line: one sub-command per module in ``scars.tui.cli.commands``.

Each command module defines ``add_arguments(parser)`` and ``run(args) -> int`` (and
``DESCRIPTION``, its ``--help`` text), and imports only the standard library and ``scars.core``
at module level, so ``scars --help`` and ``scars status`` never import Textual. Its one-line
summary is in ``COMMANDS`` below: ``scars --help`` imports no command module, and a command
imports its own module only (tests/tui/cli/test_startup_imports.py). Typed errors from
``scars.core.errors`` are mapped to exit codes here, at the edge, and nowhere else.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from scars.core import __version__
from scars.core.errors import DecisionRefused, LockHeld, ScarsError, UsageError

# `scars --help` imports neither typing nor the settings (their records): names for annotations only
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection
    from typing import Any

# (command, module, summary) in help order. A command module owns its arguments and behaviour;
# its summary (the line of `scars --help`) is here, so that listing the commands imports none.
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("triage", "scars.tui.cli.commands.triage", "open the triage app on a feature directory (resumes where you left off)"),
    ("status", "scars.tui.cli.commands.status", "summarise a feature directory (or every feature of a repository): signal_lost, groups, parse failures"),
    ("demo", "scars.tui.cli.commands.demo", "copy the bundled demo feature to a fresh directory and open it"),
    ("decide", "scars.tui.cli.commands.decide", "record a fix / accept / defer decision for scar items (durable before it returns)"),
    ("undo", "scars.tui.cli.commands.undo", "revert the latest decision, batch, sign-off or blocked-fix outcome (a new journal record)"),
    ("round", "scars.tui.cli.commands.round", "start or close an iteration round (close writes the round to iteration-log.yaml)"),
    ("log", "scars.tui.cli.commands.log", "check auto-decisions.md and iteration-log.yaml against each other and the reports"),
    ("gate", "scars.tui.cli.commands.gate", "answer a step-mode gate of a loop (`scars gate --help` lists them): show evidence, ask, record"),
    ("requests", "scars.tui.cli.commands.requests", "list the gate requests loops posted with `scars gate … --wait`; apply or withdraw them"),
    ("answer", "scars.tui.cli.commands.answer", "answer a gate request a loop posted with `scars gate … --wait` (from a plain shell)"),
    ("loops", "scars.tui.cli.commands.loops", "list every iteration loop under PATH (every registered loop system), waiting ones first"),
    ("budget-context", "scars.tui.cli.commands.budget_context", "print the iteration_budget_context envelope for the next dispatch, with the safety valves"),
    ("advise", "scars.tui.cli.commands.advise", "advise on the next iteration: budget matrix, fixability, failure modes, convergence trend"),
    ("watch", "scars.tui.cli.commands.watch", "check the machine-checkable watches of accepted items; a fired watch reopens its item"),
    ("export", "scars.tui.cli.commands.export", "export a feature's (or every feature's) scar items and decisions as SARIF 2.1.0, OpenVEX or JSON"),
    ("serve", "scars.tui.cli.commands.serve", "serve the triage app to a browser (localhost, a token, read-only unless --write)"),
    ("mcp", "scars.tui.cli.commands.mcp", "serve the human gate to coding agents over MCP (stdio): request_gate, wait_for_answer …"),
    ("cache", "scars.tui.cli.commands.cache", "show the feature cache (where, entries, size) or clean it: the bound now, or --all"),
    ("config", "scars.tui.cli.commands.config", "show where the configuration lives (config.toml, keymap.toml, cache) and its values"),
    ("completion", "scars.tui.cli.commands.completion", "print a shell completion script (bash, zsh or fish)"),
    ("init", "scars.tui.cli.commands.init", "wire a repository for Claude Code, Codex CLI and Gemini CLI: MCP server, instructions, hook"),
    ("hook", "scars.tui.cli.commands.hook", "agent hooks: `scars hook pre-tool-use` stops an agent answering a human gate itself"),
)  # fmt: skip

# `scars COMMAND --help` ends with these (tests/tui/cli/test_cli_help.py: every command has some).
F = "changes/2026-07-10_csv-export"
EXAMPLES: dict[str, tuple[str, ...]] = {
    "triage": ("scars triage", f"scars triage {F}", f"scars triage {F} --pair alice,bob --require-second accept"),
    "status": ("scars status", f"scars status {F} --json", "scars status . --strict"),
    "demo": ("scars demo", "scars demo --dir /tmp/ledger", "scars demo --json"),
    "decide": (
        f"scars decide ks-3bef218a5a --fix --feature {F}",
        'scars decide ks-3715cab76a --accept --signal "a second writer appears" --owner ops --rationale "one writer today"',
        'scars decide sf-7c43f18592 ua-e596a10deb --defer --reason "needs the v2 API"',
    ),
    "undo": (f"scars undo --feature {F}", "scars undo --json"),
    "round": (
        "scars round start",
        'scars round close --decision stop --reason "the 3 left are accepted with owners"',
        "scars round status --json",
    ),
    "log": (f"scars log verify {F}", "scars log verify . --json"),
    "gate": (
        "scars gate entry",
        f'scars gate round-continue {F} --answer stop --reason "the rest is accepted"',
        "scars gate pdca-continue . --json",
        "scars gate triage --answers answers.yaml",
        "scars gate spec .loop-spec/features/sync --wait --json",
    ),
    "requests": ("scars requests", "scars requests . --all --json", "scars requests apply spec-3fa9c2"),
    "answer": ('scars answer spec-3fa9c2 --answer ship --reason "offline sync is v2 scope"',),
    "loops": ("scars loops", "scars loops . --waiting", "scars loops review-stage/REVIEW_STATE.json --json"),
    "budget-context": (f"scars budget-context {F} --json",),
    "advise": (f"scars advise {F}", "scars advise . --token-budget 200000 --tokens-used 150000"),
    "watch": (f"scars watch check {F}", "scars watch check . --dry-run --json"),
    "export": (f"scars export {F}", f"scars export {F} --format sarif -o scars.sarif"),
    "serve": (f"scars serve {F}", f"scars serve {F} --port 8765 --write --as bob"),
    "mcp": ("scars mcp", "scars mcp --root ~/src/app"),
    "cache": (
        "scars cache",
        "scars cache clean --dry-run",
        "scars cache clean --older-than 7",
        "scars cache clean --all --json",
    ),
    "config": ("scars config", "scars config --json"),
    "completion": (
        "scars completion bash > ~/.local/share/bash-completion/completions/scars",
        "scars completion zsh > ~/.zfunc/_scars",
        "scars completion fish > ~/.config/fish/completions/scars.fish",
    ),
    "init": ("scars init", "scars init --dry-run", "scars init --agent claude-code", "scars init --remove"),
    "hook": ("scars hook pre-tool-use < payload.json",),
}


def examples_text(name: str) -> str | None:
    lines = EXAMPLES.get(name)
    return "Examples:\n" + "\n".join(f"  {line}" for line in lines) if lines else None


DESCRIPTION = (
    "scars — the human gate of agentic iteration loops. Triage scar items, decide rounds, "
    "and answer step-mode gates; decisions are written into the loop's own files."
)
EPILOG = (
    "Exit codes: 0 ok; 1 a write failed (disk full …), nothing recorded; 2 usage error or path not "
    "found; 3 parse failures with --strict, or a gate needs a human; 4 decision refused / invalid "
    "answer; 5 another writer holds the lock; 6 a write would leave the repository through a "
    "symlink; 7 an agent answered a human gate; 8 recorded in the journal, a file not written "
    "(`scars round flush` writes it); 130 interrupted. Run `scars demo` to try it on a bundled example."
)


class Parser(argparse.ArgumentParser):
    """argparse whose usage errors are UsageError (exit 2, and a JSON error object with --json)."""

    def error(self, message: str):  # never returns
        try:
            self.print_usage(sys.stderr)
            sys.stderr.flush()
        except BrokenPipeError:  # nobody reads stderr: still the usage error's exit code
            _quiet(sys.stderr)
        # main prints "scars: " before every error: the command's name only, never "scars: scars …".
        command = self.prog.removeprefix("scars").strip()
        raise UsageError(f"{command}: {message}" if command else message)


class Wrapped(argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs wrapped to the terminal (argparse's width: ``COLUMNS``, else the
    terminal's), at spaces only — never inside a word, a path or an option —, each line with the
    indent it starts with; the line breaks a text gives (its examples) are kept."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        # lazy: only for --help
        import textwrap

        out: list[str] = []
        for line in text.splitlines():
            lead = line[: len(line) - len(line.lstrip(" "))]
            if len(indent + line) <= width or not line.strip():
                out.append(indent + line)
                continue
            out.extend(
                textwrap.wrap(
                    line.strip(),
                    width=max(width, 20),
                    initial_indent=indent + lead,
                    subsequent_indent=indent + lead + ("    " if lead else ""),
                    break_long_words=False,
                    break_on_hyphens=False,
                )
            )
        return "\n".join(out)


def unknown_command(word: str) -> str:
    """The usage error of ``scars WORD`` when WORD names no command: the nearest commands by
    spelling (did you mean), else the pointer to the list."""
    # lazy: only for a mistyped command
    import difflib

    names = [name for name, _module, _summary in COMMANDS]
    near = difflib.get_close_matches(word, names, n=3, cutoff=0.6)
    if not near:
        near = [n for n in names if n.startswith(word[:3])] if len(word) >= 3 else []
    hint = f"; did you mean {' or '.join(repr(n) for n in near)}?" if near else ""
    return f"unknown command {word!r}{hint} (`scars --help` lists the commands)"


class CommandModuleError(RuntimeError):
    """A command listed in ``COMMANDS`` cannot be imported: this installation is broken."""


def _import_command(name: str, module_name: str):  # a module
    try:
        return importlib.import_module(module_name)
    except Exception as exc:  # missing or broken: never a command silently left out
        raise CommandModuleError(
            f"the '{name}' command cannot be loaded ({module_name}: {type(exc).__name__}: {exc}); reinstall scars"
        ) from exc


def _load_commands() -> list[tuple[str, object]]:
    """Every command of ``COMMANDS``; a missing or broken module raises CommandModuleError."""
    return [(name, _import_command(name, module_name)) for name, module_name, _summary in COMMANDS]


def command_word(words: list[str]) -> str | None:
    """The command a command line runs: its first word when that names one (the options before
    a command are only --help and --version), else None (bare `scars`, `scars --help`)."""
    if words and words[0] in {name for name, _module, _summary in COMMANDS}:
        return words[0]
    return None


def build_parser(load: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command; ``load``: the commands whose modules are imported for their
    arguments (None: all of them — completion and tests). With none loaded (``()``: `scars --help`,
    bare `scars`) every command is listed with its summary only, so `scars --help` imports no
    command module; with some, the parser has those only (`scars status` imports its own module
    and builds no parser for the 20 others: argparse's 22 parsers were most of the parse)."""
    parser = Parser(
        prog="scars",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=Wrapped,
    )
    parser.add_argument("-V", "--version", action="version", version=f"scars {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module_name, summary in COMMANDS:
        if load is not None and name not in load:
            if not load:
                sub.add_parser(name, help=summary)
            continue
        module: Any = _import_command(name, module_name)
        p = sub.add_parser(
            name,
            help=summary,
            description=getattr(module, "DESCRIPTION", summary),
            epilog=examples_text(name),
            formatter_class=Wrapped,
        )
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def error_json(exc: ScarsError) -> dict[str, Any]:
    """The one JSON error object every `--json` command prints on stdout when it fails."""
    out: dict[str, Any] = {"ok": False, "error": type(exc).__name__, "message": str(exc), "exit_code": exc.exit_code}
    if isinstance(exc, DecisionRefused):
        out["fields"] = [{"field": e.field, "message": e.message} for e in exc.errors]
    if isinstance(exc, LockHeld):
        out["holder"] = exc.holder
    return out


def _say(message: str) -> None:
    """One line on stderr; a reader of stderr that went away (``scars nosuchcmd 2>&1 | head -0``)
    does not change the command's exit code: the line is dropped, as any later write to it."""
    try:
        # lazy: only when a message is said (`scars --help` loads no sanitiser)
        from scars.core.sanitize import visible

        print(visible(message), file=sys.stderr, flush=True)  # a path or name from a repository, inert
    except BrokenPipeError:
        _quiet(sys.stderr)


def _quiet(stream: Any) -> None:
    # lazy: only when a reader went away
    from scars.tui.cli.render.plain import quiet_after_broken_pipe

    quiet_after_broken_pipe(stream)


def main(argv: list[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if words in (["--version"], ["-V"]):  # answered before any command module is imported
        print(f"scars {__version__}")
        return 0
    args: argparse.Namespace | None = None
    try:
        command = command_word(words)
        parser = build_parser(load=() if command is None else (command,))
        if command is None and words and not words[0].startswith("-"):
            parser.error(unknown_command(words[0]))  # the usage line, then the error (exit 2)
        args = parser.parse_args(words)  # `--help` ends here
        # lazy: the environment, read once for the command that runs (`scars --help` runs none)
        from scars.core import settings

        settings.load()
        run = getattr(args, "_run", None)
        if run is None:  # bare `scars`
            run = _import_command("scars", "scars.tui.cli.commands.home").run
        return int(run(args) or 0)
    except ScarsError as exc:
        _say(f"scars: {exc}")
        # --json: one error object on stdout, unless the command printed its own (scars gate).
        if "--json" in words and not getattr(args, "json_error_printed", False):
            import json  # lazy: only for an error

            try:
                sys.stdout.write(json.dumps(error_json(exc), ensure_ascii=True, indent=2) + "\n")
                sys.stdout.flush()
            except BrokenPipeError:
                _quiet(sys.stdout)
        return exc.exit_code
    except KeyboardInterrupt:
        _say("scars: interrupted")
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug of ours: one line for the user, the traceback on request
        from scars.core import settings  # lazy: the environment as this command read it (or reads it now)

        if settings.current().debug:
            raise
        _say(
            f"scars: internal error: {type(exc).__name__}: {exc} "
            "(nothing was reported saved by this command; set SCARS_DEBUG=1 for the traceback)"
        )
        return 1


def entry() -> None:  # pragma: no cover - console script shim
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
