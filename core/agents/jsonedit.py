"""Edit a JSON document as text, keeping every byte of it that the edit does not touch.

``json`` reads a document into values and writes them back in its own layout: a user's settings
file would lose its spacing, key order and line breaks. Here :func:`parse` finds where each value
and object member starts and ends (spans into the text), and the edits insert or cut text at those
places only: :func:`add_member` puts ``"key": value`` as the last member of an object,
:func:`append_item` an element at the end of an array, :func:`remove_member` / :func:`remove_item`
cut exactly one out. An addition followed by the removal of what it added gives back the bytes the
document had. The new text is indented like its neighbours (or one step deeper than its container).
"""

from __future__ import annotations

import json
from typing import Any

from scars.core.records import field, record

_WS = " \t\n\r"


class JsonEditError(ValueError):
    """The text is not a JSON document this module can edit (its message says where)."""


@record(frozen=False)
class Node:
    """A JSON value found in the text: ``start``/``end`` its span; for an object its members
    (key, key_start, value node), for an array its items."""

    kind: str  # object | array | scalar
    start: int
    end: int
    members: list[tuple[str, int, Node]] = field(default_factory=list)
    items: list[Node] = field(default_factory=list)

    def member(self, key: str) -> Node | None:
        for k, _at, node in self.members:
            if k == key:
                return node
        return None


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


_DECODER = json.JSONDecoder()


def _value(text: str, i: int, depth: int) -> Node:
    if depth > 200:
        raise JsonEditError("the JSON nests too deep to edit")
    i = _skip(text, i)
    if i >= len(text):
        raise JsonEditError("the JSON ends where a value was expected")
    if text[i] in "{[":
        return _container(text, i, depth, "}" if text[i] == "{" else "]")
    try:
        _v, end = _DECODER.raw_decode(text, i)
    except json.JSONDecodeError as exc:
        raise JsonEditError(f"not JSON at character {i}: {exc.msg}") from None
    return Node("scalar", i, end)


def _key(text: str, j: int) -> tuple[str, int, int]:
    """The member key at ``j``: (key, where it starts, where its value starts)."""
    j = _skip(text, j)
    if j >= len(text) or text[j] != '"':
        raise JsonEditError(f"a key was expected at character {j}")
    key, k_end = _DECODER.raw_decode(text, j)
    k_end = _skip(text, k_end)
    if k_end >= len(text) or text[k_end] != ":":
        raise JsonEditError(f"':' was expected at character {k_end}")
    return key, j, k_end + 1


def _container(text: str, i: int, depth: int, close: str) -> Node:
    """The object (``close`` "}") or array ("]") starting at ``i``."""
    node = Node("object" if close == "}" else "array", i, i)
    j = _skip(text, i + 1)
    if j < len(text) and text[j] == close:
        node.end = j + 1
        return node
    while True:
        if close == "}":
            key, at, j = _key(text, j)
            child = _value(text, j, depth + 1)
            node.members.append((key, at, child))
        else:
            child = _value(text, j, depth + 1)
            node.items.append(child)
        j = _skip(text, child.end)
        if j < len(text) and text[j] == ",":
            j += 1
            continue
        if j < len(text) and text[j] == close:
            node.end = j + 1
            return node
        raise JsonEditError(f"',' or '{close}' was expected at character {j}")


def parse(text: str) -> Node:
    """The spans of the document ``text`` (one value, whitespace around it); JsonEditError when it
    is not JSON (its values are checked by ``json.loads`` too: duplicate-free reading is the
    caller's)."""
    try:
        json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise JsonEditError(f"not valid JSON: {exc}") from None
    root = _value(text, 0, 0)
    if _skip(text, root.end) != len(text):
        raise JsonEditError("text follows the JSON value")
    return root


def value_of(text: str, node: Node) -> Any:
    return json.loads(text[node.start : node.end])


