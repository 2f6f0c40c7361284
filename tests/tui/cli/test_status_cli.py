"""`scars status` in a subprocess without a TTY."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.factories import report, write_feature

CHANGES = "samsara/changes"


def scars(*args: str, cwd=None) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "80"}
    return subprocess.run(
        [sys.executable, "-m", "scars.tui.cli.main", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        stdin=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
        timeout=60,
    )


def test_json_on_each_upstream_feature(upstream):
    expected = {
        "2026-04-17_samsara-phase4-auto-iteration": (3, "skip", 2),
        "2026-05-20_extract-pre-thinking-step": (0, "skip", 1),
        "2026-06-30_placement-consistency-gate": (1, "skip", 1),
        "2026-07-02_workflow-subtraction-optimization": (0, "skip", 1),
    }
    r = scars("status", "--json", str(upstream / "samsara"))
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    got = {f["feature"]: (f["signal_lost"], f["entry"]["verdict"], len(f["rounds"])) for f in data["features"]}
    assert got == expected
    r = scars("status", "--json", str(upstream / CHANGES / "2026-04-17_samsara-phase4-auto-iteration"))
    one = json.loads(r.stdout)
    assert one["counts"] == {"known_shortcuts": 1, "silent_failure_conditions": 1, "unverified_assumptions": 1}
    assert one["rounds"][0]["signal_lost_before"] == 9
    assert r.stdout.isascii()  # ensure_ascii


def test_summary_fits_80_columns_and_is_plain(upstream):
    r = scars("status", str(upstream / CHANGES / "2026-06-30_placement-consistency-gate"))
    assert r.returncode == 0, r.stderr
    assert "signal_lost 1" in r.stdout and "Unaddressed (1)" in r.stdout and "Entry: SKIP" in r.stdout
    assert "\x1b" not in r.stdout
    assert max(len(line) for line in r.stdout.splitlines()) <= 80
    r = scars("status", str(upstream / "samsara"))
    assert r.returncode == 0 and len(r.stdout.strip().splitlines()) == 5
    assert max(len(line) for line in r.stdout.splitlines()) <= 80


def test_exit_codes(tmp_path):
    assert scars("status", str(tmp_path / "nope")).returncode == 2
    assert scars("status", str(tmp_path)).returncode == 2  # not a feature, no changes/
    feat = write_feature(tmp_path, {"bad.yaml": "- a list\n", "ok.yaml": report(ks=['"x"'])})
    r = scars("status", str(feat))
    assert r.returncode == 0 and "Parse failures (1)" in r.stdout and "bad.yaml" in r.stdout
    assert scars("status", "--strict", str(feat)).returncode == 3
    r = scars("status", "--strict", "--json", str(tmp_path))
    assert r.returncode == 3
    data = json.loads(r.stdout)
    assert data["features"][0]["parse_failures"] == [
        {"file": "scar-reports/bad.yaml", "line": 1, "reason": data["features"][0]["parse_failures"][0]["reason"]}
    ]


def test_default_path_is_the_current_directory(tmp_path):
    feat = write_feature(tmp_path, {"ok.yaml": report(ks=['"x"'])})
    r = scars("status", "--json", cwd=feat)
    assert r.returncode == 0 and json.loads(r.stdout)["signal_lost"] == 1


def test_hostile_text_is_inert(tmp_path):
    evil = '"\\e]52;c;SGVsbG8=\\a [bold red]markup[/] \\u202e reversed \\e[2J"'
    feat = write_feature(tmp_path, {"evil.yaml": report(ks=[evil])})
    r = scars("status", str(feat))
    assert r.returncode == 0
    assert "\x1b" not in r.stdout and "\x07" not in r.stdout and "\u202e" not in r.stdout
    assert "[bold red]markup[/]" in r.stdout  # shown literally, not interpreted
    assert "<U+202E>" in r.stdout
    d = json.loads(scars("status", "--json", str(feat)).stdout)
    assert d["items"][0]["text"].startswith("\x1b]52")  # JSON keeps the exact text, escaped


def test_status_says_why_items_are_a_possible_pattern(tmp_path):
    feat = write_feature(
        tmp_path,
        {
            "a.yaml": report("a", ks=['"tempfile.mkdtemp + shutil.move is atomic enough on one filesystem"']),
            "b.yaml": report("b", sf=['"The temp dir from tempfile.mkdtemp makes shutil.move atomic enough"']),
        },
    )
    out = scars("status", str(feat)).stdout
    assert "Possible patterns (1)" in out
    assert "shared identifiers: tempfile.mkdtemp, shutil.move" in out
    # last: a cold read prints the rest while they are computed (tests/core/samsara/test_cold_meanwhile.py)
    assert out.index("Possible patterns (1)") > out.index("Rounds: none yet")
    data = json.loads(scars("status", "--json", str(feat)).stdout)
    (p,) = data["possible_patterns"]
    assert set(p) == {"ids", "similarity", "reason"} and p["reason"].startswith("shared identifiers:")


def test_piped_text_wraps_within_80_columns_and_cuts_nothing(tmp_path):
    """Issue 16: parse-failure reasons and item texts were cut at the width ("…unre…") when piped."""
    long_text = "The retry loop " + "drops the message on a timeout and nobody hears of it " * 4 + "END-OF-TEXT"
    feat = write_feature(
        tmp_path,
        {
            "task-1-scar.yaml": report("task-1", ks=[f'"{long_text}"']),
            "task-2-scar.yaml": report(
                "task-2", sf=["{title: a map, severity: high, owner: somebody-with-a-long-name}"]
            ),
        },
    )
    r = scars("status", str(feat))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    flat = " ".join(" ".join(lines).split())
    assert " ".join(long_text.split()) in flat
    reason = next(pf for pf in json.loads(scars("status", "--json", str(feat)).stdout)["parse_failures"])["reason"]
    assert " ".join(reason.split()) in flat and "…" not in r.stdout


def test_each_items_decision_in_force_is_in_the_text(tmp_path):
    """Issue 16: `scars status` showed an item's current decision only in --json."""
    feat = write_feature(
        tmp_path, {"task-1-scar.yaml": report("task-1", ks=['"Retry count is hard-coded"', '"No metrics"'])}
    )
    fixed, other = (i["id"] for i in json.loads(scars("status", "--json", str(feat)).stdout)["items"])
    r = scars("decide", fixed, "--fix", "--as", "alice", "--feature", str(feat))
    assert r.returncode == 0, r.stderr
    lines = scars("status", str(feat)).stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if fixed in line)
    assert any(line.strip() == "→ fix by alice" for line in lines[at + 1 : at + 4]), lines[at : at + 4]
    at = next(i for i, line in enumerate(lines) if other in line)
    assert not any("→" in line for line in lines[at + 1 : at + 3])


