"""The published pre-commit hook runs `scars log verify --hook` on staged loop logs; run for real
with pre-commit in a test repository, through the README's `repo: local` snippet as written (the
published definition run by the installed scars, so no network is needed)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from scars.tui.cli.main import COMMANDS
from tests.factories import ROOT


def _hooks() -> list[dict]:
    return yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))


def test_hook_definition():
    (hook,) = _hooks()
    assert hook["id"] == "scars-log-verify"
    assert hook["language"] == "python"
    assert hook["pass_filenames"] is True  # each staged log names its feature directory
    assert hook["entry"].split() == ["scars", "log", "verify", "--hook"]
    assert ("log", "scars.tui.cli.commands.log") in {(name, module) for name, module, _summary in COMMANDS}
    # The console script the entry names is the one the package installs.
    assert 'scars = "scars.tui.cli.main:entry"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def _documented_snippets() -> list[tuple[str, str, str]]:
    """Every YAML snippet of the docs (README.md, docs/) that uses the hook: (file, the text
    before it, the snippet)."""
    out = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        for found in re.finditer(r"```yaml\n(.*?)```", text, re.S):
            if "scars-log-verify" in found.group(1):
                out.append((doc.name, text[: found.start()], found.group(1)))
    return out


def _local_snippet() -> str:
    (local,) = [snippet for _doc, _before, snippet in _documented_snippets() if "repo: local" in snippet]
    return local


def test_the_documented_local_hook_is_the_published_one_run_by_the_installed_scars():
    """Issue 32: the snippet said `rev: <tag>` and no tag exists. The one to copy is a local hook:
    the published definition, run by the `scars` installed (language: system)."""
    (repo,) = yaml.safe_load(_local_snippet())["repos"]
    assert repo["repo"] == "local" and "rev" not in repo
    (hook,) = repo["hooks"]
    (published,) = _hooks()
    assert hook == {key: value for key, value in {**published, "language": "system"}.items() if key != "description"}


def test_the_remote_form_waits_for_a_release_and_the_hook_file_says_the_same():
    remote = [(before, snippet) for _doc, before, snippet in _documented_snippets() if "repo: local" not in snippet]
    assert remote
    for before, snippet in remote:
        assert "rev:" in snippet
        assert "once there is a release" in before[-400:].lower(), snippet
    # The hook file's own comment shows the same local snippet, commented out.
    comment = [
        line[2:] if line.startswith("# ") else line[1:]
        for line in (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8").splitlines()
        if line.startswith("#")
    ]
    local = "\n".join(comment)
    hooks = _local_snippet().split("  - repo: local\n", 1)[1]
    assert "  - repo: local\n" + hooks in local + "\n"
    assert "once there is a release" in local.lower() and "<tag>" not in local


def test_hook_file_filter():
    (hook,) = _hooks()
    pattern = re.compile(hook["files"])  # pre-commit applies it with re.search to staged paths
    for path in ("changes/2026-07-02_x/iteration-log.yaml", "changes/a/auto-decisions.md", "iteration-log.yaml"):
        assert pattern.search(path), path
    for path in (
        "changes/a/my-iteration-log.yaml",
        "changes/a/iteration-log.yaml.bak",
        "docs/auto-decisions.md.txt",
        "changes/a/scar-reports/task-1-scar.yaml",
    ):
        assert not pattern.search(path), path


# ------------------------------------------------------------------ pre-commit, for real

AUDIT = ROOT / "tests" / "fixtures" / "real_shaped" / "changes" / "2026-08-18_audit-trail"


@pytest.fixture
def hook_repo(tmp_path: Path):
    """A git repository holding a consistent real-shaped feature, with the published hook installed
    by pre-commit (as a local hook: the same entry, files and filenames, the installed scars)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    try:
        import pre_commit  # noqa: F401
    except ImportError:
        pytest.skip("pre-commit is not installed (pip install -e '.[test]')")
    repo = tmp_path / "repo"
    shutil.copytree(AUDIT, repo / "changes" / AUDIT.name)
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "GIT_AUTHOR_NAME": "test",
        "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "test",
        "GIT_COMMITTER_EMAIL": "test@example.invalid",
        "SCARS_NO_CACHE": "1",
    }
    env.pop("GIT_DIR", None)

    def run(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=300)

    assert run("git", "init", "-q").returncode == 0
    assert run("git", "config", "commit.gpgsign", "false").returncode == 0
    # The feature's history, committed before the hook existed (its era-A accepts included).
    assert run("git", "add", "-A").returncode == 0
    assert run("git", "commit", "-q", "-m", "history").returncode == 0
    # The README's local hook, as written: the scars of this environment, nothing to install.
    (repo / ".pre-commit-config.yaml").write_text(_local_snippet(), encoding="utf-8")
    installed = run(sys.executable, "-m", "pre_commit", "install")
    assert installed.returncode == 0, installed.stderr
    return repo, run


