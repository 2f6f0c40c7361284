"""The plan of `scars init`: which files of a repository wire it for which agent, and the bytes
each gets — computed here (:func:`plan`), shown as a unified diff (:func:`diff`) or written
(:func:`apply`). `--dry-run` and a real run compute the same plan; tests call these functions.

What each agent reads (the sources checked for each format):

* **Claude Code** — the project's MCP servers in ``.mcp.json`` at the repository root
  (``{"mcpServers": {"NAME": {"command": …, "args": […]}}}``, docs.claude.com/en/docs/claude-code/mcp,
  "project scope"); its instructions in ``CLAUDE.md``; its hooks in ``.claude/settings.json``
  (``{"hooks": {"PreToolUse": [{"matcher": "Bash|Edit|…", "hooks": [{"type": "command",
  "command": …}]}]}}``, docs.claude.com/en/docs/claude-code/hooks). The hook gets the tool call as
  JSON on stdin (``tool_name``, ``tool_input``, ``cwd`` …) and denies it by printing
  ``{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
  "permissionDecisionReason": …}}`` (``scars.core.agents.guard``).
* **Codex CLI** — MCP servers as TOML tables ``[mcp_servers.NAME]`` with ``command`` and ``args``,
  in ``~/.codex/config.toml`` and, for a trusted project, in the project's ``.codex/config.toml``
  (developers.openai.com/codex/mcp; codex-rs ``docs/config.md``); its instructions in ``AGENTS.md``.
  scars writes the project file only (never a file of the user's home).
* **Gemini CLI** — ``mcpServers`` in the project's ``.gemini/settings.json``
  (geminicli.com/docs/tools/mcp-server, geminicli.com/docs/cli/configuration); its instructions in
  ``GEMINI.md``.

Rules: a JSON file is edited as text (``jsonedit``: every byte scars does not add stays); a
Markdown or TOML file gets one marked section appended (``instructions.BEGIN`` / ``END``, or
``# scars:begin`` / ``# scars:end``), replaced in place when it is there with other words; an
entry the user already has under scars' name is kept as it is. A second run changes nothing.
``remove`` takes out exactly what was added: a file scars created (its bytes are all scars') is
removed, another gets back the bytes it had. Every read and write goes by the repository's rules
(``storage/paths``, ``storage/confine``): a target that is a symlink leading out of the repository
is refused (OutsideRepository) before anything is read or written.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from scars.core.agents import jsonedit
from scars.core.agents.instructions import BEGIN, END, section
from scars.core.errors import ChangedOnDisk, UsageError
from scars.core.records import record
from scars.core.storage import confine, durable, paths

AGENTS: tuple[str, ...] = ("claude-code", "codex", "gemini")

SERVER_NAME = "scars"
SERVER = {"command": "scars", "args": ["mcp"]}
HOOK_COMMAND = "scars hook pre-tool-use"
# The tools whose calls the hook sees: the shell, and the edits of a file.
HOOK_MATCHER = "Bash|Edit|MultiEdit|Write|NotebookEdit"
HOOK = {"matcher": HOOK_MATCHER, "hooks": [{"type": "command", "command": HOOK_COMMAND}]}

TOML_BEGIN = "# scars:begin (added by `scars init`; `scars init --remove` takes it out)"
TOML_END = "# scars:end"
TOML_BODY = f'[mcp_servers.{SERVER_NAME}]\ncommand = "scars"\nargs = ["mcp"]\n'

_LIMIT = 1 << 20  # a settings file larger than 1 MiB is not one scars edits


@record(slots=True)
class Target:
    """One file an agent reads and what scars puts in it."""

    agent: str
    rel: str  # path inside the repository
    kind: str  # json-member | json-item | section | toml
    what: str  # one line: what scars adds there
    keys: tuple[str, ...] = ()  # json: the objects on the way
    leaf: Any = None  # json-member: (key, value); json-item: the element


TARGETS: tuple[Target, ...] = (
    Target("claude-code", ".mcp.json", "json-member", "the scars MCP server (mcpServers.scars)", ("mcpServers",), (SERVER_NAME, SERVER)),
    Target("claude-code", ".claude/settings.json", "json-item", f"a PreToolUse hook running `{HOOK_COMMAND}`", ("hooks", "PreToolUse"), HOOK),
    Target("claude-code", "CLAUDE.md", "section", "the scars section: every human gate is asked through scars"),
    Target("codex", ".codex/config.toml", "toml", "the scars MCP server ([mcp_servers.scars])"),
    Target("codex", "AGENTS.md", "section", "the scars section: every human gate is asked through scars"),
    Target("gemini", ".gemini/settings.json", "json-member", "the scars MCP server (mcpServers.scars)", ("mcpServers",), (SERVER_NAME, SERVER)),
    Target("gemini", "GEMINI.md", "section", "the scars section: every human gate is asked through scars"),
)  # fmt: skip


@record(slots=True)
class FileChange:
    """One file of the plan: its bytes before (None: absent) and after (None: removed)."""

    target: Target
    path: Path
    before: bytes | None
    after: bytes | None
    note: str  # what happens to it, in one line

    @property
    def changed(self) -> bool:
        return self.before != self.after


def agents_of(names: Iterable[str] | None) -> tuple[str, ...]:
    """The agents asked for (None or empty: all three, in their order)."""
    chosen = tuple(dict.fromkeys(names or ()))
    for name in chosen:
        if name not in AGENTS:
            raise UsageError(f"unknown agent {name!r} (known: {', '.join(AGENTS)})")
    return tuple(a for a in AGENTS if a in chosen) if chosen else AGENTS


# -- JSON -----------------------------------------------------------------------------------


def _nested(keys: tuple[str, ...], kind: str, leaf: Any) -> Any:
    value: Any = {leaf[0]: leaf[1]} if kind == "json-member" else [leaf]
    for key in reversed(keys[1:]):
        value = {key: value}
    return value


def created_json(t: Target) -> str:
    """The whole file scars writes where there was none."""
    return jsonedit.dumps({t.keys[0]: _nested(t.keys, t.kind, t.leaf)}, "", "  ") + "\n"


def _walk(text: str, t: Target) -> tuple[jsonedit.Node, list[jsonedit.Node]]:
    root = jsonedit.parse(text)
    if root.kind != "object":
        raise UsageError(f"{t.rel}: its top level is not a JSON object; scars does not change it")
    chain = [root]
    for key in t.keys:
        child = chain[-1].member(key)
        if child is None:
            break
        want = "array" if (t.kind == "json-item" and key == t.keys[-1]) else "object"
        if child.kind != want:
            raise UsageError(
                f"{t.rel}: {'.'.join(t.keys[: len(chain)])} is not a JSON {want}; scars does not change it"
            )
        chain.append(child)
    return root, chain


def _json_add(text: str | None, t: Target) -> tuple[str, str]:
    if text is None or not text.strip():
        return created_json(t), "created"
    try:
        root, chain = _walk(text, t)
    except jsonedit.JsonEditError as exc:
        raise UsageError(
            f"{t.rel}: {exc}; scars does not change it (fix it or remove it, then run this again)"
        ) from None
    unit = jsonedit.indent_unit(text, root)
    if len(chain) <= len(t.keys):  # a level is missing: add it, holding the rest
        missing = t.keys[len(chain) - 1]
        rest = _nested(t.keys[len(chain) - 1 :], t.kind, t.leaf)
        return jsonedit.add_member(text, chain[-1], missing, rest, unit), "added"
    last = chain[-1]
    if t.kind == "json-member":
        key, value = t.leaf
        have = last.member(key)
        if have is None:
            return jsonedit.add_member(text, last, key, value, unit), "added"
        if jsonedit.value_of(text, have) == value:
            return text, "already there"
        return text, f"kept: {'.'.join(t.keys)}.{key} is already yours (left as it is)"
    if any(jsonedit.value_of(text, item) == t.leaf for item in last.items):
        return text, "already there"
    return jsonedit.append_item(text, last, t.leaf, unit), "added"


def _json_remove(text: str | None, t: Target) -> tuple[str | None, str]:
    if text is None:
        return None, "absent"
    if text == created_json(t):
        return None, "removed (scars created it)"
    try:
        root, chain = _walk(text, t)
    except jsonedit.JsonEditError:
        return text, "left as it is (not JSON scars can read)"
    except UsageError:
        return text, "nothing of scars'"
    if len(chain) <= len(t.keys):
        return text, "nothing of scars'"
    last = chain[-1]
    if t.kind == "json-member":
        key, value = t.leaf
        have = last.member(key)
        if have is None or jsonedit.value_of(text, have) != value:
            return text, "nothing of scars'"
        out = jsonedit.remove_member(text, last, key)
    else:
        index = next((i for i, item in enumerate(last.items) if jsonedit.value_of(text, item) == t.leaf), None)
        if index is None:
            return text, "nothing of scars'"
        out = jsonedit.remove_item(text, last, index)
    # The objects on the way that the cut left empty may be scars' too (it adds a missing level
    # whole) or the user's (an empty "hooks": {} it filled): the removal is the one whose
    # re-addition gives the text back, the widest first; none (the user edited around it): the
    # entry alone.
    candidates = [out]
    for depth in range(len(t.keys), 0, -1):
        _root, now = _walk(candidates[-1], t)
        if len(now) <= depth or now[depth].members or now[depth].items:
            break
        candidates.append(jsonedit.remove_member(candidates[-1], now[depth - 1], t.keys[depth - 1]))
    for candidate in reversed(candidates):
        if _json_add(candidate, t)[0] == text:
            return candidate, "removed scars' entry"
    return out, "removed scars' entry"


# -- a marked section (Markdown, TOML) --------------------------------------------------------


def _block(t: Target) -> tuple[str, str, str]:
    if t.kind == "toml":
        return TOML_BEGIN, TOML_END, f"{TOML_BEGIN}\n{TOML_BODY}{TOML_END}\n"
    return BEGIN, END, section()


def _find(text: str, begin: str, end: str) -> tuple[int, int] | None:
    """The span of the marked block (begin marker to the newline after the end marker)."""
    i = text.find(begin)
    if i < 0 or (i > 0 and text[i - 1] != "\n"):
        return None
    j = text.find(end, i)
    if j < 0:
        return None
    k = j + len(end)
    if k < len(text) and text[k] == "\n":
        k += 1
    return i, k


def _toml_has_server(text: str, t: Target) -> bool:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{t.rel}: not valid TOML ({exc}); scars does not change it") from None
    servers = data.get("mcp_servers")
    return isinstance(servers, dict) and SERVER_NAME in servers


def _section_add(text: str | None, t: Target) -> tuple[str, str]:
    begin, end, block = _block(t)
    if text is None or text == "":
        return block, "created" if text is None else "added"
    span = _find(text, begin, end)
    if span is not None:
        if text[span[0] : span[1]] == block:
            return text, "already there"
        return text[: span[0]] + block + text[span[1] :], "updated scars' section"
    if t.kind == "toml" and _toml_has_server(text, t):
        return text, f"kept: [mcp_servers.{SERVER_NAME}] is already yours (left as it is)"
    # one newline before the block: it ends the user's last line, or makes the blank line between
    out = text + "\n" + block
    if t.kind == "toml" and not _toml_has_server(out, t):  # pragma: no cover - the block is a table
        raise UsageError(f"{t.rel}: the scars table would not read as TOML here; add it by hand")
    return out, "added"


def _section_remove(text: str | None, t: Target) -> tuple[str | None, str]:
    begin, end, block = _block(t)
    if text is None:
        return None, "absent"
    span = _find(text, begin, end)
    if span is None:
        return text, "nothing of scars'"
    start = span[0]
    if start == 0:
        rest = text[span[1] :]
        return (None, "removed (scars created it)") if rest == "" else (rest, "removed scars' section")
    start -= 1  # the newline scars put before its block
    return text[:start] + text[span[1] :], "removed scars' section"


# -- the plan -----------------------------------------------------------------------------------


def _read(path: Path, root: Path, rel: str) -> bytes | None:
    confine.check(path, root)  # a link leading out: refused before it is read
    try:
        data, _fp = paths.read_with_fingerprint(path, root=root, limit=_LIMIT, what=rel)
    except paths.Unreadable as exc:
        raise UsageError(f"{rel}: {exc}") from None
    return data


def _decode(data: bytes | None, rel: str) -> str | None:
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{rel} is not UTF-8 text; scars does not change it") from None


def plan(
    repo: str | os.PathLike[str], agents: Iterable[str] | None = None, *, remove: bool = False
) -> list[FileChange]:
    """What `scars init` (``remove``: `scars init --remove`) does to the repository ``repo`` for
    ``agents`` (None: all): one :class:`FileChange` per file, changed or not."""
    root = Path(repo)
    if not root.is_dir():
        raise UsageError(f"{repo}: not a directory")
    chosen = agents_of(agents)
    out: list[FileChange] = []
    for t in TARGETS:
        if t.agent not in chosen:
            continue
        path = root / t.rel
        before = _read(path, root, t.rel)
        text = _decode(before, t.rel)
        json_kind = t.kind.startswith("json")
        if remove:
            after_text, note = (_json_remove if json_kind else _section_remove)(text, t)
        else:
            after_text, note = (_json_add if json_kind else _section_add)(text, t)
        after = None if after_text is None else after_text.encode("utf-8")
        out.append(FileChange(t, path, before, after, note))
    return out


def diff(changes: Iterable[FileChange]) -> str:
    """The plan as a unified diff (``a/`` the files now, ``b/`` after); empty when nothing changes."""
    parts: list[str] = []
    for c in changes:
        if not c.changed:
            continue
        a = (c.before or b"").decode("utf-8").splitlines(keepends=True)
        b = (c.after or b"").decode("utf-8").splitlines(keepends=True)
        old = f"a/{c.target.rel}" if c.before is not None else "/dev/null"
        new = f"b/{c.target.rel}" if c.after is not None else "/dev/null"
        for line in difflib.unified_diff(a, b, old, new):
            parts.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(parts)


def apply(repo: str | os.PathLike[str], changes: Iterable[FileChange]) -> list[FileChange]:
    """Write the plan (atomic replace by the write rule; a removed file unlinked in its folder
    reached by that rule); the changes written. A file that changed since the plan read it is
    refused (ChangedOnDisk) before anything more is written."""
    root = Path(repo)
    done: list[FileChange] = []
    for c in changes:
        if not c.changed:
            continue
        if _read(c.path, root, c.target.rel) != c.before:
            raise ChangedOnDisk(f"{c.target.rel} changed while scars init ran; nothing more was written. Run it again")
        if c.after is None:
            durable.remove_file(c.path, root=root)
            if c.path.parent != root:  # .claude/, .codex/, .gemini/ left empty
                durable.remove_empty_dir(c.path.parent, root=root)
        else:
            confine.make_dir(c.path.parent, root)  # .claude/, .codex/, .gemini/ when missing
            durable.atomic_write(c.path, c.after, root=root)
        done.append(c)
    return done
