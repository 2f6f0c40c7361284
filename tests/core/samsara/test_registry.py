"""The systemic registry rule (formats.md §1.3, §1.7; issue 19).

An unreadable `.samsara/systemic-scars.yaml` is ONE parse failure naming the registry file
(so the entry verdict is `unknown`), and every `systemic_ref` is `unknown` and still
counted, exactly as with a missing registry: a broken registry never lowers `signal_lost`.
Dangling is only for a readable registry that lacks the id.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from scars.core.model import REGISTRY_FILE
from scars.core.samsara.feature import read_feature
from scars.core.storage import safe_read
from tests.factories import REGISTRY, report, write_feature

# Two refs to an id the readable REGISTRY holds, one to an id it lacks, one plain item.
REF_REPORT = report(
    ks=['systemic_ref: doc-only-guard\nnote: "step 2 checked by grep only"', '"plain shortcut"'],
    sf=['systemic_ref: doc-only-guard\nnote: "silent twin"', 'systemic_ref: not-registered\nnote: "x"'],
)
REFS = 3  # systemic_ref items in REF_REPORT
MISSING_SIGNAL_LOST = 4  # every item of REF_REPORT is counted when the registry is missing


def _write(text: str | bytes):
    def write(path: Path, root: Path) -> None:
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")

    return write


def _symlink_outside(path: Path, root: Path) -> None:
    outside = root.parent / "outside-registry.yaml"
    outside.write_text(REGISTRY + "  - id: not-registered\n", encoding="utf-8")  # would resolve every ref
    path.symlink_to(outside)


def _over_limit(path: Path, root: Path) -> None:
    _at_limit(path, root, extra=1)


def _at_limit(path: Path, root: Path, extra: int = 0) -> None:
    body = REGISTRY.encode() + b"# pad\n"
    path.write_bytes(body + b"#" * (safe_read.YAML_MAX_BYTES - len(body) - 1 + extra) + b"\n")


def _laughs() -> str:
    out = "a: &a [x, x, x, x, x, x, x, x, x]\n"
    for i in range(8):
        out += f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n"
    return out + "entries: [{id: doc-only-guard}]\n"


# Every unreadable form the safe reader rejects; where it can, the text names the ids the
# report refers to, so a reader that used the content anyway would mark them "found".
UNREADABLE = {
    "not-yaml": (_write("entries: [unclosed\n  - id: doc-only-guard\n"), r"not YAML|YAML"),
    "top-level-list": (_write("- id: doc-only-guard\n- id: not-registered\n"), "not a mapping"),
    "entries-a-map": (_write("entries: {id: doc-only-guard}\n"), "'entries' is a map"),
    "entries-a-string": (_write("entries: doc-only-guard\n"), "'entries' is a string"),
    "entries-missing": (_write("scars:\n  - id: doc-only-guard\n"), "'entries' is missing"),
    "empty-file": (_write(""), "empty"),
    "duplicate-keys": (_write(REGISTRY + "entries: []\n"), "duplicate key 'entries'"),
    "over-size-limit": (_over_limit, "limit"),
    "invalid-utf8": (_write(REGISTRY.encode() + b"  - id: caf\xe9\n"), "invalid UTF-8"),
    "alias-bomb": (_write(_laughs()), "alias expansion"),
    "too-deep": (_write("entries: " + "[" * 200 + "]" * 200 + "\n"), "nesting"),
    "python-tag": (_write("entries: !!python/object/apply:os.system ['true']\n"), "tag"),
    "directory": (lambda p, root: p.mkdir(), "not a regular file"),
    "fifo": (lambda p, root: os.mkfifo(p), "not a regular file"),
    "symlink-outside": (_symlink_outside, "outside the repository"),
}


def _feature(tmp_path: Path, write=None) -> Path:
    root = tmp_path / "repo"
    feat = write_feature(root, {"t.yaml": REF_REPORT})
    if write is not None:
        (root / ".samsara").mkdir(exist_ok=True)
        write(root / REGISTRY_FILE, root)
    return feat


def test_missing_registry_baseline(tmp_path):
    f = read_feature(_feature(tmp_path))
    assert f.registry.state == "missing" and f.parse_failures == () and f.dangling_refs == ()
    refs = [it for it in f.items if it.systemic_ref]
    assert len(refs) == REFS and all(it.registry_state == "unknown" and it.counted for it in refs)
    assert f.signal_lost == MISSING_SIGNAL_LOST


@pytest.mark.parametrize("form", list(UNREADABLE))
def test_unreadable_registry_is_one_failure_and_refs_stay_counted(tmp_path, form):
    write, says = UNREADABLE[form]
    f = read_feature(_feature(tmp_path, write))
    assert f.registry.state == "unreadable"
    # The same figure as with no registry at all: nothing dangles, nothing is dropped.
    assert f.signal_lost == MISSING_SIGNAL_LOST
    assert f.dangling_refs == ()
    (pf,) = f.parse_failures  # exactly one, naming the registry file, never the report
    assert pf.file == REGISTRY_FILE and pf.of_registry
    assert pf.message.startswith("registry unreadable: ")
    assert re.search(says, pf.message, re.I), pf.message
    assert "unknown and still counted" in pf.message
    refs = [it for it in f.items if it.systemic_ref]
    assert len(refs) == REFS
    assert all(it.registry_state == "unknown" and it.counted and it.registry_description is None for it in refs)
    assert all(it.counted for it in f.items)
    assert all(r.parse_failure is None for r in f.reports)
    assert f.entry.verdict == "unknown" and "1 parse failure" in f.entry.record


def test_registry_failure_gives_the_line_where_known(tmp_path):
    f = read_feature(_feature(tmp_path, UNREADABLE["duplicate-keys"][0]))
    (pf,) = f.parse_failures
    assert pf.line == REGISTRY.count("\n") + 1  # the second `entries:` key


# ---- the other side of the boundary: a readable registry ----------------------------


def test_readable_registry_lacking_the_id_dangles(tmp_path):
    f = read_feature(_feature(tmp_path, _write(REGISTRY)))
    assert f.registry.state == "present"
    assert f.dangling_refs == (("scar-reports/t.yaml", "not-registered"),)
    (pf,) = f.parse_failures
    assert pf.file == "scar-reports/t.yaml" and not pf.of_registry and "not-registered" in pf.message
    states = sorted(it.registry_state for it in f.items if it.systemic_ref)
    assert states == ["dangling", "found", "found"]
    assert f.signal_lost == 0  # the report failed to parse: its items are not counted


def test_readable_registry_holding_every_id_counts_them_found(tmp_path):
    f = read_feature(_feature(tmp_path, _write(REGISTRY + "  - id: not-registered\n")))
    assert f.parse_failures == () and f.dangling_refs == ()
    assert all(it.registry_state == "found" for it in f.items if it.systemic_ref)
    assert f.signal_lost == MISSING_SIGNAL_LOST


@pytest.mark.parametrize(
    "text",
    ["entries: []\n", "entries:\n  - 1\n  - {id: [x]}\n  - {description: no-id}\n"],
    ids=["empty-list", "junk-entries"],
)
def test_readable_but_useless_registry_makes_refs_dangle(tmp_path, text):
    """A list of entries is readable, even empty or holding junk: every ref then dangles."""
    f = read_feature(_feature(tmp_path, _write(text)))
    assert f.registry.state == "present"
    assert sorted(i for _, i in f.dangling_refs) == ["doc-only-guard", "doc-only-guard", "not-registered"]
    assert [pf.file for pf in f.parse_failures] == ["scar-reports/t.yaml"] * 3
    assert f.signal_lost == 0


def test_size_limit_boundary(tmp_path):
    at = read_feature(_feature(tmp_path / "at", _at_limit))
    assert (Path(at.repo_root) / REGISTRY_FILE).stat().st_size == safe_read.YAML_MAX_BYTES
    assert at.registry.state == "present" and "doc-only-guard" in at.registry.entries
    assert at.dangling_refs == (("scar-reports/t.yaml", "not-registered"),)
    over = read_feature(_feature(tmp_path / "over", _over_limit))
    assert (Path(over.repo_root) / REGISTRY_FILE).stat().st_size == safe_read.YAML_MAX_BYTES + 1
    assert over.registry.state == "unreadable" and over.dangling_refs == ()
    assert over.signal_lost == MISSING_SIGNAL_LOST


def test_symlink_inside_the_repository_is_read(tmp_path):
    def inside(path: Path, root: Path) -> None:
        (root / "docs").mkdir()
        (root / "docs" / "registry.yaml").write_text(REGISTRY, encoding="utf-8")
        path.symlink_to(Path("..") / "docs" / "registry.yaml")

    f = read_feature(_feature(tmp_path, inside))
    assert f.registry.state == "present" and [pf.file for pf in f.parse_failures] == ["scar-reports/t.yaml"]


# ---- scars status, text and --json ----------------------------------------------------


def _status(capsys, *args: str) -> tuple[int, str]:
    from scars.tui.cli import main as cli

    rc = cli.main(["status", *args])
    return rc, capsys.readouterr().out


def test_status_json_on_an_unreadable_registry(tmp_path, capsys):
    feat = _feature(tmp_path, UNREADABLE["top-level-list"][0])
    rc, out = _status(capsys, "--json", str(feat))
    assert rc == 0
    data = json.loads(out)
    assert data["registry"] == "unreadable"
    assert data["signal_lost"] == MISSING_SIGNAL_LOST and data["dangling_refs"] == []
    (pf,) = data["parse_failures"]
    assert pf["file"] == REGISTRY_FILE and pf["line"] == 1 and "not a mapping" in pf["reason"]
    assert data["entry"]["verdict"] == "unknown"
    refs = [it for it in data["items"] if it["systemic_ref"]]
    assert len(refs) == REFS and {(it["registry_state"], it["counted"]) for it in refs} == {("unknown", True)}
    rc, _ = _status(capsys, "--json", "--strict", str(feat))
    assert rc == 3  # the registry failure is a parse failure for --strict too


def test_status_text_on_an_unreadable_registry(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    feat = _feature(tmp_path, UNREADABLE["top-level-list"][0])
    rc, out = _status(capsys, str(feat))
    assert rc == 0
    assert "systemic registry: unreadable — systemic_refs unknown, still counted" in out
    assert f"signal_lost {MISSING_SIGNAL_LOST} " in out
    assert "Entry: UNKNOWN" in out
    assert "Parse failures (1)" in out and f"✗ {REGISTRY_FILE}:1 registry unreadable: not a mapping" in out
    assert "Dangling" not in out and "NOT COUNTED" not in out


def test_status_text_registry_line_for_the_other_states(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    _, missing = _status(capsys, str(_feature(tmp_path / "m")))
    _, present = _status(capsys, str(_feature(tmp_path / "p", _write(REGISTRY))))
    assert "systemic registry: missing — systemic_refs unknown, still counted" in missing
    assert "systemic registry: present\n" in present


# ---- the entry gate's evidence ----------------------------------------------------------


def test_entry_gate_names_the_registry_and_keeps_its_refs_counted(tmp_path, monkeypatch):
    from scars.core import gates

    monkeypatch.setenv("SCARS_USER", "alice")
    feat = _feature(tmp_path, UNREADABLE["entries-a-map"][0])
    ev = gates.gather("entry", feat)
    figs = dict(ev.figures)
    assert figs["signal_lost"].startswith(f"{MISSING_SIGNAL_LOST} ") and figs["parse failures"] == "1"
    assert figs["entry verdict"] == "unknown" and ev.default == "enter"
    (line,) = [w for w in ev.warnings if REGISTRY_FILE in w]
    assert line.startswith(f"parse failure (systemic refs unknown, still counted): {REGISTRY_FILE}:1: ")
    assert not any("dangling" in w for w in ev.warnings)
    assert REGISTRY_FILE in ev.files_read


# ---- what the app's detail pane says about an `unknown` ref ------------------------------


def test_detail_pane_tells_missing_from_unreadable():
    from scars.core.model import Registry
    from scars.tui.app.widgets.detail import describe_unknown_registry

    missing = describe_unknown_registry(Registry(state="missing", path=REGISTRY_FILE))
    assert missing.startswith(f"missing — no {REGISTRY_FILE}.") and "still counted in signal_lost" in missing
    assert "Parse failures" not in missing  # a missing registry is not a parse failure
    unreadable = describe_unknown_registry(
        Registry(state="unreadable", path=REGISTRY_FILE, reason="duplicate key 'entries'", line=7)
    )
    assert unreadable.startswith(f"unreadable ({REGISTRY_FILE}:7: duplicate key 'entries').")
    assert "still counted in signal_lost, and the registry is listed under Parse failures" in unreadable
