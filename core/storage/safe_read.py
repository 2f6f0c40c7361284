"""THE safe-read policy: every file scars reads that someone else wrote goes through here.

Reading a file (:func:`read_bytes`, and :func:`read_text`, :func:`load_yaml`, :func:`load_json`
on top of it):

* only a regular file (not a directory, FIFO, socket or device);
* a symlink, when the caller names the tree the file belongs to (``root``: the repository or the
  scanned directory), only when it resolves inside that tree (``storage/paths``: not outside,
  not a loop); a file named on the command line (an answers file) is read where it points;
* at most a limit of bytes, by ``stat`` and a bounded read (a file growing meanwhile is refused):
  ``YAML_MAX_BYTES`` 5 MiB, ``JSON_MAX_BYTES`` and ``TEXT_MAX_BYTES`` 8 MiB, or the caller's;
* text is UTF-8 (a UTF-8 BOM skipped) or BOM-marked UTF-16; invalid UTF-8 is refused with its
  byte offset and line (``strict=False``: replaced, for prose a person reads);
* YAML as below; JSON without NaN / Infinity and nested at most ``MAX_DEPTH`` levels.

A refusal is :class:`Unreadable` (``reason``, ``line``); a missing file is ``FileNotFoundError``
(the caller decides what "absent" means).

YAML: one parse per file: PyYAML's libyaml composer (``CSafeLoader``, its tag resolution
written for a safe loader) builds the node tree, one iterative walk over it checks what PyYAML
lets through silently and records line numbers, then the tree is constructed into Python
objects (for a document without anchors — most — the walk builds them as it goes, exactly as
PyYAML's constructor does, and leaves any shape it does not build to that constructor). A document
without anchors of ``STREAM_FROM`` characters or more (a large index.yaml) is built the same way
from the parser's events, with no node tree (a fifth of the memory), and composed as above when
it holds anything but a clean tree (a duplicate key, an error, a shape left to the constructor).
The walk checks:

* duplicate keys in any mapping (PyYAML would silently keep the last value): a problem
  naming the key and its line;
* alias expansion: the expanded size is counted over *unique* nodes (memoised), so a
  "billion laughs" document is rejected in microseconds instead of exploding later in
  whatever walks the data; self-referencing (cyclic) aliases are rejected too;
* nesting depth above ``MAX_DEPTH``.

Limits (documented in docs/reading.md, "Limits: one read policy"):

* ``YAML_MAX_BYTES`` = 5 MiB per file;
* ``MAX_DEPTH`` = 64 levels of nesting;
* ``MAX_EXPANDED_NODES`` = 1,000,000 nodes after alias expansion.

Without libyaml, the pure-Python ``SafeLoader`` is
used and ``LOADER_WARNING`` says so (loudly: it is about 10x slower).
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any

from scars.core.records import field, record
from scars.core.storage.paths import TEXT_MAX_BYTES as TEXT_MAX_BYTES
from scars.core.storage.paths import Unreadable as Unreadable
from scars.core.storage.paths import check_file as check_file
from scars.core.storage.paths import check_read as check_read
from scars.core.storage.paths import decode as decode
from scars.core.storage.paths import fingerprint as fingerprint
from scars.core.storage.paths import folder_refusal as folder_refusal
from scars.core.storage.paths import list_dir as list_dir
from scars.core.storage.paths import open_file as open_file
from scars.core.storage.paths import read_bytes as read_bytes
from scars.core.storage.paths import read_text as read_text
from scars.core.storage.paths import read_with_fingerprint as read_with_fingerprint

YAML_MAX_BYTES = 5 * 1024 * 1024
JSON_MAX_BYTES = 8 * 1024 * 1024
MAX_DEPTH = 64
MAX_EXPANDED_NODES = 1_000_000

# PyYAML, its loader and the scalar constructors the one pass uses: made by :func:`_ready` when the
# first YAML is read. A process that reads none (the app over a cached feature, the Loops inbox's
# process, `scars status` from the cache) never loads PyYAML (~10 ms).
yaml: Any = None
_Loader: Any = None
_SCALAR_CTORS: dict[str, Any] = {}
LOADER_WARNING: str | None = None  # said when PyYAML has no libyaml (set with the first YAML read)


def _ready() -> None:
    """PyYAML loaded and this module's loader made, once (before any YAML is parsed)."""
    global yaml, _Loader, LOADER_WARNING
    if yaml is not None:
        return
    # lazy: PyYAML with the first YAML read (see above)
    import yaml as module

    if getattr(module, "__with_libyaml__", False):
        loader: Any = module.CSafeLoader
    else:  # pragma: no cover - depends on how PyYAML was built
        loader = module.SafeLoader
        LOADER_WARNING = (
            "PyYAML was built without libyaml: reading with the pure-Python SafeLoader "
            "(about 10x slower). Reinstall PyYAML with libyaml for full speed."
        )
        warnings.warn(LOADER_WARNING, RuntimeWarning, stacklevel=2)
    yaml = module
    _Loader = _quick_resolver(loader)
    _SCALAR_CTORS.update({t: _Loader.yaml_constructors[t] for t in _SCALAR_TAGS})


