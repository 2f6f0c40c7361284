"""The `scars` command line: one sub-command per module in ``scars.tui.cli.commands``.

Each command module defines ``HELP`` (one line), ``add_arguments(parser)`` and
``run(args) -> int``, and imports only the standard library and ``scars.core`` at module
level, so ``scars --help`` and ``scars status`` never import Textual. Typed errors from
``scars.core.errors`` are mapped to exit codes here, at the edge, and nowhere else.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from scars.core import settings
from scars.core.errors import ScarsError

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
    ("loops", "scars.tui.cli.commands.loops"),
    ("budget-context", "scars.tui.cli.commands.budget_context"),
    ("advise", "scars.tui.cli.commands.advise"),
    ("watch", "scars.tui.cli.commands.watch"),
    ("export", "scars.tui.cli.commands.export"),
)

DESCRIPTION = (
    "scars — the human gate of agentic iteration loops. Triage scar items, decide rounds, "
    "and answer step-mode gates; decisions are written into the loop's own files."
)
EPILOG = (
    "Exit codes: 0 ok; 2 usage error or path not found; 3 parse failures with --strict, or a "
    "gate needs a human; 4 decision refused / invalid answer; 5 another writer holds the lock; "
    "130 interrupted. Run `scars demo` to try it on a bundled example."
)


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
    parser = argparse.ArgumentParser(
        prog="scars",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"scars {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module in _load_commands():
        help_text = getattr(module, "HELP", "")
        p = sub.add_parser(name, help=help_text, description=getattr(module, "DESCRIPTION", help_text))
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("scars")
    except Exception:  # running from a source tree without metadata
        return "0+unknown"


def main(argv: list[str] | None = None) -> int:
    settings.load()  # the environment, read once for this command
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        run = getattr(args, "_run", None)
        if run is None:  # bare `scars`
            run = _import_command("scars", "scars.tui.cli.commands.home").run
        return int(run(args) or 0)
    except ScarsError as exc:
        print(f"scars: {exc}", file=sys.stderr)
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
