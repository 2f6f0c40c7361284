"""The one-pass check-and-build of a YAML document without anchors (issue 17) loads exactly what
the walk followed by PyYAML's constructor loaded: the same value (types included), the same key
and item lines, the same problems in the same order, the same refusal. The old path is the
oracle (``_tree_value`` made to hand every document over), compared on every YAML file of the
upstream fixtures, the demo, the real-shaped fixtures, generated repositories of several seeds,
and documents written to reach each branch."""

from __future__ import annotations

import datetime
import sys

import pytest

from scars.core.storage import safe_read
from scars.core.storage.safe_read import MAX_DEPTH, Unreadable, loads
from tests.factories import ROOT, UPSTREAM

sys.path.insert(0, str(ROOT / "bench"))


def _typed(v):
    """The value with every scalar's type kept (1, 1.0 and True compare equal in Python)."""
    if isinstance(v, dict):
        return ("map", [(_typed(k), _typed(x)) for k, x in v.items()])
    if isinstance(v, list):
        return ("seq", [_typed(x) for x in v])
    return (type(v).__name__, repr(v))


def _outcome(text: str):
    try:
        got = loads(text)
    except Unreadable as exc:
        return ("refused", exc.reason, exc.line)
    return (_typed(got.value), got.key_lines, got.item_lines, got.problems)


def _old_outcome(text: str, monkeypatch) -> tuple:
    def hand_over(*_a):
        raise safe_read._Bail

    with monkeypatch.context() as m:
        m.setattr(safe_read, "_tree_value", hand_over)
        return _outcome(text)


def _fast_used(text: str, monkeypatch) -> bool:
    """Whether the one pass built the document (it did not hand it over)."""
    calls = {"bail": 0}
    real = safe_read._tree_value

    def spy(*a):
        try:
            return real(*a)
        except safe_read._Bail:
            calls["bail"] += 1
            raise

    with monkeypatch.context() as m:
        m.setattr(safe_read, "_tree_value", spy)
        _outcome(text)
    return calls["bail"] == 0


