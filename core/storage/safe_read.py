"""Safe, fast loading of untrusted YAML (scar reports, the registry, index.yaml, logs).

One parse per file: PyYAML's libyaml composer (``CSafeLoader``) builds the node tree, one
iterative walk over it checks what PyYAML lets through silently and records line numbers,
then the tree is constructed into Python objects. The walk checks:

* duplicate keys in any mapping (PyYAML would silently keep the last value): a problem
  naming the key and its line;
* alias expansion: the expanded size is counted over *unique* nodes (memoised), so a
  "billion laughs" document is rejected in microseconds instead of exploding later in
  whatever walks the data; self-referencing (cyclic) aliases are rejected too;
* nesting depth above ``MAX_DEPTH``.

Limits (documented in the README, section "How scars reads a feature"):

* ``MAX_FILE_BYTES`` = 5 MiB per file, checked by ``stat`` and a bounded read;
* ``MAX_DEPTH`` = 64 levels of nesting;
* ``MAX_EXPANDED_NODES`` = 1,000,000 nodes after alias expansion.

Text must be UTF-8 (a UTF-8 BOM is skipped; a UTF-16 BOM is honoured). Invalid UTF-8 is a
problem with the byte offset and line. Without libyaml, the pure-Python ``SafeLoader`` is
used and ``LOADER_WARNING`` says so (loudly: it is about 10x slower).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_DEPTH = 64
MAX_EXPANDED_NODES = 1_000_000

if getattr(yaml, "__with_libyaml__", False):
    _Loader: type = yaml.CSafeLoader
    LOADER_WARNING: str | None = None
else:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader
    LOADER_WARNING = (
        "PyYAML was built without libyaml: reading with the pure-Python SafeLoader "
        "(about 10x slower). Reinstall PyYAML with libyaml for full speed."
    )
    warnings.warn(LOADER_WARNING, RuntimeWarning, stacklevel=2)

_MERGE_TAG = "tag:yaml.org,2002:merge"


class YamlProblem(ValueError):
    """A file that cannot be used as YAML. ``line`` is 1-based where known."""

    def __init__(self, reason: str, line: int | None = None):
        super().__init__(reason if line is None else f"{reason} (line {line})")
        self.reason = reason
        self.line = line


@dataclass(slots=True)
class Loaded:
    """A loaded document with what the walk found.

    ``value``: the constructed data (None for an empty document).
    ``key_lines``: 1-based line of each top-level key (when the root is a mapping).
    ``item_lines``: for each top-level key whose value is a sequence, the 1-based line of
    every element.
    ``problems``: (line, reason) pairs that do not stop loading (duplicate keys).
    """

    value: Any
    key_lines: dict[str, int] = field(default_factory=dict)
    item_lines: dict[str, list[int]] = field(default_factory=dict)
    problems: list[tuple[int | None, str]] = field(default_factory=list)


def read_bounded(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> bytes:
    """Read a regular file of at most ``limit`` bytes (stat, then a bounded read)."""
    st = os.stat(path)
    if not _is_regular(st.st_mode):
        raise YamlProblem("not a regular file")
    if st.st_size > limit:
        raise YamlProblem(f"file is {st.st_size:,} bytes, over the {limit:,}-byte limit")
    with open(path, "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:  # grew between stat and read
        raise YamlProblem(f"file is over the {limit:,}-byte limit")
    return data


def _is_regular(mode: int) -> bool:
    import stat

    return stat.S_ISREG(mode)


def decode(data: bytes) -> str:
    """Bytes → text: UTF-8 (BOM skipped) or BOM-marked UTF-16; invalid UTF-8 is a problem."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise YamlProblem(f"invalid UTF-16 at byte {exc.start}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise YamlProblem(f"invalid UTF-8 at byte {exc.start}", line) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


