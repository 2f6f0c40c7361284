"""Size, depth and length limits at their boundaries: exactly at the limit, and one past it.

safe_read (5 MiB per file, nesting depth 64, 1,000,000 alias-expanded nodes), the loop
readers' JSON cap (8 MiB), decision texts (20,000 characters), answers files (1,000,000
bytes), watch specs (2,000 characters) and the age of a stale temporary file (60 s).
"""

from __future__ import annotations

import os

import pytest

from scars.core.errors import UsageError
from scars.core.gatekit.answers import load_answers
from scars.core.loops.base import read_json
from scars.core.loops.registry import GATES
from scars.core.samsara.decisions import validate_decision
from scars.core.samsara.watches import WatchSyntaxError, parse_watch
from scars.core.storage import durable, safe_read

MiB = 1024 * 1024


# ---------------------------------------------------------------- safe_read


def _sized(path, size: int) -> None:
    """A YAML file of exactly ``size`` bytes: one key, then comment lines."""
    head = b"key: value\n"
    body = bytearray(head)
    line = b"#" + b"x" * 1022 + b"\n"
    while len(body) + len(line) <= size:
        body += line
    rest = size - len(body)
    if rest:
        body += b"#" + b"x" * (rest - 2) + b"\n" if rest >= 2 else b"\n"
    assert len(body) == size
    path.write_bytes(bytes(body))


@pytest.mark.parametrize("size, ok", [(5 * MiB, True), (5 * MiB + 1, False)])
def test_yaml_file_size_limit_is_5_mib(tmp_path, size, ok):
    p = tmp_path / "r.yaml"
    _sized(p, size)
    if ok:
        assert safe_read.load_yaml(p).value == {"key": "value"}  # read and parsed
    else:
        with pytest.raises(safe_read.Unreadable, match="over the 5,242,880-byte limit"):
            safe_read.load_yaml(p)


def _flow(depth: int) -> str:
    """A flow mapping exactly ``depth`` levels deep: {k: {k: ... {x: 1} ...}}."""
    return "{k: " * (depth - 1) + "{x: 1}" + "}" * (depth - 1)


@pytest.mark.parametrize("depth, ok", [(64, True), (65, False)])
def test_nesting_depth_limit_is_64_without_anchors(depth, ok):
    text = "top: " + _flow(depth - 1)  # the root mapping is level 1
    if ok:
        assert safe_read.loads(text).value["top"]
    else:
        with pytest.raises(safe_read.Unreadable, match="nesting deeper than 64 levels"):
            safe_read.loads(text)


@pytest.mark.parametrize("depth, ok", [(64, True), (65, False)])
def test_nesting_depth_limit_is_64_with_anchors(depth, ok):
    text = "a: &a 1\nb: *a\ntop: " + _flow(depth - 1)
    if ok:
        assert safe_read.loads(text).value["b"] == 1
    else:
        with pytest.raises(safe_read.Unreadable, match="nesting deeper than 64 levels"):
            safe_read.loads(text)


@pytest.mark.parametrize("depth, ok", [(64, True), (65, False)])
def test_nesting_depth_limit_is_64_through_the_event_scan(depth, ok, monkeypatch):
    # Padding with block-sequence openers makes the text one that *could* nest deeper than
    # the pre-scan bound (1,000 openers), so the event parser checks the depth before the C
    # composer recurses; with the node walks switched off, the scan alone must refuse 65.
    monkeypatch.setattr(safe_read, "_walk_tree", lambda node, out: None)
    monkeypatch.setattr(safe_read, "_walk", lambda node, out: None)
    text = "pad:\n" + "".join(f"  - {i}\n" for i in range(1100)) + "top: " + _flow(depth - 1) + "\n"
    if ok:
        assert len(safe_read.loads(text).value["pad"]) == 1100
    else:
        with pytest.raises(safe_read.Unreadable, match="nesting deeper than 64 levels"):
            safe_read.loads(text)


