"""CI installs a pinned test environment, runs the benchmark smoke step after the tests, and a
hanging test fails by itself (pytest-timeout) well before CI's own limit."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.factories import ROOT


def _pins() -> dict[str, Version]:
    pins = {}
    for line in (ROOT / "constraints" / "test.txt").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([^\s;]+)", line)
        assert m, f"not an exact pin: {line!r}"
        name = canonicalize_name(m.group(1))
        assert name not in pins, f"{name} pinned twice"
        pins[name] = Version(m.group(2))
    return pins


def test_ci_and_make_check_run_the_same_checks():
    """.ci/check holds the machine checks; CI runs it after the tests and `make check` runs it."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    readme_line = next(i for i, line in enumerate(ci) if "pytest -n 2" in line)
    check = [i for i, line in enumerate(ci) if line.strip() == "bash .ci/check"]
    assert check and check[0] > readme_line
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "\ncheck:\n\tbash .ci/check\n" in make
    steps = [
        line
        for line in (ROOT / ".ci" / "check").read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    for tool in ("lint-imports", "ruff check .", "ruff format --check .", "mypy -p scars.core"):
        assert any(tool in line for line in steps), tool
    for target in ("setup", "check", "test", "snapshots", "screenshots", "bench"):
        assert f"\n{target}:" in make, target


def _requirements() -> list[Requirement]:
    """Every requirement of the project and of each extra; an extra's `scars[...]` (the test
    extra includes the serve extra that way) is the project itself, whose extras are all here."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    lines = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        lines += extra
    return [req for req in map(Requirement, lines) if canonicalize_name(req.name) != "scars"]


def test_the_test_extra_includes_the_serve_extra():
    """CI installs `.[test]`: the serve tests need textual-serve, which a plain install lacks."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert "scars[serve]" in extras["test"]
    assert not any(r.startswith("textual-serve") for r in extras["test"])  # one place: the serve extra


def test_every_requirement_and_test_extra_is_pinned_within_its_range():
    pins = _pins()
    assert canonicalize_name("scars") not in pins
    for req in _requirements():
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} is not pinned in constraints/test.txt"
        assert pins[name] in req.specifier, f"{req.name}=={pins[name]} is outside pyproject's {req.specifier}"
    assert {"pip", "setuptools"} <= set(pins)  # the installer and the build backend too


def test_ci_exports_the_constraints_before_any_install_and_runs_the_bench_smoke():
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    export = next(i for i, line in enumerate(lines) if line.startswith("export PIP_CONSTRAINT="))
    assert '"$constraints"' in lines[export]
    assert any(line == 'constraints="$PWD/constraints/test.txt"' for line in lines[:export])
    installs = [i for i, line in enumerate(lines) if re.search(r"\bpip install\b", line)]
    assert installs and min(installs) > export
    readme_line = next(i for i, line in enumerate(lines) if "pytest -n 2" in line)
    smoke = [i for i, line in enumerate(lines) if line.strip() == "python bench/run.py --smoke"]
    assert smoke and smoke[0] > readme_line


def test_every_test_has_a_time_limit(request):
    assert request.config.pluginmanager.hasplugin("timeout")
    limit = float(request.config.getini("timeout"))
    assert 60 <= limit <= 900  # above any honest test here, far below CI's 90 minutes


def _profile(env: dict[str, str]) -> list[str]:
    """What tests/hypothesis_profiles loads under ``env``: its name, derandomize, database, and
    examples(3)."""
    base = {k: v for k, v in os.environ.items() if k not in ("CI", "HYPOTHESIS_PROFILE")}
    code = (
        "from hypothesis import settings; from tests import hypothesis_profiles as p; "
        "d = settings.default; print(p.PROFILE, d.derandomize, d.database is None, p.examples(3))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={**base, **env}, capture_output=True, text=True, check=False
    )
    return (out.stdout or out.stderr).split()


def test_the_suite_searches_the_same_examples_unless_told_otherwise():
    """CI and a bare run are derandomised with no database (every run tries the same examples);
    HYPOTHESIS_PROFILE picks a random search, ten times as many examples in thorough, but never in CI."""
    assert _profile({}) == ["ci", "True", "True", "3"]
    assert _profile({"CI": "1", "HYPOTHESIS_PROFILE": "thorough"}) == ["ci", "True", "True", "3"]
    assert _profile({"HYPOTHESIS_PROFILE": "dev"}) == ["dev", "False", "False", "3"]
    assert _profile({"HYPOTHESIS_PROFILE": "thorough"}) == ["thorough", "False", "False", "30"]
    assert _profile({"HYPOTHESIS_PROFILE": "nope"})[0] == "HYPOTHESIS_PROFILE='nope':"


def test_the_pre_commit_config_runs_make_check_with_no_network():
    """.pre-commit-config.yaml (issue 32) runs what `make check` runs — .ci/check itself, so the
    two cannot drift — as local hooks of the active environment (nothing to download)."""
    import yaml

    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    assert [repo["repo"] for repo in config["repos"]] == ["local"]
    hooks = [hook for repo in config["repos"] for hook in repo["hooks"]]
    assert all(hook["language"] == "system" for hook in hooks)
    assert [hook["entry"] for hook in hooks] == ["bash .ci/check"]
    (hook,) = hooks
    assert hook["pass_filenames"] is False and hook["always_run"] is True  # the whole tree, every commit
    assert "\ncheck:\n\tbash .ci/check\n" in (ROOT / "Makefile").read_text(encoding="utf-8")
    try:
        import pre_commit  # noqa: F401
    except ImportError:
        return
    checked = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-config", ".pre-commit-config.yaml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
