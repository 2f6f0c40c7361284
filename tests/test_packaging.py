"""Packaging: a wheel and an editable install both give a working `scars` with the demo.

Each installs scars (``--no-deps``) into a fresh virtual environment that sees the
interpreter's site-packages for the dependencies, then runs the console script.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.factories import ROOT

pytestmark = pytest.mark.packaging


def _source_packages() -> set[str]:
    """Every folder under core/ and tui/ holding an __init__.py, as a `scars.` package name."""
    out = set()
    for top in ("core", "tui"):
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT).parts
            out.add(".".join(("scars", *rel)))
    return out


def _configured_packages() -> set[str]:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    return set(setuptools["packages"])


def test_the_package_list_matches_the_folders():
    """pyproject lists packages explicitly: a folder with __init__.py missing from the list would
    be left out of the wheel (and a listed package without a folder breaks the build)."""
    assert _configured_packages() == _source_packages()


def _base_python() -> str:
    # A venv of a venv would not see the base interpreter's site-packages: use the base.
    return getattr(sys, "_base_executable", sys.executable)


def _fresh_venv(where: Path) -> Path:
    subprocess.run([_base_python(), "-m", "venv", "--system-site-packages", "--without-pip", str(where)], check=True)
    return where / "bin"


def _pip(bin_dir: Path, *args: str, cwd: Path | None = None) -> None:
    # The fresh venv has no pip of its own: drive the running interpreter's pip at it. The
    # build runs in pip's isolated build environment (setuptools from the configured index).
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(bin_dir / "python"), "install", "--quiet", "--no-deps", *args],
        check=True,
        cwd=cwd,
        timeout=300,
    )


def _source_copy(tmp_path: Path) -> Path:
    """The tracked files of the project (what a clean clone holds), copied to tmp_path."""
    # Tracked files and new files not ignored: the tree a clean clone of this commit holds.
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    src = tmp_path / "src"
    for rel in filter(None, files.decode().split("\0")):
        if not (ROOT / rel).is_file():
            continue
        dst = src / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dst)
    return src


def _check_installed(bin_dir: Path, tmp_path: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    env["NO_COLOR"] = "1"
    out = tmp_path / "demo-copy"
    r = subprocess.run(
        [str(bin_dir / "scars"), "demo", "--dir", str(out), "--json"],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=120,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["signal_lost"] == 14
    assert (out / ".samsara" / "systemic-scars.yaml").is_file()
    r = subprocess.run(
        [str(bin_dir / "scars"), "status", "--json", str(out)],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=120,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    (feat,) = json.loads(r.stdout)["features"]
    assert feat["registry"] == "present" and feat["counts"]["unverified_assumptions"] == 2
    # The JSON Schema of that output is package data (issue 32): the installed scars prints it.
    r = subprocess.run(
        [str(bin_dir / "scars"), "status", "--schema"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=tmp_path,
    )
    assert r.returncode == 0 and json.loads(r.stdout)["title"] == "scars status --json", r.stderr
    # The installed package is the one we built, not the development tree.
    r = subprocess.run(
        [str(bin_dir / "python"), "-c", "import scars.core.samsara.feature as m; print(m.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        cwd=tmp_path,
    )
    return r.stdout.strip()


def _tracked(*folders: str) -> list[str]:
    files = subprocess.run(["git", "ls-files", "-z", *folders], cwd=ROOT, capture_output=True, check=True).stdout
    return [rel for rel in files.decode().split("\0") if rel and (ROOT / rel).is_file()]


def test_wheel_install(tmp_path):
    src = _source_copy(tmp_path)
    wheels = tmp_path / "wheels"
    # -v: the build backend's own output, where setuptools prints its warnings
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "-w", str(wheels), str(src)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    # Issue 32: the data folders with importable names (core/demo/repo, core/schemas …) were
    # taken in by include-package-data with a "Package would be ignored" warning each.
    build_output = built.stdout + built.stderr
    for warning in (
        "is absent from the `packages` configuration",
        "Package would be ignored",
        "_Warning:",
        # MANIFEST.in patterns that match nothing (read for the wheel too)
        "warning: no files found matching",
        "warning: no previously-included files",
    ):
        assert warning not in build_output, warning
    (wheel,) = wheels.glob("scars-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    # Every file of the two packages' folders (the code, the demo repository, the schemas, the
    # stylesheet) is in the wheel, under the package its folder is mapped to.
    for rel in _tracked("core", "tui"):
        assert "scars/" + rel in names, rel
    (metadata_name,) = (n for n in names if n.endswith(".dist-info/METADATA"))
    metadata = zipfile.ZipFile(wheel).read(metadata_name).decode()
    requires = [line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    serve = [r for r in requires if r.startswith("textual-serve")]
    assert serve and all('extra == "serve"' in r for r in serve), serve
    assert "scars/core/demo/repo/.samsara/systemic-scars.yaml" in names
    assert "scars/core/demo/repo/changes/2026-11-02_csv-export/scar-reports/task-1-scar.yaml" in names
    assert "scars/core/demo/repo/src/export.py" in names
    assert "scars/tui/cli/commands/status.py" in names
    assert "scars/tui/app/app.tcss" in names and "scars/tui/app/dialogs.tcss" in names
    assert "scars/core/schemas/sarif-schema-2.1.0.json" in names
    # Every package of the source tree is in the wheel.
    for package in _source_packages():
        assert package.replace(".", "/") + "/__init__.py" in names, package
    bin_dir = _fresh_venv(tmp_path / "venv")
    _pip(bin_dir, str(wheel))
    where = _check_installed(bin_dir, tmp_path)
    assert where.startswith(str(tmp_path / "venv")), where
    _check_serve_without_the_extra(bin_dir, tmp_path)


def _check_serve_without_the_extra(bin_dir: Path, tmp_path: Path) -> None:
    """The installed `scars serve`, where textual-serve is not installed, says how to install it."""
    probe = "import importlib.util as u; print(u.find_spec('textual_serve') is None)"
    r = subprocess.run([str(bin_dir / "python"), "-c", probe], capture_output=True, text=True, timeout=60)
    if r.stdout.strip() != "True":
        return  # the base interpreter has textual-serve itself (tests/tui/cli/test_serve_extra.py hides it)
    r = subprocess.run(
        [str(bin_dir / "scars"), "serve", str(tmp_path / "demo-copy")],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
        stdin=subprocess.DEVNULL,
        timeout=120,
        cwd=tmp_path,
    )
    assert r.returncode == 2 and "pip install 'scars[serve]'" in r.stderr, r.stderr


@pytest.mark.slow  # CI's own `pip install -e '.[test]'` exercises the editable install on every run
def test_editable_install(tmp_path):
    src = _source_copy(tmp_path)
    bin_dir = _fresh_venv(tmp_path / "venv")
    _pip(bin_dir, "-e", str(src), cwd=tmp_path)
    where = _check_installed(bin_dir, tmp_path)
    assert where == str(src / "core" / "samsara" / "feature.py"), where


def test_sdist_holds_what_the_test_suite_needs_and_the_licence(tmp_path):
    """Issue 16: the sdist could not run the tests (no conftest, factories, snapshots) and had no
    LICENSE; the licence is an SPDX expression (the table form is deprecated)."""
    import tarfile

    src = _source_copy(tmp_path)
    clone = {p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file()}  # before the build writes
    out = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--outdir", str(out), str(src)],
        check=True,
        capture_output=True,
        timeout=300,
        cwd=tmp_path,
    )
    (sdist,) = out.glob("scars-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
        files = {m.name.split("/", 1)[1] for m in tar.getmembers() if m.isfile()}
        pkg_info = tar.extractfile(next(n for n in tar.getnames() if n.endswith("/PKG-INFO"))).read().decode()
    # Issue 32: every file of a clean clone but .gitignore (MANIFEST.in's patterns each match
    # some, or the build warns), no cache, and what the build itself writes.
    built = {f for f in files if f not in ("PKG-INFO", "setup.cfg") and not f.startswith("scars.egg-info/")}
    assert built == clone - {".gitignore"}, sorted(built ^ (clone - {".gitignore"}))
    for needed in (
        "LICENSE",
        "tests/conftest.py",
        "tests/factories.py",
        "tests/tui/app/__snapshots__/test_app_snapshots/test_main_screen[80x24].svg",
        "tests/fixtures/real_shaped/changes/2026-08-11_report-cache/iteration-log.yaml",
        "constraints/test.txt",
        "Makefile",
        "CHANGELOG.md",
        "CONTRIBUTING.md",
        ".pre-commit-config.yaml",
    ):
        assert needed in names, needed
    assert "License-Expression: MIT" in pkg_info and "Classifier: Environment :: Console" in pkg_info


# ------------------------------------------------------------------ what an install pulls in

SERVE_ONLY = (
    "textual-serve",
    "aiohttp",
    "aiohttp-jinja2",
    "aiohappyeyeballs",
    "aiosignal",
    "frozenlist",
    "jinja2",
    "markupsafe",
    "multidict",
    "propcache",
    "yarl",
)


def _installed_closure(extras: tuple[str, ...] = ()) -> set[str]:
    """The distributions `pip install scars[EXTRAS]` installs: scars' requirements (pyproject's,
    with the extras asked for, a self-reference such as `scars[serve]` followed) and, through the
    metadata of the distributions installed here, theirs, markers evaluated on this interpreter."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

    def requires(name: str, extras: set[str]) -> list[Requirement]:
        if name == "scars":
            lines = list(project["dependencies"])
            for extra in sorted(extras):
                lines += project["optional-dependencies"][extra]
            return [Requirement(line) for line in lines]
        reqs = [Requirement(line) for line in metadata.distribution(name).requires or []]
        wanted = [""] + sorted(extras)
        return [r for r in reqs if r.marker is None or any(r.marker.evaluate({"extra": e}) for e in wanted)]

    seen: dict[str, set[str]] = {}
    todo = [("scars", set(extras))]
    while todo:
        name, asked = todo.pop()
        if name in seen and asked <= seen[name]:
            continue
        seen[name] = seen.get(name, set()) | asked
        for req in requires(name, asked):
            todo.append((canonicalize_name(req.name), set(req.extras)))
    return set(seen) - {"scars"}


def test_a_plain_install_holds_no_serve_dependencies_and_the_extras_do():
    """Issue 32: textual-serve and what only it needs (aiohttp and its helpers, Jinja2: about half
    of a full install) are the `serve` extra; the test extra (what CI installs) includes it."""
    plain = _installed_closure()
    assert {"textual", "rich", "questionary", "mcp"} <= plain
    assert plain.isdisjoint(SERVE_ONLY), sorted(plain & set(SERVE_ONLY))
    for extras in (("serve",), ("test",)):
        assert set(SERVE_ONLY) <= _installed_closure(extras), extras