def _expanded(k: int) -> str:
    """A document of exactly 4 + 999 * 1000 + k alias-expanded nodes.

    ``base`` is a sequence of 999 scalars (1,000 nodes); ``big`` aliases it 998 times and
    adds ``k`` scalars. Nodes: the root mapping 1, two keys 2, base 1,000, big 1 + 998 *
    1,000 + k.
    """
    base = "[" + ", ".join("x" for _ in range(999)) + "]"
    big = "[" + ", ".join(["*b"] * 998 + ["y"] * k) + "]"
    return f"base: &b {base}\nbig: {big}\n"


@pytest.mark.parametrize("k, ok", [(996, True), (997, False)])
def test_alias_expansion_limit_is_1_000_000_nodes(k, ok):
    text = _expanded(k)
    if ok:
        assert len(safe_read.loads(text).value["big"]) == 998 + k  # exactly 1,000,000 nodes
    else:
        with pytest.raises(safe_read.Unreadable, match="alias expansion exceeds 1,000,000 nodes"):
            safe_read.loads(text)


# A bounded read gives the file's first min(size, limit + 1) bytes exactly (the caller refuses
# more), whatever the size it was told: a file that grew after its size was taken is read on
# up to the bound, in more than one piece when it is larger than a MiB.
@pytest.mark.parametrize("size", [0, 999, 1000, 1001, 1002, MiB + 7])
@pytest.mark.parametrize("hint", ["exact", "stale", "none"])
@pytest.mark.parametrize("limit", [1000, None])
def test_a_bounded_read_gives_the_first_limit_plus_one_bytes(tmp_path, size, hint, limit):
    data = bytes(range(256)) * (size // 256 + 1)
    p = tmp_path / "f"
    p.write_bytes(data[:size])
    size_hint = {"exact": size, "stale": size // 3, "none": 0}[hint]
    fd = os.open(p, os.O_RDONLY)
    try:
        got = durable.read_upto(fd, limit, size_hint)
    finally:
        os.close(fd)
    assert got == data[: size if limit is None else min(size, limit + 1)]


# ---------------------------------------------------------------- loop readers' JSON cap


@pytest.mark.parametrize("size, ok", [(8 * MiB, True), (8 * MiB + 1, False)])
def test_loop_state_json_cap_is_8_mib(tmp_path, size, ok):
    p = tmp_path / "state.json"
    filler = size - len(b'{"pad": ""}')
    p.write_bytes(b'{"pad": "' + b"x" * filler + b'"}')
    assert p.stat().st_size == size
    data, failure = read_json(p, tmp_path)
    if ok:
        assert failure is None and len(data["pad"]) == filler
    else:
        assert data is None and "over the 8,388,608-byte limit; not read" in failure.message


# ---------------------------------------------------------------- decision texts, answers files, watches


@pytest.mark.parametrize("n, ok", [(20_000, True), (20_001, False)])
def test_decision_text_limit_is_20_000_characters(n, ok):
    errors = validate_decision("defer", reason="r" * n)
    assert (errors == []) is ok
    if not ok:
        assert "at most 20000" in errors[0].message


@pytest.mark.parametrize("size, ok", [(1_000_000, True), (1_000_001, False)])
def test_answers_file_limit_is_1_000_000_bytes(tmp_path, size, ok):
    p = tmp_path / "answers.yaml"
    head = "spec: reopen\n"
    p.write_text(head + "#" + "x" * (size - len(head) - 2) + "\n")
    assert p.stat().st_size == size
    if ok:
        assert load_answers(p, GATES) is not None
    else:
        with pytest.raises(UsageError, match="over the 1,000,000-byte limit"):
            load_answers(p, GATES)


@pytest.mark.parametrize("n, ok", [(2_000, True), (2_001, False)])
def test_watch_spec_limit_is_2_000_characters(n, ok):
    spec = "path-changed: " + "a" * (n - len("path-changed: "))
    assert len(spec) == n
    if ok:
        assert parse_watch(spec).kind == "path-changed"
    else:
        with pytest.raises(WatchSyntaxError, match="too long"):
            parse_watch(spec)


# ---------------------------------------------------------------- stale temporary files: 60 s


@pytest.mark.parametrize("age, removed", [(59.5, False), (60.0, True), (61.0, True)])
def test_a_temporary_file_is_stale_at_60_seconds(tmp_path, monkeypatch, age, removed):
    target = tmp_path / "f.yaml"
    tmp = tmp_path / ".f.yaml.abc123.tmp"
    tmp.write_bytes(b"half")
    now = 2_000_000_000.0
    os.utime(tmp, (now - age, now - age))
    monkeypatch.setattr(durable.time, "time", lambda: now)
    assert durable.clean_stale_temps(target) == ([str(tmp)] if removed else [])
    assert tmp.exists() is not removed


# ---------------------------------------------------------------- how much a gate or a check lists


def _feature_with(tmp_path, reports: dict[str, str]):
    from scars.core.samsara.feature import read_feature
    from tests.factories import write_feature

    return read_feature(write_feature(tmp_path, reports))


@pytest.mark.parametrize("n, more", [(20, None), (21, "and 1 more scar reports in scar-reports/")])
def test_a_samsara_gate_names_at_most_20_report_files(tmp_path, n, more):
    from scars.core.loops.samsara.gather import _files_read
    from tests.factories import report

    f = _feature_with(tmp_path, {f"t{i:02d}.yaml": report(f"t{i}", ks=[f'"item {i}"']) for i in range(n)})
    files = _files_read(f)
    named = [x for x in files if x.startswith("scar-reports/")]
    assert len(named) == min(n, 20)
    assert (more in files) if more else not any(x.startswith("and ") for x in files)


@pytest.mark.parametrize("n", [15, 16, 40])
def test_the_triage_prompt_lists_every_item_of_a_group(tmp_path, n):
    """The entry preserves the original prompt (formats.md §1.6): no item left out (issue 29)."""
    from scars.core.loops.samsara.gather import _triage_groups
    from tests.factories import report

    f = _feature_with(tmp_path, {"t.yaml": report("t", ks=[f'"distinct shortcut number {i}"' for i in range(n)])})
    text, _ = _triage_groups(f, {})
    lines = text.splitlines()
    assert sum(1 for ln in lines if ln.startswith("  - distinct shortcut")) == n
    assert not any("more" in ln for ln in lines)


@pytest.mark.parametrize("n, more", [(10, None), (11, "and 1 more parse failures")])
def test_a_samsara_gate_lists_at_most_10_parse_failures(tmp_path, n, more):
    from scars.core.loops.samsara.gather import _failure_warnings

    f = _feature_with(tmp_path, {f"bad{i:02d}.yaml": "- not a mapping\n" for i in range(n)})
    assert len(f.parse_failures) == n
    warns = _failure_warnings(f)
    assert sum(1 for w in warns if w.startswith("parse failure")) == min(n, 10)
    assert (more in warns) if more else not any(w.startswith("and ") for w in warns)


def _entries(numbers) -> str:
    return "# Auto Decisions\n\n" + "".join(
        f"## Decision {n:03d} - iteration.triage\n- decision_id: decision-{n:03d}\n\n" for n in numbers
    )


@pytest.mark.parametrize("numbers, jump", [((1, 2, 3), None), ((1, 2, 4), "numbering jumps from 002 to 004")])
def test_log_verify_flags_a_numbering_gap_of_one(tmp_path, numbers, jump):
    from scars.core.gates.verify import verify_feature
    from tests.factories import report, write_feature

    feat = write_feature(
        tmp_path, {"t.yaml": report("t", ks=['"x y z"'])}, files={"auto-decisions.md": _entries(numbers)}
    )
    messages = [f.message for f in verify_feature(feat).findings]
    assert any(jump in m for m in messages) if jump else not any("numbering jumps" in m for m in messages)
