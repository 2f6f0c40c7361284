"""`scars demo [--dir PATH]`: copy the bundled demo repository somewhere writable and open it."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from scars import core
from scars.core.errors import UsageError

DESCRIPTION = (
    "Copy the bundled demo repository (one samsara feature, changes/2026-11-02_csv-export, with "
    "every scar item form, a systemic registry, a finished round and an Evaluation Contract) to "
    "a fresh writable directory, print where it is, and open the feature there. Decisions you "
    "make in the demo are written into that copy only."
)
FEATURE = "changes/2026-11-02_csv-export"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dir",
        metavar="PATH",
        help="copy the demo here (must not exist or be empty; default: a new temporary directory)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print the status of the copy as JSON instead of opening it"
    )


def demo_source() -> Path:
    """The bundled demo repository: package data of scars.core, a folder beside its modules (as
    ``importlib.resources.files`` finds it for a package on disk, without loading that machinery:
    ~9 ms of the demo's first screen)."""
    return Path(core.__file__).parent / "demo" / "repo"


def copy_demo(dest: Path | None, *, git: bool = True) -> Path:
    """Copy the demo repository to ``dest`` (or a new temp dir); return the repository root.
    ``git``: make it a git repository too (:func:`make_git_repository`; else the caller does)."""
    src = demo_source()
    if not (src / FEATURE).is_dir():
        raise UsageError(f"the bundled demo is missing from this installation ({src}); reinstall scars")
    if dest is None:
        dest = Path(tempfile.mkdtemp(prefix="scars-demo-")) / "ledger"
    elif dest.exists():
        if not dest.is_dir():
            raise UsageError(f"{dest} exists and is not a directory; choose another --dir")
        if any(dest.iterdir()):
            raise UsageError(f"{dest} is not empty; choose a new or empty directory with --dir")
        dest.rmdir()
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for p in [dest, *dest.rglob("*")]:  # package data may be read-only (wheel installs)
        if not p.is_symlink():
            p.chmod(0o755 if p.is_dir() else 0o644)
    if git:
        make_git_repository(dest)
    return dest


def make_git_repository(root: Path) -> bool:
    """The demo as a git repository with one commit, so watches (``path-changed``, ``pattern``)
    can be tried in it; False (the copy stays a plain directory) when git is missing or fails."""
    # lazy: loaded when the command runs, not for its --help or completion (they import the module for its arguments)
    from scars.core.git import GitUnavailable, run_git

    try:
        run_git(root, "init", "-q")
        run_git(root, "add", "-A")
        run_git(
            root,
            "-c",
            "user.name=scars demo",
            "-c",
            "user.email=demo@scars.invalid",
            "-c",
            "commit.gpgsign=false",
            "commit",
            "-q",
            "-m",
            "The ledger demo as scars demo copied it",
        )
    except GitUnavailable:
        return False
    return True


def run(args: argparse.Namespace) -> int:
    # lazy: another command's module (it starts the app), loaded when this command runs
    from scars.tui.cli.commands._app import interactive

    app = not args.json and interactive()
    root = copy_demo(Path(args.dir) if args.dir else None, git=not app)
    feature = root / FEATURE
    where = sys.stderr if args.json else sys.stdout  # keep --json output pure JSON
    print(f"scars demo: copied the demo repository to {root}", file=where)
    print(f"scars demo: feature {feature}", file=where)
    print(
        f"scars demo: `scars triage {feature}` opens it, `scars status {feature}` summarises it", file=where, flush=True
    )
    status_args = argparse.Namespace(path=str(feature), json=bool(args.json), strict=False)
    if app:
        # lazy: loaded when the app starts
        from scars.core.storage import Beside
        from scars.tui.cli.commands._app import launch

        # git init, add and commit (three git processes, ~30 ms) in a child while the app loads;
        # the feature is opened once they are done (the session asks git for the user's name).
        git = Beside(make_git_repository, (root,))
        code = launch(feature.resolve(), before_open=git.result)
        print(f"scars demo: reopen it with `scars triage {feature}` (decisions so far are kept)")
        return code
    # lazy: another command's module, loaded when this command runs
    from scars.tui.cli.commands import status

    return status.run(status_args)