def test_a_repository_listing_never_cuts_a_feature_name_or_a_header(tmp_path):
    """The listing cut names past 42 characters (upstream's own "2026-07-02_workflow-subtraction-optimizat…": the
    id a person types next) and its "failures" header ("failu…")."""
    long_name = "2025-06-14_workflow-subtraction-optimization-gate-two"
    for name in (long_name, "2026-01-01_short"):
        write_feature(tmp_path, {"task-1-scar.yaml": report("task-1", ks=['"Retry count"'])}, name=name)
    r = scars("status", str(tmp_path))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "…" not in r.stdout and max(len(line) for line in lines) <= 80
    assert lines[0].split() == ["feature", "signal_lost", "entry", "failures", "rounds"]
    first_column = "".join(line[: lines[0].index("signal_lost")].strip() for line in lines[1:])
    assert long_name in first_column and "2026-01-01_short" in first_column


def test_a_log_description_not_matched_is_printed_whole_and_as_written(tmp_path):
    """The descriptions the matcher did not take were cut at 70 characters and printed as Python's
    repr (a backslash doubled), although the text wraps everywhere else."""
    description = r"Windows paths such as C:\temp\exports are rejected by the uploader " + "x" * 40 + " END"
    feat = write_feature(
        tmp_path,
        {"task-1-scar.yaml": report("task-1", ks=['"Retry count is hard-coded"'])},
        files={
            "iteration-log.yaml": "feature: demo\nsignal_lost_initial: 1\nrounds:\n  - round: 1\n"
            "    signal_lost_before: 1\n    triage_result:\n      fix:\n"
            f"        - '{description}'\n    signal_lost_after: 1\n    decision: continue\n"
            '    decision_reason: "the uploader items are actionable"\n'
        },
    )
    r = scars("status", str(feat))
    assert r.returncode == 0, r.stderr
    flat = " ".join(" ".join(r.stdout.splitlines()).split())
    assert "round 1 fix: none '" + description + "'" in flat, flat[-600:]


def test_long_task_ids_report_names_and_round_reasons_are_whole(tmp_path):
    """A task id was cut at 30 characters, a report's name at 40 (`scar-reports/iteration-fix-1-…`,
    also in a parse failure's line) and a round's reason at 200, in a text that wraps anyway."""
    task = "iteration-r1-three-state-dry-run-of-the-exporter"
    report_name = "iteration-fix-1-three-state-dry-run-scar.yaml"
    reason = "the exporter's three-state dry run " * 8 + "END"
    feat = write_feature(
        tmp_path,
        {
            report_name: report(task, ks=['"Retry count is hard-coded"']),
            "task-9-broken-report-name-scar.yaml": "- a list\n",
        },
        files={
            "iteration-log.yaml": "feature: demo\nsignal_lost_initial: 1\nrounds:\n  - round: 1\n"
            f'    signal_lost_before: 1\n    signal_lost_after: 1\n    decision: continue\n    decision_reason: "{reason}"\n'
        },
    )
    r = scars("status", str(feat))
    assert r.returncode == 0, r.stderr
    flat = " ".join(" ".join(r.stdout.splitlines()).split())
    assert f"{task} · {report_name}:" in flat
    assert "✗ scar-reports/task-9-broken-report-name-scar.yaml" in flat
    assert " ".join(reason.split()) in flat