def _quick_resolver(base: Any) -> Any:
    """``base`` with PyYAML's tag resolution written for what a safe loader resolves (the
    composer calls it for every node): the same tags as ``Resolver.resolve`` when there are no
    path resolvers and no wildcard implicit resolver (``base`` itself otherwise)."""
    implicit = base.yaml_implicit_resolvers
    if base.yaml_path_resolvers or None in implicit:  # pragma: no cover - not PyYAML's safe loader
        return base
    get = implicit.get
    scalar, sequence = yaml.ScalarNode, yaml.SequenceNode
    str_tag, seq_tag, map_tag = base.DEFAULT_SCALAR_TAG, base.DEFAULT_SEQUENCE_TAG, base.DEFAULT_MAPPING_TAG

    class Quick(base):
        def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
            if kind is scalar:
                if implicit[0]:
                    for tag, regexp in get(value[0] if value else "", ()):
                        if regexp.match(value):
                            return tag
                return str_tag
            return seq_tag if kind is sequence else map_tag

        # Path resolvers only: there are none.
        def descend_resolver(self, current_node: Any, current_index: Any) -> None:
            return None

        def ascend_resolver(self) -> None:
            return None

    Quick.__name__ = Quick.__qualname__ = f"Quick{base.__name__}"
    return Quick


_MERGE_TAG = "tag:yaml.org,2002:merge"


@record(frozen=False, slots=True)
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


def load_yaml(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    limit: int | None = None,
    what: str = "file",
) -> Loaded:
    """Read and load one YAML file (at most ``YAML_MAX_BYTES`` by default). Raises
    :class:`Unreadable` and ``FileNotFoundError``."""
    limit = YAML_MAX_BYTES if limit is None else limit
    return loads(read_text(path, root=root, limit=limit, what=what))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-standard JSON constant {name}")


def loads_json(text: str) -> Any:
    """JSON without NaN / Infinity, nested at most ``MAX_DEPTH`` levels. Raises Unreadable."""
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise Unreadable(f"invalid JSON: {exc.msg} (column {exc.colno})", exc.lineno) from None
    except ValueError as exc:
        raise Unreadable(f"invalid JSON: {exc}") from None
    except RecursionError:
        raise Unreadable(f"invalid JSON: nested too deeply (more than {MAX_DEPTH} levels)") from None
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if depth + 1 > MAX_DEPTH:
                    raise Unreadable(f"invalid JSON: nested too deeply (more than {MAX_DEPTH} levels)")
                stack.append((child, depth + 1))
    return value


def load_json(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    limit: int | None = None,
    what: str = "JSON file",
) -> Any:
    """Read and load one JSON file (at most ``JSON_MAX_BYTES`` by default). Raises
    :class:`Unreadable` and ``FileNotFoundError``."""
    limit = JSON_MAX_BYTES if limit is None else limit
    return loads_json(read_text(path, root=root, limit=limit, what=what))