LOG = "changes/2026-08-18_audit-trail/iteration-log.yaml"


def _commit(run, message: str):
    run("git", "add", "-A")
    return run("git", "commit", "-q", "-m", message)


def test_the_hook_passes_a_consistent_log_and_refuses_a_placeholder_owner(hook_repo):
    repo, run = hook_repo
    log = repo / LOG
    log.write_text(log.read_text(encoding="utf-8") + "# reviewed\n", encoding="utf-8")
    ok = _commit(run, "a consistent log")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "scars log verify" in ok.stdout + ok.stderr and "Passed" in ok.stdout + ok.stderr
    text = log.read_text(encoding="utf-8")
    bad = text.replace(
        '          expiry_date: "2026-10-18"\n',
        '          re_review_signal: "the shipper runs more than one worker"\n          owner: "tbd"\n',
    )
    assert bad != text
    log.write_text(bad, encoding="utf-8")
    refused = _commit(run, "an accept owned by nobody")
    out = refused.stdout + refused.stderr
    assert refused.returncode != 0, out
    assert "Failed" in out and "owner 'tbd' is a placeholder" in out
    head = run("git", "log", "--format=%s").stdout.split("\n")
    assert head[0] == "a consistent log"  # nothing was committed


def test_unknown_passes_the_hook_unless_strict(hook_repo):
    repo, run = hook_repo
    log = repo / LOG
    log.write_text(
        log.read_text(encoding="utf-8").replace(
            '"Log shipper assumed to keep the written order"', '"shipping is fine"'
        ),
        encoding="utf-8",
    )
    passed = _commit(run, "a description no item can be tied to")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    cfg = repo / ".pre-commit-config.yaml"
    config = yaml.safe_load(cfg.read_text(encoding="utf-8"))
    config["repos"][0]["hooks"][0]["args"] = ["--strict"]
    cfg.write_text(yaml.safe_dump(config), encoding="utf-8")
    log.write_text(log.read_text(encoding="utf-8") + "# touched\n", encoding="utf-8")
    refused = _commit(run, "strict")
    assert refused.returncode != 0 and "unknown" in refused.stdout + refused.stderr


NEW_LEGACY = (
    '        - description: "Redaction rules are read once at start"\n'
    '          expiry_date: "2027-03-01"\n'
    "          rationale: {rationale}\n"
)


def _add_accept(text: str, rationale: str) -> str:
    """A new accept in the legacy expiry_date form, after the log's first accept list entry."""
    anchor = '          rationale: "An allow-list needs the data catalogue'
    head, sep, tail = text.partition(anchor)
    line_end = tail.index("\n") + 1
    return head + sep + tail[:line_end] + NEW_LEGACY.format(rationale=rationale) + tail[line_end:]


@pytest.mark.parametrize("rationale", ['"ok"', '"Reload needs a config watcher the service does not have yet"'])
def test_a_new_accept_in_the_legacy_form_is_refused(hook_repo, rationale):
    """Seed 002: the expiry_date form is tolerated on read, for entries that already existed; a
    new accept needs re_review_signal + owner — whatever its rationale says."""
    repo, run = hook_repo
    log = repo / LOG
    log.write_text(_add_accept(log.read_text(encoding="utf-8"), rationale), encoding="utf-8")
    refused = _commit(run, "a new legacy accept")
    out = refused.stdout + refused.stderr
    assert refused.returncode != 0, out
    assert "legacy accept 'Redaction rules are read once at start' is new since the last commit" in out
    assert out.count("is new since the last commit") == 1  # the committed ones stay tolerated
    assert run("git", "log", "--format=%s").stdout.split("\n")[0] == "history"


def test_blanking_a_legacy_rationale_is_refused_and_rewording_it_passes(hook_repo):
    repo, run = hook_repo
    log = repo / LOG
    text = log.read_text(encoding="utf-8")
    old = '"The shipper runs with one worker; the chain check would flag reordering at verification time"'
    log.write_text(text.replace(old, '""'), encoding="utf-8")
    refused = _commit(run, "blank rationale")
    out = refused.stdout + refused.stderr
    assert (
        refused.returncode != 0
        and "legacy accept 'Log shipper assumed to keep the written order': rationale it is empty" in out
    )
    log.write_text(
        text.replace(old, '"One worker ships in order; the chain check flags any reorder"'), encoding="utf-8"
    )
    ok = _commit(run, "reworded rationale")
    assert ok.returncode == 0, ok.stdout + ok.stderr