def load_file(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> Loaded:
    """Read and load one YAML file. Raises ``YamlProblem`` (and OSError for I/O errors)."""
    return loads(decode(read_bounded(path, limit)))


# PyYAML's C composer recurses once per nesting level: with PyYAML 6.0.3 (libyaml without
# a nesting limit) 30,000 nested `[` (a 60 KB file) or `- - - …` overflowed the C stack and
# killed the process with SIGSEGV (tests/hostile). Text that *could* nest deeper than
# _SCAN_ABOVE levels is first checked with the event parser, which does not recurse.
_SCAN_ABOVE = 1000
_LEVEL_OPENERS = ("[", "{", "-", "?", ":", "\n", "\r", "\x85", "\u2028", "\u2029")


def _check_nesting(text: str) -> None:
    """Raise YamlProblem when ``text`` nests deeper than MAX_DEPTH (only scans when it could)."""
    # Every nesting level opens with one of these characters (a flow collection, a block
    # sequence entry, a key, or a new line), so their count bounds the depth from above.
    if sum(text.count(c) for c in _LEVEL_OPENERS) + 1 <= _SCAN_ABOVE:
        return
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    mark = event.start_mark
                    raise YamlProblem(f"nesting deeper than {MAX_DEPTH} levels", mark.line + 1 if mark else None)
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
    except yaml.YAMLError:
        return  # a syntax error: the loader below reports it with its context


def loads(text: str) -> Loaded:
    """Load one YAML document from text with the checks described in the module doc."""
    _check_nesting(text)
    loader = _Loader(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            # The context mark (where the construct began) is where a person should look.
            mark = exc.context_mark or exc.problem_mark
            reason = " ".join(p for p in (exc.context, exc.problem) if p) or "invalid YAML"
            if exc.context_mark and exc.problem_mark and exc.problem_mark.line != exc.context_mark.line:
                reason += f" (at line {exc.problem_mark.line + 1})"
            raise YamlProblem(f"not YAML: {reason}", mark.line + 1 if mark else None) from None
        except yaml.YAMLError as exc:  # reader errors (control characters …)
            raise YamlProblem(f"not YAML: {_one_line(str(exc))}") from None
        if node is None:
            return Loaded(None)
        out = Loaded(None)
        _top_lines(node, out)
        if "&" in text or "*" in text:  # an anchor or alias may be present: full guard
            _walk(node, out)
        else:  # a pure tree: only duplicate keys and depth to check
            _walk_tree(node, out)
        try:
            out.value = loader.construct_document(node)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            raise YamlProblem(f"not usable YAML: {exc.problem or exc}", mark.line + 1 if mark else None) from None
        except (yaml.YAMLError, ValueError, TypeError, OverflowError) as exc:
            raise YamlProblem(f"not usable YAML: {_one_line(str(exc))}") from None
        return out
    finally:
        loader.dispose()


def _one_line(text: str) -> str:
    return " ".join(text.split())[:300]


def _top_lines(root: yaml.Node, out: Loaded) -> None:
    """Lines of the top-level keys and of the elements of top-level sequences."""
    if isinstance(root, yaml.MappingNode):
        for k, v in root.value:
            if isinstance(k, yaml.ScalarNode):
                out.key_lines.setdefault(k.value, k.start_mark.line + 1)
                if isinstance(v, yaml.SequenceNode):
                    out.item_lines[k.value] = [n.start_mark.line + 1 for n in v.value]


def _check_keys(node: yaml.MappingNode, out: Loaded) -> None:
    seen: dict[Any, int] = {}
    for k, _v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.tag != _MERGE_TAG:
            key = (k.tag, k.value)
            line = k.start_mark.line + 1
            if key in seen:
                out.problems.append(
                    (line, f"duplicate key {k.value!r} (first at line {seen[key]}; the later value would silently win)")
                )
            else:
                seen[key] = line


def _walk_tree(root: yaml.Node, out: Loaded) -> None:
    """The walk for a document without anchors: duplicate keys and depth."""
    mapping, sequence = yaml.MappingNode, yaml.SequenceNode
    stack: list[tuple[yaml.Node, int]] = [(root, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth = pop()
        cls = node.__class__
        if cls is mapping:
            if depth > MAX_DEPTH:
                raise YamlProblem(f"nesting deeper than {MAX_DEPTH} levels", node.start_mark.line + 1)
            if len(node.value) > 1:
                _check_keys(node, out)  # type: ignore[arg-type]  # node.__class__ is MappingNode (checked above)
            for k, v in node.value:
                if k.__class__ is not yaml.ScalarNode:
                    push((k, depth + 1))
                if v.__class__ is not yaml.ScalarNode:
                    push((v, depth + 1))
        elif cls is sequence:
            if depth > MAX_DEPTH:
                raise YamlProblem(f"nesting deeper than {MAX_DEPTH} levels", node.start_mark.line + 1)
            for c in node.value:
                if c.__class__ is not yaml.ScalarNode:
                    push((c, depth + 1))


def _walk(root: yaml.Node, out: Loaded) -> None:
    """One iterative pass: duplicate keys, depth, cycles, alias-expanded size."""
    size: dict[int, int] = {}  # id(node) -> expanded size, for finished nodes
    on_path: set[int] = set()
    # Stack of (node, depth, expanded?)
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, done = stack.pop()
        nid = id(node)
        if done:
            on_path.discard(nid)
            if isinstance(node, yaml.MappingNode):
                total = 1 + sum(size[id(k)] + size[id(v)] for k, v in node.value)
            else:
                total = 1 + sum(size[id(c)] for c in node.value)
            if total > MAX_EXPANDED_NODES:
                raise YamlProblem(
                    f"alias expansion exceeds {MAX_EXPANDED_NODES:,} nodes (a 'billion laughs' document?)",
                    node.start_mark.line + 1,
                )
            size[nid] = total
            continue
        if nid in size:
            continue  # an alias of a node already counted
        if isinstance(node, yaml.ScalarNode):
            size[nid] = 1
            continue
        if nid in on_path:
            raise YamlProblem("an alias refers to its own ancestor (cyclic data)", node.start_mark.line + 1)
        if depth > MAX_DEPTH:
            raise YamlProblem(f"nesting deeper than {MAX_DEPTH} levels", node.start_mark.line + 1)
        on_path.add(nid)
        stack.append((node, depth, True))
        if isinstance(node, yaml.MappingNode):
            _check_keys(node, out)
            for k, v in node.value:
                for child in (k, v):
                    if id(child) in on_path:
                        raise YamlProblem(
                            "an alias refers to its own ancestor (cyclic data)", child.start_mark.line + 1
                        )
                    if id(child) not in size:
                        stack.append((child, depth + 1, False))
        else:
            for child in node.value:
                if id(child) in on_path:
                    raise YamlProblem("an alias refers to its own ancestor (cyclic data)", child.start_mark.line + 1)
                if id(child) not in size:
                    stack.append((child, depth + 1, False))


def load_path_quiet(path: Path) -> tuple[Loaded | None, YamlProblem | None]:
    """``load_file`` that returns the problem instead of raising (OSError included)."""
    try:
        return load_file(path), None
    except YamlProblem as exc:
        return None, exc
    except OSError as exc:
        return None, YamlProblem(f"cannot read: {exc.strerror or exc}")