# PyYAML's C composer recurses once per nesting level: with PyYAML 6.0.3 (libyaml without
# a nesting limit) 30,000 nested `[` (a 60 KB file) or `- - - …` overflowed the C stack and
# killed the process with SIGSEGV (tests/hostile). Text that *could* nest deeper than
# _SCAN_ABOVE levels is first checked with the event parser, which does not recurse.
_SCAN_ABOVE = 1000
_LEVEL_OPENERS = ("[", "{", "-", "?", ":", "\n", "\r", "\x85", "\u2028", "\u2029")
_ASCII_OPENERS = _LEVEL_OPENERS[:7]  # an ASCII text (``str.isascii``: no scan) holds none of the others


def _check_nesting(text: str) -> None:
    """Raise Unreadable when ``text`` nests deeper than MAX_DEPTH (only scans when it could)."""
    # Every nesting level opens with one of these characters (a flow collection, a block
    # sequence entry, a key, or a new line), so their count bounds the depth from above.
    if sum(text.count(c) for c in (_ASCII_OPENERS if text.isascii() else _LEVEL_OPENERS)) + 1 <= _SCAN_ABOVE:
        return
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    mark = event.start_mark
                    raise Unreadable(f"nesting deeper than {MAX_DEPTH} levels", mark.line + 1 if mark else None)
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
    except yaml.YAMLError:
        return  # a syntax error: the loader below reports it with its context


# From this many characters a document without anchors is built from the parser's events, without
# the composer's node tree: the tree of a 1 MB index.yaml (5,000 tasks) held 315,000 objects, 20 MiB,
# five times the value built from it. Smaller documents (every scar report) are composed, faster.
STREAM_FROM = 256 * 1024


def loads(text: str) -> Loaded:
    """Load one YAML document from text with the checks described in the module doc."""
    _ready()
    _check_nesting(text)
    if len(text) >= STREAM_FROM and "&" not in text and "*" not in text:
        try:
            return _streamed(text)
        except _Bail:  # anything but a clean tree: composed, walked and built as below
            pass
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
            raise Unreadable(f"not YAML: {reason}", mark.line + 1 if mark else None) from None
        except yaml.YAMLError as exc:  # reader errors (control characters …)
            raise Unreadable(f"not YAML: {_one_line(str(exc))}") from None
        if node is None:
            return Loaded(None)
        out = Loaded(None)
        _top_lines(node, out)
        if "&" not in text and "*" not in text:  # no anchor, no alias: a pure tree
            try:  # checked and built in one pass (most documents)
                out.value = _tree_value(node, out, loader)
                return out
            except _Bail:  # a shape the one pass leaves to PyYAML: the walk, then its constructor
                out.problems.clear()
            _walk_tree(node, out)
        else:  # an anchor or alias may be present: full guard
            _walk(node, out)
        try:
            out.value = loader.construct_document(node)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            raise Unreadable(f"not usable YAML: {exc.problem or exc}", mark.line + 1 if mark else None) from None
        except (yaml.YAMLError, ValueError, TypeError, OverflowError) as exc:
            raise Unreadable(f"not usable YAML: {_one_line(str(exc))}") from None
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
                raise Unreadable(f"nesting deeper than {MAX_DEPTH} levels", node.start_mark.line + 1)
            if len(node.value) > 1:
                _check_keys(node, out)  # node.__class__ is MappingNode (checked above)
            for k, v in node.value:
                if k.__class__ is not yaml.ScalarNode:
                    push((k, depth + 1))
                if v.__class__ is not yaml.ScalarNode:
                    push((v, depth + 1))
        elif cls is sequence:
            if depth > MAX_DEPTH:
                raise Unreadable(f"nesting deeper than {MAX_DEPTH} levels", node.start_mark.line + 1)
            for c in node.value:
                if c.__class__ is not yaml.ScalarNode:
                    push((c, depth + 1))


_STR_TAG = "tag:yaml.org,2002:str"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
# Scalar tags the one pass constructs with PyYAML's own constructor functions (str: the text),
# each taken from the loader by _ready into _SCALAR_CTORS.
_SCALAR_TAGS = (
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:timestamp",
)


class _Bail(Exception):
    """A document :func:`_tree_value` leaves to the walk and PyYAML's constructor."""


