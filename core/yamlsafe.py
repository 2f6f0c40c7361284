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


def loads(text: str) -> Loaded:
    """Load one YAML document from text with the checks described in the module doc."""
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
        tree = "&" not in text
        _walk(node, out, tree=tree)
        try:
            # Without anchors the document is a tree: build it in one direct pass (what
            # SafeConstructor would build, at a fraction of its per-node cost).
            out.value = _build_tree(node, loader) if tree else loader.construct_document(node)
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


def _walk(root: yaml.Node, out: Loaded, *, tree: bool = False) -> None:
    """One iterative pass: duplicate keys, depth, cycles, alias-expanded size, lines.

    ``tree``: the text holds no anchor (no ``&``), so no node can appear twice — no alias
    expansion and no cycle is possible, and the cheaper ``_walk_tree`` does the rest.
    """
    # Top-level lines.
    if isinstance(root, yaml.MappingNode):
        for k, v in root.value:
            if isinstance(k, yaml.ScalarNode):
                out.key_lines.setdefault(k.value, k.start_mark.line + 1)
                if isinstance(v, yaml.SequenceNode):
                    out.item_lines[k.value] = [n.start_mark.line + 1 for n in v.value]

    if tree:
        _walk_tree(root, out)
        return
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
            _duplicate_keys(node, out)
            for k, v in node.value:
                for child in (k, v):
                    if id(child) in on_path:
                        raise YamlProblem("an alias refers to its own ancestor (cyclic data)", child.start_mark.line + 1)
                    if id(child) not in size:
                        stack.append((child, depth + 1, False))
        else:
            for child in node.value:
                if id(child) in on_path:
                    raise YamlProblem("an alias refers to its own ancestor (cyclic data)", child.start_mark.line + 1)
                if id(child) not in size:
                    stack.append((child, depth + 1, False))


_STR_TAG = "tag:yaml.org,2002:str"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_NULL_TAG = "tag:yaml.org,2002:null"


def _build_tree(root: yaml.Node, loader: Any) -> Any:
    """Construct a document that has no anchors, exactly as ``construct_document`` would.

    Plain strings, maps and sequences (nearly every node of a scar report) are built
    directly; any other node — ints, bools, floats, timestamps, explicit tags, merge keys,
    non-scalar keys — is handed to the loader's own SafeConstructor, so the result (and
    every error) is the same as before. Depth was bounded by ``_walk`` already.
    """
    construct = loader.construct_object
    scalar, mapping, sequence = yaml.ScalarNode, yaml.MappingNode, yaml.SequenceNode

    def build(node: yaml.Node) -> Any:
        tag = node.tag
        if isinstance(node, scalar):
            if tag == _STR_TAG:
                return node.value
            if tag == _NULL_TAG:
                return None
            return construct(node, deep=True)
        if isinstance(node, mapping) and tag == _MAP_TAG:
            d: dict[Any, Any] = {}
            for k, v in node.value:
                if not isinstance(k, scalar) or k.tag == _MERGE_TAG:
                    return construct(node, deep=True)
                key = build(k)
                try:
                    hash(key)
                except TypeError:
                    return construct(node, deep=True)  # raises PyYAML's own "unhashable key"
                d[key] = build(v)
            return d
        if isinstance(node, sequence) and tag == _SEQ_TAG:
            return [build(c) for c in node.value]
        return construct(node, deep=True)

    return build(root)


def _duplicate_keys(node: yaml.MappingNode, out: Loaded) -> None:
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
    """``_walk`` for a document without anchors: duplicate keys, depth and node count."""
    count = 0
    stack: list[tuple[yaml.Node, int]] = [(root, 1)]
    scalar, mapping = yaml.ScalarNode, yaml.MappingNode
    while stack:
        node, depth = stack.pop()
        count += 1
        if isinstance(node, scalar):
            continue
        if depth > MAX_DEPTH:
            raise YamlProblem(f"nesting deeper than {MAX_DEPTH} levels", node.start_mark.line + 1)
        if isinstance(node, mapping):
            _duplicate_keys(node, out)
            for k, v in node.value:
                stack.append((k, depth + 1))
                stack.append((v, depth + 1))
        else:
            stack.extend((c, depth + 1) for c in node.value)
    if count > MAX_EXPANDED_NODES:
        raise YamlProblem(f"the document holds more than {MAX_EXPANDED_NODES:,} nodes", root.start_mark.line + 1)


def load_path_quiet(path: Path) -> tuple[Loaded | None, YamlProblem | None]:
    """``load_file`` that returns the problem instead of raising (OSError included)."""
    try:
        return load_file(path), None
    except YamlProblem as exc:
        return None, exc
    except OSError as exc:
        return None, YamlProblem(f"cannot read: {exc.strerror or exc}")
