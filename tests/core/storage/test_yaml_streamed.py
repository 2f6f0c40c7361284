"""A large YAML document without anchors (index.yaml of 5,000 tasks) is built from the parser's
events, without the composer's node tree (issue 17, memory): it loads exactly what the composed
path loads — the same value (types included), the same key and item lines, the same problems and
refusals (anything but a clean tree is handed to the composed path). Compared with the streamed
path forced on every YAML file of the fixtures, generated repositories and the shapes of
test_yaml_one_pass, plus what only events show (documents, flow and block sequences at the top)."""

from __future__ import annotations

import sys

import pytest

from scars.core.storage import safe_read
from scars.core.storage.safe_read import MAX_DEPTH, Unreadable, loads
from tests.core.storage.test_yaml_one_pass import CASES, _typed, _yaml_files
from tests.factories import ROOT

sys.path.insert(0, str(ROOT / "bench"))


def _outcome(text: str, stream_from: int, monkeypatch) -> tuple:
    with monkeypatch.context() as m:
        m.setattr(safe_read, "STREAM_FROM", stream_from)
        try:
            got = loads(text)
        except Unreadable as exc:
            return ("refused", exc.reason, exc.line)
    return (_typed(got.value), got.key_lines, got.item_lines, got.problems)


def _streamed_builds(text: str) -> bool:
    try:
        safe_read._streamed(text)
    except safe_read._Bail:
        return False
    return True


def _same(text: str, monkeypatch) -> None:
    assert _outcome(text, 0, monkeypatch) == _outcome(text, 1 << 40, monkeypatch)


def test_every_fixture_file_loads_as_composed(monkeypatch):
    files = _yaml_files()
    streamed = 0
    for p in files:
        text = p.read_bytes().decode("utf-8", "replace")
        _same(text, monkeypatch)
        streamed += "&" not in text and "*" not in text and _streamed_builds(text)
    assert streamed > len(files) // 2  # the events build most of them


@pytest.mark.parametrize("size", ["small", "large-index"])
def test_generated_files_load_as_composed(size, tmp_path, monkeypatch):
    import generate  # bench/generate.py

    generate.generate("small", tmp_path / "repo", seed=5)
    files = sorted(p for p in (tmp_path / "repo").rglob("*.yaml"))
    assert len(files) > 40
    if size == "large-index":  # an index.yaml over STREAM_FROM, as at 50,000 items
        (index,) = [p for p in files if p.name == "index.yaml"]
        head, _, tasks = index.read_text(encoding="utf-8").partition("tasks:\n")
        big = head + "tasks:\n" + tasks * (safe_read.STREAM_FROM // max(1, len(tasks)) + 1)
        assert len(big) >= safe_read.STREAM_FROM and _streamed_builds(big)
        _same(big, monkeypatch)
        return
    for p in files:
        _same(p.read_bytes().decode("utf-8", "replace"), monkeypatch)


MORE = {
    "two documents": "a: 1\n---\nb: 2\n",
    "two documents, the second empty": "a: 1\n---\n",
    "explicit document": "---\na: 1\n...\n",
    "explicit empty document": "---\n",
    "document end only": "...\n",
    "top sequences": "a:\n- 1\n- [2, 3]\n- {b: [4]}\nc: [5, 6]\nd: []\ne:\n  - - 7\n    - 8\n",
    "top sequence written twice": "a: [1]\nb: {a: [2, 3]}\n",
    "sequence of sequences at the root": "- [1, 2]\n- - 3\n",
    "keys of each kind": "1: a\n1.5: b\ntrue: c\n~: d\n2026-01-02: e\n'x': f\n",
    "equal values of keys": "1: a\n01: b\n0x1: c\n",
    "block scalars": "a: |\n  line one\n  line two\nb: >-\n  folded\n  text\n",
    "flow mapping root": "{a: 1, b: [2]}\n",
    "syntax error": "a: [1, 2\nb: 3\n",
    "syntax error late": "a: 1\nb: 2\nc: : :\n",
    "tab": "a:\n\t- 1\n",
    "tagged sequence": "a: !!seq [1]\nb: !!map {c: 1}\n",
    "non-specific tag": "a: ! 12\nb: ! [1]\n",
    "duplicate top key with a sequence": "a: [1]\nb: 2\na: [3, 4]\n",
    "multi-line elements": "a:\n  - |\n    x\n    y\n  - 'multi\n    line'\n  - {b: 1,\n     c: 2}\n",
    "one over max depth": "a: " + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "\n",
}


@pytest.mark.parametrize("name", sorted({**CASES, **MORE}))
def test_each_shape_loads_as_composed(name, monkeypatch):
    _same({**CASES, **MORE}[name], monkeypatch)


@pytest.mark.parametrize(
    ("name", "streamed"),
    [
        ("scalars", True),
        ("nested", True),
        ("top sequences", True),
        ("keys of each kind", True),
        ("equal values of keys", True),
        ("explicit document", True),
        ("duplicates", False),
        ("two documents", False),
        ("syntax error", False),
        ("merge key", False),
        ("set", False),
        ("complex key", False),
        ("deep", False),
        ("exactly max depth", True),
        ("one over max depth", False),
    ],
)
def test_what_the_events_build_and_what_they_hand_over(name, streamed):
    assert _streamed_builds({**CASES, **MORE}[name]) is streamed


def test_only_a_large_document_is_streamed(monkeypatch):
    calls: list[int] = []
    real = safe_read._streamed
    monkeypatch.setattr(safe_read, "_streamed", lambda text: calls.append(len(text)) or real(text))
    small = "a: [1, 2]\n"
    loads(small)
    loads(small + "#" * (safe_read.STREAM_FROM - len(small) - 1))
    assert calls == []
    loads(small + "#" * (safe_read.STREAM_FROM - len(small)))
    assert calls == [safe_read.STREAM_FROM]
    loads("a: &x 1\nb: *x\n" + "#" * safe_read.STREAM_FROM)  # an anchor: composed, walked
    assert len(calls) == 1
