"""The `scars` command line: one sub-command per module in ``scars.tui.cli.commands``.

Each command module defines ``HELP`` (one line), ``add_arguments(parser)`` and
``run(args) -> int``, and imports only the standard library and ``scars.core`` at module
level, so ``scars --help`` and ``scars status`` never import Textual. Typed errors from
``scars.core.errors`` are mapped to exit codes here, at the edge, and nowhere else.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any

from scars.core import settings
from scars.core.errors import DecisionRefused, LockHeld, ScarsError, UsageError

# (command, module) in help order. A command module owns its arguments and behaviour.
COMMANDS: tuple[tuple[str, str], ...] = (
    ("triage", "scars.tui.cli.commands.triage"),
    ("status", "scars.tui.cli.commands.status"),
    ("demo", "scars.tui.cli.commands.demo"),
    ("decide", "scars.tui.cli.commands.decide"),
    ("undo", "scars.tui.cli.commands.undo"),
    ("round", "scars.tui.cli.commands.round"),
    ("log", "scars.tui.cli.commands.log"),
    ("gate", "scars.tui.cli.commands.gate"),
    ("requests", "scars.tui.cli.commands.requests"),
    ("answer", "scars.tui.cli.commands.answer"),
    ("loops", "scars.tui.cli.commands.loops"),
    ("budget-context", "scars.tui.cli.commands.budget_context"),
    ("advise", "scars.tui.cli.commands.advise"),
    ("watch", "scars.tui.cli.commands.watch"),
    ("export", "scars.tui.cli.commands.export"),
    ("serve", "scars.tui.cli.commands.serve"),
    ("config", "scars.tui.cli.commands.config"),
    ("completion", "scars.tui.cli.commands.completion"),
)

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
        "scars gate spec .loop-spec/features/sync --wait --timeout 3600",
    ),
    "requests": ("scars requests", "scars requests . --all --json", "scars requests apply spec-3fa9c2"),
    "answer": ('scars answer spec-3fa9c2 --answer ship --reason "offline sync is v2 scope"',),
    "loops": ("scars loops", "scars loops . --waiting", "scars loops review-stage/REVIEW_STATE.json --json"),
    "budget-context": (f"scars budget-context {F} --json",),
    "advise": (f"scars advise {F}", "scars advise . --token-budget 200000 --tokens-used 150000"),
    "watch": (f"scars watch check {F}", "scars watch check . --dry-run --json"),
    "export": (f"scars export {F}", f"scars export {F} --format sarif -o scars.sarif"),
    "serve": (f"scars serve {F}", f"scars serve {F} --port 8765 --write --as bob"),
    "config": ("scars config", "scars config --json"),
    "completion": (
        "scars completion bash > ~/.local/share/bash-completion/completions/scars",
        "scars completion zsh > ~/.zfunc/_scars",
        "scars completion fish > ~/.config/fish/completions/scars.fish",
    ),
}


def examples_text(name: str) -> str | None:
    lines = EXAMPLES.get(name)
    return "Examples:\n" + "\n".join(f"  {line}" for line in lines) if lines else None


DESCRIPTION = (
    "scars — the human gate of agentic iteration loops. Triage scar items, decide rounds, "
    "and answer step-mode gates; decisions are written into the loop's own files."
)
EPILOG = (
    "Exit codes: 0 ok; 2 usage error or path not found; 3 parse failures with --strict, or a "
    "gate needs a human; 4 decision refused / invalid answer; 5 another writer holds the lock; "
    "130 interrupted. Run `scars demo` to try it on a bundled example."
)


class Parser(argparse.ArgumentParser):
    """argparse whose usage errors are UsageError (exit 2, and a JSON error object with --json)."""

    def error(self, message: str):  # type: ignore[override]  # noqa: ANN201 - never returns
        self.print_usage(sys.stderr)
        raise UsageError(f"{self.prog}: {message}")


class CommandModuleError(RuntimeError):
    """A command listed in ``COMMANDS`` cannot be imported: this installation is broken."""


def _import_command(name: str, module_name: str):  # noqa: ANN202 - a module
    try:
        return importlib.import_module(module_name)
    except Exception as exc:  # missing or broken: never a command silently left out
        raise CommandModuleError(
            f"the '{name}' command cannot be loaded ({module_name}: {type(exc).__name__}: {exc}); reinstall scars"
        ) from exc


def _load_commands() -> list[tuple[str, object]]:
    """Every command of ``COMMANDS``; a missing or broken module raises CommandModuleError."""
    return [(name, _import_command(name, module_name)) for name, module_name in COMMANDS]


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="scars",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-V", "--version", action="version", version=f"scars {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module in _load_commands():
        help_text = getattr(module, "HELP", "")
        p = sub.add_parser(
            name,
            help=help_text,
            description=getattr(module, "DESCRIPTION", help_text),
            epilog=examples_text(name),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("scars")
    except Exception:  # running from a source tree without metadata
        return "0+unknown"


def error_json(exc: ScarsError) -> dict[str, Any]:
    """The one JSON error object every `--json` command prints on stdout when it fails."""
    out: dict[str, Any] = {"ok": False, "error": type(exc).__name__, "message": str(exc), "exit_code": exc.exit_code}
    if isinstance(exc, DecisionRefused):
        out["fields"] = [{"field": e.field, "message": e.message} for e in exc.errors]
    if isinstance(exc, LockHeld):
        out["holder"] = exc.holder
    return out


def main(argv: list[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if words in (["--version"], ["-V"]):  # answered before any command module is imported
        print(f"scars {_version()}")
        return 0
    settings.load()  # the environment, read once for this command
    args: argparse.Namespace | None = None
    try:
        parser = build_parser()
        args = parser.parse_args(words)
        run = getattr(args, "_run", None)
        if run is None:  # bare `scars`
            run = _import_command("scars", "scars.tui.cli.commands.home").run
        return int(run(args) or 0)
    except ScarsError as exc:
        print(f"scars: {exc}", file=sys.stderr)
        # --json: one error object on stdout, unless the command printed its own (scars gate).
        if "--json" in words and not getattr(args, "json_error_printed", False):
            sys.stdout.write(json.dumps(error_json(exc), ensure_ascii=True, indent=2) + "\n")
        return exc.exit_code
    except KeyboardInterrupt:
        print("scars: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug of ours: one line for the user, the traceback on request
        if settings.current().debug:
            raise
        print(
            f"scars: internal error: {type(exc).__name__}: {exc} "
            "(nothing was reported saved by this command; set SCARS_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return 1


def entry() -> None:  # pragma: no cover - console script shim
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