def _yaml_files():
    roots = [ROOT / "tests" / "fixtures", ROOT / "core" / "demo"]
    if UPSTREAM.is_dir():
        roots.append(UPSTREAM)
    out = []
    for r in roots:
        out += sorted(p for p in r.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
    return out


def test_every_fixture_file_loads_as_before(monkeypatch):
    files = _yaml_files()
    assert len(files) >= (30 if UPSTREAM.is_dir() else 20)  # without ../shared: our own fixtures only
    fast = 0
    for p in files:
        text = p.read_bytes().decode("utf-8", "replace")
        assert _outcome(text) == _old_outcome(text, monkeypatch), p
        fast += "&" not in text and "*" not in text and _fast_used(text, monkeypatch)
    assert fast > len(files) // 2  # the one pass is what reads most of them


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_generated_reports_load_as_before(seed, tmp_path, monkeypatch):
    import generate  # bench/generate.py

    generate.generate("small", tmp_path / "repo", seed=seed)
    files = sorted(p for p in (tmp_path / "repo").rglob("*.yaml"))
    assert len(files) > 40
    for p in files:
        text = p.read_bytes().decode("utf-8", "replace")
        assert _outcome(text) == _old_outcome(text, monkeypatch), p


CASES = {
    "scalars": "a: 1\nb: 1.5\nc: true\nd: ~\ne: 2026-01-02\nf: 2026-01-02 03:04:05\ng: '1'\nh: yes\ni: 0x1F\n"
    "j: .inf\nk: -.nan\nl: 1_000\nm: 0o17\nn: ''\n",
    "nested": "a:\n  - x\n  - {b: [1, 2, {c: d}], e: []}\n  - []\n  - {}\nf: {g: {h: {i: j}}}\n",
    "duplicates": "a: 1\nb:\n  x: 1\n  x: 2\n  y: {p: 1, p: 2}\na: 3\nl:\n  - {k: 1, k: 1}\n  - {k: 2, k: 2}\n",
    "duplicate container kept last": "a: {x: 1}\na: [2]\n",
    "int keys": "1: a\n'1': b\n01: c\ntrue: d\nnull: e\n",
    "root scalar": "just text\n",
    "root int": "42\n",
    "root sequence": "- a\n- [b, c]\n- {d: e}\n",
    "merge key": "a: {x: 1}\nb:\n  <<: {x: 2}\n  y: 3\n",
    "value key": "=: a\n",
    "value scalar": "a: =\n",
    "explicit str": "a: !!str 12\nb: !!int '7'\n",
    "set": "a: !!set {x, y}\n",
    "omap": "a: !!omap [x: 1, y: 2]\n",
    "binary": "a: !!binary aGVsbG8=\n",
    "local tag": "a: !thing x\n",
    "python tag": "a: !!python/object:os.system x\n",
    "complex key": "? [a, b]\n: c\nd: e\n",
    "complex key late": "x: {y: {z: 1}}\n? {a: b}\n: c\n",
    "mapping key in sequence": "- ? {a: b}\n  : c\n",
    "bad timestamp": "a: 2026-13-45\n",
    "bad int value": "a: !!int x\n",
    "deep": "a: " + "[" * (MAX_DEPTH + 2) + "]" * (MAX_DEPTH + 2) + "\n",
    "deep with a tag after": "a: " + "[" * (MAX_DEPTH + 2) + "]" * (MAX_DEPTH + 2) + "\nb: !!set {x}\n",
    "deep after a complex key": "? [k]\n: v\na: " + "[" * (MAX_DEPTH + 2) + "]" * (MAX_DEPTH + 2) + "\n",
    "exactly max depth": "a: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n",
    "empty": "",
    "comment only": "# nothing\n",
    "null doc": "~\n",
    "items": "task_id: t\nknown_shortcuts:\n  - one\n  - description: two\n    extra: [1, 2]\n  - what: three\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_shape_loads_as_before(name, monkeypatch):
    text = CASES[name]
    assert _outcome(text) == _old_outcome(text, monkeypatch)


@pytest.mark.parametrize(
    ("name", "fast"),
    [
        ("scalars", True),
        ("nested", True),
        ("duplicates", True),
        ("int keys", True),
        ("root scalar", True),
        ("root sequence", True),
        ("deep", True),
        ("merge key", False),
        ("value key", False),
        ("set", False),
        ("binary", False),
        ("complex key", False),
        ("bad timestamp", False),
    ],
)
def test_what_the_one_pass_builds_and_what_it_hands_over(name, fast, monkeypatch):
    assert _fast_used(CASES[name], monkeypatch) is fast


def test_the_one_pass_keeps_types_and_duplicates():
    got = loads(CASES["scalars"] + "a: 2\n")
    v = got.value
    assert v["a"] == 2 and v["b"] == 1.5 and v["c"] is True and v["d"] is None
    assert v["e"] == datetime.date(2026, 1, 2) and v["g"] == "1" and v["i"] == 31 and v["l"] == 1000
    assert [line for line, _ in got.problems] == [15]
    assert loads(CASES["duplicate container kept last"]).value == {"a": [2]}


def test_the_one_pass_refuses_too_deep_at_the_limit():
    with pytest.raises(Unreadable, match="nesting deeper"):
        loads("a: " + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "\n")
    assert loads("a: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n").value is not None


SCALARS = [
    "", "~", "null", "Null", "NULL", "nul", "true", "True", "TRUE", "tRue", "yes", "Yes", "no", "No", "on", "ON",
    "off", "y", "n", "false", "0", "-0", "+1", "1_000", "0x1F", "0o17", "0b101", "017", "1:30", "190:20:30",
    "1.5", ".5", "-.5", "1e3", "1.0e+3", "6.8523015e+5", ".inf", "-.Inf", "+.INF", ".nan", ".NaN", "1.2.3",
    "2026-01-02", "2026-1-2", "2026-01-02T03:04:05Z", "2026-01-02 03:04:05.5 +01:00", "2026-13-45",
    "<<", "=", "==", "<", "text", "Text with words", "ありがとう", "-", "+", ".", "- a", "[x]", "@x", "%x",
    "1 2", "0.", "._", "12abc", "Yes please", "nothing", "none", "None",
]  # fmt: skip


@pytest.mark.parametrize("implicit", [(True, False), (False, True), (False, False), (True, True)])
def test_tags_are_resolved_as_pyyaml_resolves_them(implicit):
    import yaml

    safe_read._ready()  # PyYAML and the loader, made with the first YAML read
    quick = safe_read._Loader("")
    plain = yaml.resolver.Resolver()
    for kind in (yaml.ScalarNode, yaml.SequenceNode, yaml.MappingNode):
        values = SCALARS if kind is yaml.ScalarNode else [None]
        for v in values:
            assert quick.resolve(kind, v, implicit) == plain.resolve(kind, v, implicit), (kind, v)
    quick.dispose()


def test_fixture_files_load_to_what_pyyaml_loads():
    import yaml

    for p in _yaml_files():
        text = p.read_bytes().decode("utf-8", "replace")
        try:
            want = yaml.load(text, Loader=yaml.CSafeLoader)
        except yaml.YAMLError:
            continue
        assert _typed(loads(text).value) == _typed(want), p