def _constructed(loader: Any, tag: str, scalar: Any) -> Any:
    """A scalar other than a str (a ScalarNode, or the parser's event of one) with tag ``tag``,
    built by PyYAML's own constructor; :class:`_Bail` for a tag the one pass does not build or a
    value the constructor refuses (the old path then reports it)."""
    ctor = _SCALAR_CTORS.get(tag)
    if ctor is None:
        raise _Bail
    if scalar.__class__ is not yaml.ScalarNode:
        scalar = yaml.ScalarNode(tag, scalar.value, scalar.start_mark, scalar.end_mark, scalar.style)
    try:
        return ctor(loader, scalar)
    except Exception:  # noqa: BLE001 - PyYAML's constructor reports it, on the old path
        raise _Bail from None


def _tree_value(root: yaml.Node, out: Loaded, loader: Any) -> Any:
    """:func:`_walk_tree` and ``construct_document`` in one pass, for a document without anchors:
    the same problems in the same order, the same errors, the same value. Raises :class:`_Bail`
    (before any error of its own) on what it does not build the way PyYAML does — a key that is
    not a scalar, a merge key, a tag other than str, null, bool, int, float, timestamp, seq and
    map, a scalar PyYAML's constructor refuses — and the caller then walks and constructs as
    before, so the outcome never depends on this pass."""
    scalar, mapping = yaml.ScalarNode, yaml.MappingNode
    str_tag = _STR_TAG

    def leaf(node: Any) -> Any:
        tag = node.tag
        if tag == str_tag:
            return node.value
        return _constructed(loader, tag, node)

    if root.__class__ is scalar:
        return leaf(root)
    top: Any = {} if root.__class__ is mapping else []
    # The walk's stack, in the walk's order (non-scalar children, pushed in document order),
    # each with the container its value goes into (made empty when its parent is built).
    stack: list[tuple[Any, int, Any]] = [(root, 1, top)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth, into = pop()
        cls = node.__class__
        if cls is mapping:
            if node.tag != _MAP_TAG:
                raise _Bail
            if depth > MAX_DEPTH:
                raise Unreadable(f"nesting deeper than {MAX_DEPTH} levels", node.start_mark.line + 1)
            pairs = node.value
            if len(pairs) > 1:
                _check_keys(node, out)
            for k, v in pairs:
                if k.__class__ is not scalar:
                    raise _Bail
                key = leaf(k)  # a merge key (its own tag) is handed over here
                vcls = v.__class__
                if vcls is scalar:
                    into[key] = leaf(v)
                else:
                    child: Any = {} if vcls is mapping else []
                    into[key] = child
                    push((v, depth + 1, child))
        else:  # a sequence (scalars are built by their parent)
            if node.tag != _SEQ_TAG:
                raise _Bail
            if depth > MAX_DEPTH:
                raise Unreadable(f"nesting deeper than {MAX_DEPTH} levels", node.start_mark.line + 1)
            add = into.append
            for c in node.value:
                ccls = c.__class__
                if ccls is scalar:
                    add(leaf(c))
                else:
                    child = {} if ccls is mapping else []
                    add(child)
                    push((c, depth + 1, child))
    return top


def _streamed(text: str) -> Loaded:
    """:func:`loads` of a document without anchors, built from the parser's events as
    :func:`_tree_value` builds it from the composed tree (the same tags resolved as the composer
    resolves them, the same constructors, the same lines). Raises :class:`_Bail` — the caller then
    composes — on a YAML error, more than one document, a duplicate key, nesting deeper than
    MAX_DEPTH and every shape :func:`_tree_value` bails on, so a problem or an error is always
    the composer path's own."""
    _ready()
    loader = _Loader(text)
    try:
        try:
            return _from_events(loader)
        except yaml.YAMLError:
            raise _Bail from None
    finally:
        loader.dispose()


def _from_events(loader: Any) -> Loaded:
    get, peek = loader.get_event, loader.peek_event
    resolve = loader.resolve
    scalar_ev, seq_ev, map_ev = yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent
    ends = (yaml.SequenceEndEvent, yaml.MappingEndEvent)

    def leaf(ev: Any, tag: Any = None) -> Any:
        if tag is None:
            tag = ev.tag
            if tag is None or tag == "!":
                tag = resolve(yaml.ScalarNode, ev.value, ev.implicit)
        if tag == _STR_TAG:
            return ev.value
        return _constructed(loader, tag, ev)

    def start(ev: Any, depth: int) -> Any:
        """The empty container a collection's start event opens (its tag checked)."""
        kind = yaml.SequenceNode if ev.__class__ is seq_ev else yaml.MappingNode
        tag = ev.tag
        if tag is None or tag == "!":
            tag = resolve(kind, None, ev.implicit)
        if tag != (_SEQ_TAG if kind is yaml.SequenceNode else _MAP_TAG) or depth > MAX_DEPTH:
            raise _Bail
        return [] if kind is yaml.SequenceNode else {}

    get()  # the stream's start
    if peek().__class__ is yaml.StreamEndEvent:
        return Loaded(None)
    get()  # the document's start
    out = Loaded(None)
    ev = get()
    if ev.__class__ is scalar_ev:
        out.value = leaf(ev)
    elif ev.__class__ in (seq_ev, map_ev):
        out.value = top = start(ev, 1)
        # Open collections: [container, depth, its key waiting for a value (a mapping's), the keys
        # seen (tag, as written), the lines of its elements (a sequence under a top-level key)].
        stack: list[list[Any]] = [[top, 1, None, set() if top.__class__ is dict else None, None]]
        top_map = isinstance(top, dict)  # its keys' lines, and of its sequences' elements (_top_lines)
        while stack:
            ev = get()
            cls = ev.__class__
            frame = stack[-1]
            into, depth = frame[0], frame[1]
            if cls in ends:
                stack.pop()
                continue
            in_map = into.__class__ is dict
            if in_map and frame[2] is None:  # a key
                if cls is not scalar_ev:
                    raise _Bail
                tag = ev.tag
                if tag is None or tag == "!":
                    tag = resolve(yaml.ScalarNode, ev.value, ev.implicit)
                seen = (tag, ev.value)
                if seen in frame[3]:  # a duplicate key: the composer path says where
                    raise _Bail
                frame[3].add(seen)
                frame[2] = (leaf(ev, tag), ev.value)
                if top_map and depth == 1:
                    out.key_lines.setdefault(ev.value, ev.start_mark.line + 1)
                continue
            if cls is scalar_ev:
                value = leaf(ev)
                child = None
            elif cls is seq_ev or cls is map_ev:
                value = child = start(ev, depth + 1)
            else:  # an alias (none without "*")
                raise _Bail
            lines = None
            if in_map:
                key, written = frame[2]
                frame[2] = None
                into[key] = value
                if top_map and depth == 1 and cls is seq_ev:
                    lines = out.item_lines[written] = []
            else:
                into.append(value)
                if frame[4] is not None:
                    frame[4].append(ev.start_mark.line + 1)
            if child is not None:
                stack.append([child, depth + 1, None, set() if cls is map_ev else None, lines])
    else:
        raise _Bail
    get()  # the document's end
    if peek().__class__ is not yaml.StreamEndEvent:  # another document
        raise _Bail
    return out


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
                raise Unreadable(
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
            raise Unreadable("an alias refers to its own ancestor (cyclic data)", node.start_mark.line + 1)
        if depth > MAX_DEPTH:
            raise Unreadable(f"nesting deeper than {MAX_DEPTH} levels", node.start_mark.line + 1)
        on_path.add(nid)
        stack.append((node, depth, True))
        if isinstance(node, yaml.MappingNode):
            _check_keys(node, out)
            for k, v in node.value:
                for child in (k, v):
                    if id(child) in on_path:
                        raise Unreadable("an alias refers to its own ancestor (cyclic data)", child.start_mark.line + 1)
                    if id(child) not in size:
                        stack.append((child, depth + 1, False))
        else:
            for child in node.value:
                if id(child) in on_path:
                    raise Unreadable("an alias refers to its own ancestor (cyclic data)", child.start_mark.line + 1)
                if id(child) not in size:
                    stack.append((child, depth + 1, False))


def load_path_quiet(path: Path, root: str | os.PathLike[str] | None = None) -> tuple[Loaded | None, Unreadable | None]:
    """``load_yaml`` that returns the problem instead of raising (a missing file included)."""
    try:
        return load_yaml(path, root=root), None
    except Unreadable as exc:
        return None, exc
    except FileNotFoundError:
        return None, Unreadable("no such file")
