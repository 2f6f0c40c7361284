"""`scars log verify`: one exit code per outcome, files and several features as arguments."""

from __future__ import annotations

import json

from scars.tui.cli.main import main
from tests.core.samsara.test_carry_over import REAL, real_copy

AUDIT = REAL / "changes" / "2026-08-18_audit-trail"


def test_exit_codes_per_outcome(tmp_path, capsys):
    assert main(["log", "verify", str(AUDIT)]) == 0  # success
    f = real_copy(tmp_path, "2026-08-18_audit-trail")
    log = f / "iteration-log.yaml"
    text = log.read_text(encoding="utf-8")
    log.write_text(text.replace('"Log shipper assumed to keep the written order"', '"shipping is fine"'), "utf-8")
    assert main(["log", "verify", str(f)]) == 3  # unknown: its own code, never success
    assert main(["log", "verify", str(f), "--hook"]) == 0  # the hook lets unknown through
    assert main(["log", "verify", str(f), "--hook", "--strict"]) == 3
    log.write_text(text.replace("    decision: stop\n", "    decision: done\n"), "utf-8")
    assert main(["log", "verify", str(f)]) == 1  # failure
    assert main(["log", "verify", str(f), "--hook"]) == 1
    capsys.readouterr()


def test_files_name_their_feature_and_several_features_verify_together(tmp_path, capsys):
    a = real_copy(tmp_path / "a", "2026-08-18_audit-trail")
    b = real_copy(tmp_path / "b", "2026-08-04_search-index")
    files = [str(a / "iteration-log.yaml"), str(b / "iteration-log.yaml"), str(a / "auto-decisions.md")]
    assert main(["log", "verify", *files, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["outcome"] == "success"
    assert [x["feature"] for x in out["features"]] == [a.name, b.name]  # each feature once


def test_a_missing_path_is_a_usage_error(tmp_path, capsys):
    assert main(["log", "verify", str(tmp_path / "nope")]) == 2
    capsys.readouterr()


def test_each_finding_is_labelled_by_its_level_in_words(tmp_path, capsys):
    f = real_copy(tmp_path, "2026-08-18_audit-trail")
    log = f / "iteration-log.yaml"
    text = log.read_text(encoding="utf-8")
    log.write_text(text.replace('"Log shipper assumed to keep the written order"', '"shipping is fine"'), "utf-8")
    assert main(["log", "verify", str(f)]) == 3
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "name no item confidently" in ln]
    assert lines and all(ln.startswith("  UNKNOWN  iteration-log.yaml") for ln in lines)
    log.write_text(text.replace("    decision: stop\n", "    decision: done\n"), "utf-8")
    assert main(["log", "verify", str(f)]) == 1
    out = capsys.readouterr().out
    assert "????" not in out and "\n  FAIL     iteration-log.yaml" in out
