"""Every command and every gate against a repository of symlinks (issue 27, "Done when").

The list of commands is the CLI's own parser (every sub-command, nested ones such as `round close`
included, and every gate id `scars gate` takes): a new command or gate without a case here fails
:func:`test_every_command_and_gate_has_a_hostile_case`. Each case is run three ways:

1. on a plain repository (every loop of ``tests/hostile/repos.py``, in the state the command needs):
   it must do what it is for (its exit code), and what it reads and writes is *observed* — every
   file of the repository it opened (Python's audit events, ``opened.py``) and every file it
   created or changed (the repository hashed before and after);
2. on a fresh copy in which each observed path is turned into a symlink to a copy in a canary tree
   outside the repository, three times: **every file** it read or wrote, **every folder** holding
   one (the innermost: ``.scars/``, ``scar-reports/``, ``.bkit/state/sprints/`` …; the folders
   above them — a feature folder, ``changes/``, ``features/`` — are the cases of
   test_hostile_links.py), and **every lock** it took;
3. each time: no byte outside the repository changed (the canary tree and the folder around the
   repository hashed before and after: kind, mode, size, mtime, content or link target of every
   entry), nothing under the canary tree was opened or listed, its text is never shown, and the
   command ends with one of its documented exit codes, without a traceback.

Because the paths are observed, a file a command starts to read or write tomorrow is linked out
here without a change to this file. `scars triage` runs headless (Textual's Pilot: every screen
opened, a decision, its undo, a gate, quit); `scars serve` runs for real on 127.0.0.1 (its own
test below: a loopback socket, no network) with a browser's websocket typing into the app.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from scars.core import settings
from scars.core.gates import requests as rq
from scars.core.loops.registry import GATES
from scars.core.samsara.session import FeatureSession
from scars.tui.cli import main as cli
from scars.tui.cli.main import build_parser
from tests.factories import GATE_ANSWERS, gate_state, item_id
from tests.hostile.opened import watching
from tests.hostile.repos import (
    CANARY_TEXT,
    REASON,
    World,
    bkit,
    dag,
    link_out,
    loopspec,
    make_world,
    review,
    samsara,
    snapshot,
)

DOCUMENTED = {0, 1, 2, 3, 4, 5, 6, 7}  # README, Exit codes (130: interrupted, never here)
RETRY = "Retry count is hard-coded to 3"


# -- the repositories ------------------------------------------------------------------------


def every_loop(w: World) -> dict[str, Path]:
    """One repository holding a loop of every kind (its paths by name)."""
    feature = samsara(w)
    return {"feature": feature, "spec": loopspec(w), "stage": review(w), "bkit": bkit(w), "dag": dag(w)}


def a_feature(w: World) -> dict[str, Path]:
    return {"feature": samsara(w)}


def a_request(w: World) -> dict[str, Path]:
    """A loop-spec feature with a gate request posted (``--wait``) and not answered yet."""
    paths = every_loop(w)
    assert cli.main(["gate", "spec", str(paths["spec"]), "--wait", "--timeout", "0.1"]) == 3
    return paths


def an_answered_request(w: World) -> dict[str, Path]:
    paths = a_request(w)
    rid = _rid(w)
    assert cli.main(["answer", rid, "--answer", "ship", "--reason", REASON, "--path", str(w.repo)]) == 0
    return paths


def _rid(w: World) -> str:
    return rq.list_requests(w.repo)[0][0].id


def _decided(w: World, paths: dict[str, Path], *, round_open: bool = False) -> None:
    with FeatureSession.open(paths["feature"], user="alice") as s:
        if round_open:
            s.start_round()
        s.decide(item_id(paths["feature"], RETRY), "fix")


def a_watched_accept(w: World) -> dict[str, Path]:
    """An accept whose watch fires: a pattern now in a file of the repository (the check reopens it)."""
    paths = a_feature(w)
    (w.repo / "src").mkdir()
    (w.repo / "src" / "retry.py").write_text("RETRIES = 3  # FIRE-WATCH\n", encoding="utf-8")
    with FeatureSession.open(paths["feature"], user="alice") as s:
        s.decide(
            item_id(paths["feature"], RETRY),
            "accept",
            re_review_signal="the retry count is hard-coded again",
            owner="platform team",
            rationale="three retries is what the vendor allows today",
            watch="pattern: FIRE-WATCH in src/*.py",
        )
    return paths


def a_gate(gate: str) -> Callable[[World], dict[str, Path]]:
    """The state each gate asks about (``factories.gate_state``), built in the repository."""

    def build(w: World) -> dict[str, Path]:
        path, _decisions, extra = gate_state(gate, w.repo)
        return {"gate": Path(path), **{k: v for k, v in extra.items()}}

    return build


def a_triage(w: World) -> dict[str, Path]:
    paths = a_feature(w)
    with FeatureSession.open(paths["feature"], user="alice") as s:
        s.start_round()
    answers = w.tmp / "answers.yaml"  # the user's own file, beside the repository
    answers.write_text(
        yaml.safe_dump(
            {item_id(paths["feature"], RETRY): "fix", "round-continue": {"answer": "stop", "reason": REASON}}
        )
    )
    return {**paths, "answers": answers}


# -- the commands ----------------------------------------------------------------------------


@dataclass
class Command:
    key: tuple[str, ...]  # the command's words ("round", "close"), or ("gate", GATE_ID)
    build: Callable[[World], dict[str, Any]]
    argv: Callable[[World, dict[str, Any]], list[str]]
    ok: tuple[int, ...] = (0,)  # what it ends with on the plain repository

    @property
    def name(self) -> str:
        return " ".join(self.key)


def _gate_argv(gate: str) -> Callable[[World, dict[str, Any]], list[str]]:
    def argv(w: World, p: dict[str, Any]) -> list[str]:
        answer, reason = GATE_ANSWERS[gate]
        words = ["gate", gate, str(p["gate"]), "--answer", answer, "--reason", reason]
        return words + (["--item", str(p["item"])] if "item" in p else [])

    return argv


F = "feature"
COMMANDS = [
    Command(("status",), every_loop, lambda w, p: ["status", str(w.repo)]),
    Command(("demo",), a_feature, lambda w, p: ["demo", "--dir", str(w.repo / "demo"), "--json"]),
    Command(("decide",), a_feature, lambda w, p: ["decide", item_id(p[F], RETRY), "--fix", "--feature", str(p[F])]),
    Command(
        ("undo",),
        lambda w: _then(a_feature(w), lambda p: _decided(w, p)),
        lambda w, p: ["undo", "--feature", str(p[F])],
    ),
    Command(("round",), a_feature, lambda w, p: ["round", "status", "--feature", str(p[F])]),
    Command(("round", "start"), a_feature, lambda w, p: ["round", "start", "--feature", str(p[F])]),
    Command(
        ("round", "close"),
        lambda w: _then(a_feature(w), lambda p: _decided(w, p, round_open=True)),
        lambda w, p: ["round", "close", "--decision", "stop", "--reason", REASON, "--feature", str(p[F])],
    ),
    Command(("round", "status"), a_feature, lambda w, p: ["round", "status", "--feature", str(p[F])]),
    Command(
        ("round", "flush"),
        lambda w: _then(a_feature(w), lambda p: _decided(w, p, round_open=True)),
        lambda w, p: ["round", "flush", "--feature", str(p[F])],
    ),
    Command(("log",), every_loop, lambda w, p: ["log", "verify", str(w.repo)], (0, 1, 3)),
    Command(("log", "verify"), every_loop, lambda w, p: ["log", "verify", str(p[F])], (0, 1, 3)),
    Command(("gate",), a_triage, lambda w, p: ["gate", "triage", str(p[F]), "--answers", str(p["answers"])]),
    *[Command(("gate", g), a_gate(g), _gate_argv(g)) for g in GATE_ANSWERS],
    Command(("gate", "triage"), a_triage, lambda w, p: ["gate", "triage", str(p[F]), "--answers", str(p["answers"])]),
    Command(("requests",), a_request, lambda w, p: ["requests", str(w.repo), "--all"]),
    Command(
        ("requests", "apply"), an_answered_request, lambda w, p: ["requests", "apply", _rid(w), "--path", str(w.repo)]
    ),
    Command(("requests", "withdraw"), a_request, lambda w, p: ["requests", "withdraw", _rid(w), "--path", str(w.repo)]),
    Command(
        ("answer",),
        a_request,
        lambda w, p: ["answer", _rid(w), "--answer", "ship", "--reason", REASON, "--path", str(w.repo), "--apply"],
    ),
    Command(("loops",), every_loop, lambda w, p: ["loops", str(w.repo)]),
    Command(("budget-context",), a_feature, lambda w, p: ["budget-context", str(p[F]), "--json"]),
    Command(("advise",), every_loop, lambda w, p: ["advise", str(w.repo)]),
    Command(("watch",), a_watched_accept, lambda w, p: ["watch", "check", str(p[F])], (0, 3)),
    Command(("watch", "check"), a_watched_accept, lambda w, p: ["watch", "check", str(p[F])], (0, 3)),
    Command(("export",), a_feature, lambda w, p: ["export", str(p[F]), "--format", "sarif"]),
    Command(("config",), a_feature, lambda w, p: ["config", "--json"]),
    # scars cache: the user's cache folder only, never a file of the repository
    Command(("cache",), a_feature, lambda w, p: ["cache"]),
    Command(("cache", "info"), a_feature, lambda w, p: ["cache", "info", "--json"]),
    Command(("cache", "clean"), a_feature, lambda w, p: ["cache", "clean", "--dry-run"]),
    Command(("completion",), a_feature, lambda w, p: ["completion", "bash"]),
    # scars init: the agents' files it reads and writes (.mcp.json, .claude/settings.json, …)
    Command(("init",), a_feature, lambda w, p: ["init", str(w.repo)]),
    Command(("hook",), a_feature, lambda w, p: _hook_argv(w, p, f"scars decide X --fix --feature {p[F]}")),
    Command(
        ("hook", "pre-tool-use"),
        a_feature,
        lambda w, p: _hook_argv(w, p, f"cd {w.repo} && scars round close --decision stop --feature {p[F]}"),
    ),
]
# Driven by their own tests below (the app needs a terminal, or a browser).
ELSEWHERE = {
    ("triage",): "test_scars_triage_on_a_repository_of_symlinks",
    ("serve",): "test_scars_serve_on_a_repository_of_symlinks",
    ("mcp",): "test_scars_mcp_tools_on_a_repository_of_symlinks",
}


def _hook_argv(w: World, p: dict[str, Any], command: str) -> list[str]:
    """The hook judging an agent's shell call (it reads the feature's mode)."""
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command}}
    return ["hook", "pre-tool-use", "--payload", json.dumps({**payload, "cwd": str(w.repo)})]


def _then(paths: dict[str, Any], step: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    step(paths)
    return paths


def parser_commands() -> set[tuple[str, ...]]:
    """Every command the CLI's parser knows: each sub-command (nested ones too) and each gate id."""
    out: set[tuple[str, ...]] = set()

    def walk(parser: argparse.ArgumentParser, words: tuple[str, ...]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    out.add((*words, name))
                    walk(sub, (*words, name))
            elif words == ("gate",) and action.dest == "gate":
                out.update(("gate", g) for g in action.choices)

    walk(build_parser(), ())
    return out


def test_every_command_and_gate_has_a_hostile_case():
    covered = {c.key for c in COMMANDS} | set(ELSEWHERE)
    missing = parser_commands() - covered
    assert not missing, f"commands without a hostile-repository case: {sorted(missing)}"
    assert {("gate", g) for g in GATES} <= covered


# -- observing, linking out, checking --------------------------------------------------------


@dataclass
class Observed:
    files: set[str] = field(default_factory=set)  # relative to the repository
    folders: set[str] = field(default_factory=set)


def _tree(repo: Path) -> dict[str, str]:
    out = {}
    for dirpath, _dirs, files in os.walk(repo):
        for name in files:
            p = Path(dirpath) / name
            if p.is_file() and not p.is_symlink():
                out[str(p.relative_to(repo))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _world(tmp: Path, monkeypatch, case: Command) -> tuple[World, dict[str, Any]]:
    """A fresh repository in the state ``case`` needs; its command line is taken now, before any
    path is linked out (an item id reads the feature)."""
    w = make_world(tmp, monkeypatch)
    settings.clear()
    paths = case.build(w)
    paths["argv"] = case.argv(w, paths)
    return w, paths


def observe(case: Command, tmp: Path, monkeypatch, capsys, run: Callable[[World, dict[str, Any]], int]) -> Observed:
    """Run ``case`` on a plain repository: what it read (opened) and wrote (created or changed)."""
    w, paths = _world(tmp, monkeypatch, case)
    capsys.readouterr()
    before = _tree(w.repo)
    real_repo = os.path.realpath(w.repo)
    with watching(w.repo) as opened:
        code = run(w, paths)
    after = _tree(w.repo)
    seen = Observed()
    for o in opened:
        rel = os.path.relpath(o.real, real_repo)
        if rel == "." or rel.startswith(".."):
            continue
        (seen.folders if os.path.isdir(o.real) else seen.files).add(rel)
    seen.files |= {k for k in after if before.get(k) != after[k]}
    assert code in case.ok, f"{case.name} on a plain repository: exit {code}\n{capsys.readouterr()}"
    return seen


def _innermost(folders: set[str]) -> list[str]:
    return sorted(f for f in folders if not any(g != f and g.startswith(f + os.sep) for g in folders))


def _lock(name: str) -> bool:
    return name == "lock" or name.endswith((".lock", ".wait"))


def variants(seen: Observed) -> dict[str, list[str]]:
    """The paths each hostile copy links out (relative to the repository)."""
    files = sorted(f for f in seen.files if not f.startswith("demo" + os.sep))
    parents = {os.path.dirname(f) for f in files if os.path.dirname(f)} | {d for d in seen.folders if d != "demo"}
    return {
        "every file": files,
        "every folder": _innermost({d for d in parents if not d.startswith("demo")}),
        "every lock": [f for f in files if _lock(os.path.basename(f))],
    }


def check_hostile(case: Command, kind: str, rels: list[str], tmp: Path, monkeypatch, capsys, run) -> None:
    w, paths = _world(tmp, monkeypatch, case)
    for rel in rels:
        path = w.repo / rel
        if kind == "every folder":
            path.mkdir(parents=True, exist_ok=True)  # one the command makes: a link to a folder in its place
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
        link_out(path, w.canary)
    capsys.readouterr()
    canary = snapshot(w.canary)
    around = {k: v for k, v in snapshot(w.tmp).items() if not k.startswith(("repo", "canary", "state"))}
    with watching(w.canary) as opened:
        code = run(w, paths)
    out, err = capsys.readouterr()
    what = f"{case.name}, {kind} linked out ({', '.join(rels)})"
    assert opened == [], f"{what}: read outside the repository: {opened}"
    assert snapshot(w.canary) == canary, f"{what}: the canary tree changed (exit {code}: {err})"
    assert {k: v for k, v in snapshot(w.tmp).items() if not k.startswith(("repo", "canary", "state"))} == around
    assert code in DOCUMENTED, f"{what}: exit {code}\n{err}"
    assert "Traceback" not in err and CANARY_TEXT not in out + err, f"{what}\n{out}\n{err}"


def _cli(case: Command) -> Callable[[World, dict[str, Any]], int]:
    return lambda w, paths: cli.main(paths["argv"])


@pytest.mark.parametrize("case", COMMANDS, ids=[c.name for c in COMMANDS])
def test_no_byte_outside_the_repository_changes_whatever_the_command(case: Command, tmp_path, monkeypatch, capsys):
    run = _cli(case)
    seen = observe(case, tmp_path / "plain", monkeypatch, capsys, run)
    assert seen.files or case.key in {
        ("demo",),
        ("config",),
        ("completion",),
        ("cache",),
        ("cache", "info"),
        ("cache", "clean"),
        # loop-spec 7.x's run is outside the repository (its state home): links there are the case
        # of tests/core/loops/test_loopspec_v7.py::test_a_link_or_a_foreign_folder_is_never_followed.
        ("gate", "question"),
    }, f"{case.name} read no file?"
    for kind, rels in variants(seen).items():
        if rels:
            check_hostile(case, kind, rels, tmp_path / kind.replace(" ", "-"), monkeypatch, capsys, run)


# -- scars mcp: its tools, as the server calls them ----------------------------------------

MCP = Command(("mcp",), a_request, lambda w, p: ["mcp"])  # a request posted: the user key exists


def _mcp_tools(w: World, paths: dict[str, Any]) -> int:
    """Every tool of `scars mcp` in the order an agent calls them (the server is a wrapper that
    turns a scars error into a tool error): the exit code of the first that failed, else 0."""
    from scars.core.errors import ScarsError
    from scars.tui.cli.commands.mcp import Tools

    tools = Tools()
    feature = str(paths[F])
    try:
        tools.list_waiting(str(w.repo))
        tools.feature_status(feature, ["items"])
        tools.budget_context(feature)
        rid = tools.request_gate("entry", feature)["request"]
        tools.wait_for_answer(rid, 0.1, path=feature)
    except ScarsError as exc:
        return exc.exit_code
    return 0


def test_scars_mcp_tools_on_a_repository_of_symlinks(tmp_path, monkeypatch, capsys):
    seen = observe(MCP, tmp_path / "plain", monkeypatch, capsys, _mcp_tools)
    assert any(f.startswith(".scars") for f in seen.files), "the request was posted in the inbox"
    for kind, rels in variants(seen).items():
        if rels:
            check_hostile(MCP, kind, rels, tmp_path / kind.replace(" ", "-"), monkeypatch, capsys, _mcp_tools)


# -- scars triage: the app, headless ----------------------------------------------------------

# What a person does in the app: every screen opened and left, a decision and its undo, a form, the
# round gate, the Loops inbox and a loop's gate, then quit.
TRIAGE_KEYS = (
    ("f",),
    ("u",),
    ("a", "escape"),
    ("d", "escape"),
    ("t", "escape"),
    ("question_mark", "escape"),
    ("g", "escape"),
    ("L", "enter", "escape", "escape"),
    ("q",),
)
TRIAGE = Command(("triage",), a_request, lambda w, p: ["triage", str(p[F]), "--as", "alice"])


def _triage(monkeypatch) -> Callable[[World, dict[str, Any]], int]:
    """``scars triage FEATURE`` as the CLI starts it (its own command line parsed and launched), then
    driven by Pilot through :data:`TRIAGE_KEYS`; the exit code of the CLI."""
    from scars.tui.app.app import ScarsApp
    from scars.tui.cli.commands import triage
    from tests.factories import settled, wait_until

    started: list[ScarsApp] = []
    monkeypatch.setattr(triage, "interactive", lambda: True)
    monkeypatch.setattr(ScarsApp, "run", lambda self, *a, **k: started.append(self) or 0)

    async def drive(app: ScarsApp) -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await app.wait_loaded()
            # A feature the app cannot open (a write refused: the lock, the journal) ends it, as the CLI does.
            await wait_until(pilot, lambda: not app.is_running or settled(app), "the feature shown, or the app ended")
            for keys in TRIAGE_KEYS:
                for key in keys:
                    if not app.is_running:
                        return
                    await pilot.press(key)
                    await wait_until(pilot, lambda: not app.is_running or settled(app), f"{key} done")

    def run(w: World, paths: dict[str, Any]) -> int:
        started.clear()
        code = cli.main(paths["argv"])
        if code == 0:
            (app,) = started
            asyncio.run(drive(app))
        return code

    return run


def test_scars_triage_on_a_repository_of_symlinks(tmp_path, monkeypatch, capsys):
    run = _triage(monkeypatch)
    seen = observe(TRIAGE, tmp_path / "plain", monkeypatch, capsys, run)
    assert any(f.endswith(os.path.join(".scars", "journal.jsonl")) for f in seen.files), seen.files  # decided
    for kind, rels in variants(seen).items():
        assert rels, kind
        check_hostile(TRIAGE, kind, rels, tmp_path / kind.replace(" ", "-"), monkeypatch, capsys, run)


# -- scars serve: the app in a browser, on 127.0.0.1 -----------------------------------------


async def _browse(url: str, feature: str) -> str:
    """What a browser sees of the served app: the feature, then ``f`` typed; ends when the app says
    what became of the decision or the app ends (a feature it cannot open). Bounded only against a hang."""
    import re
    import time

    import aiohttp

    got = ""
    async with aiohttp.ClientSession() as session, session.ws_connect(url) as ws:

        async def until(*texts: str) -> bool:
            nonlocal got
            deadline = time.monotonic() + 60
            while not any(t in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", got) for t in texts):
                msg = await asyncio.wait_for(ws.receive(), timeout=max(deadline - time.monotonic(), 0.1))
                if msg.type == aiohttp.WSMsgType.BINARY:
                    got += msg.data.decode("utf-8", "replace")
                elif msg.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
                    return False  # the app ended: textual-serve closes the websocket
            return True

        if await until(feature):
            await ws.send_json(["stdin", "f"])
            await until("F fix", "Not recorded", "refused")
    return got


def test_scars_serve_on_a_repository_of_symlinks(tmp_path, monkeypatch, capsys):
    """`scars serve --write` for real (a server process on a loopback port: no network), a browser's
    websocket typing a decision into the app it serves. The served app is `scars triage` in a child
    process: the paths it reads and writes are those the triage case observes in this process, and
    the canary is hashed around it (its opens are the triage case's, seen in process)."""
    pytest.importorskip("aiohttp")
    from tests.tui.cli.test_serve import start as serve
    from tests.tui.cli.test_serve import stop

    seen = observe(TRIAGE, tmp_path / "observe", monkeypatch, capsys, _triage(monkeypatch))
    shown: dict[str, str] = {}

    def run(w: World, paths: dict[str, Any]) -> int:
        proc, token, port = serve(paths[F], "--write", "--as", "bob")
        try:
            url = f"ws://127.0.0.1:{port}/ws?token={token}&width=100&height=30"
            shown[str(w.tmp)] = asyncio.run(_browse(url, paths[F].name))
        finally:
            stop(proc)
        return 0

    plain = tmp_path / "plain"
    check_hostile(TRIAGE, "nothing", [], plain, monkeypatch, capsys, run)
    assert "F fix" in shown[str(plain)]  # the browser's decision, recorded by the served app
    with FeatureSession.open(next((plain / "repo" / "changes").iterdir()), read_only=True) as s:
        assert [(d.action, d.decided_by) for d in s.decisions.values()] == [("fix", "bob")]
    for kind, rels in variants(seen).items():
        check_hostile(TRIAGE, kind, rels, tmp_path / kind.replace(" ", "-"), monkeypatch, capsys, run)