def _line_indent(text: str, at: int) -> str:
    line_start = text.rfind("\n", 0, at) + 1
    j = line_start
    while j < len(text) and text[j] in " \t":
        j += 1
    return text[line_start:j]


def indent_unit(text: str, root: Node) -> str:
    """The document's indentation step: its first indented member's, else two spaces."""
    for _k, at, _n in root.members:
        ind = _line_indent(text, at)
        if ind and text.rfind("\n", 0, at) >= root.start:
            return ind
    for item in root.items:
        ind = _line_indent(text, item.start)
        if ind:
            return ind
    return "  "


def dumps(value: Any, indent: str, unit: str) -> str:
    """``value`` as JSON laid out like the document: ``unit`` per level, starting at ``indent``."""
    step: str | int = unit if unit and set(unit) == {"\t"} else (len(unit) if unit.strip(" ") == "" and unit else 2)
    return json.dumps(value, indent=step, ensure_ascii=False).replace("\n", "\n" + indent)


def _child_indent(text: str, container: Node, starts: list[int], unit: str) -> tuple[str, bool]:
    """The indentation of a new child of ``container`` and whether children go on their own lines
    (the first child of an empty one goes right inside it: its lines one step deeper)."""
    if starts:
        last = starts[-1]
        on_lines = text.rfind("\n", container.start, last) != -1
        return (_line_indent(text, last) if on_lines else ""), on_lines
    return _line_indent(text, container.start), False


def _insert(text: str, container: Node, starts: list[int], last_end: int | None, piece: str, unit: str) -> str:
    indent, on_lines = _child_indent(text, container, starts, unit)
    if last_end is not None:  # after the last child: ",<newline><indent>piece"
        sep = ",\n" + indent if on_lines else ", "
        return text[:last_end] + sep + piece + text[last_end:]
    # an empty container ("{}", "[ ]"): the piece goes right inside it, its whitespace kept after
    # it — a layout of its own, so that the removal tells it from a container scars added whole
    return text[: container.start + 1] + piece + text[container.start + 1 :]


def add_member(text: str, obj: Node, key: str, value: Any, unit: str) -> str:
    """``text`` with ``"key": value`` added as the last member of the object ``obj``."""
    indent, _on = _child_indent(text, obj, [at for _k, at, _n in obj.members], unit)
    piece = json.dumps(key, ensure_ascii=False) + ": " + dumps(value, indent, unit)
    last_end = obj.members[-1][2].end if obj.members else None
    return _insert(text, obj, [at for _k, at, _n in obj.members], last_end, piece, unit)


def append_item(text: str, arr: Node, value: Any, unit: str) -> str:
    """``text`` with ``value`` added as the last element of the array ``arr``."""
    indent, _on = _child_indent(text, arr, [n.start for n in arr.items], unit)
    piece = dumps(value, indent, unit)
    last_end = arr.items[-1].end if arr.items else None
    return _insert(text, arr, [n.start for n in arr.items], last_end, piece, unit)


def _cut(text: str, container: Node, spans: list[tuple[int, int]], index: int) -> str:
    start, end = spans[index]
    if len(spans) == 1:  # the only child: the container keeps what follows it ("{}", "{ }")
        return text[: container.start + 1] + text[end:]
    if index == len(spans) - 1:  # the last: from the end of the one before
        return text[: spans[index - 1][1]] + text[end:]
    return text[:start] + text[spans[index + 1][0] :]  # else up to the next one


def remove_member(text: str, obj: Node, key: str) -> str:
    """``text`` without the member ``key`` of ``obj`` (and the separator that joined it)."""
    spans = [(at, node.end) for _k, at, node in obj.members]
    index = next(i for i, (k, _a, _n) in enumerate(obj.members) if k == key)
    return _cut(text, obj, spans, index)


def remove_item(text: str, arr: Node, index: int) -> str:
    """``text`` without the element ``index`` of ``arr``."""
    return _cut(text, arr, [(n.start, n.end) for n in arr.items], index)
