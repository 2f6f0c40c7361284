"""Contract: one meaningful-text validator, the same refusals at every front end.

The list below (issue 13, point 6) is refused as an accept's signal, owner or rationale by
`scars decide` and by the app's accept form (Pilot), as a defer's reason by `scars decide` and the
app's defer form, as a gate's reason from a flag, a SCARS_REASON_<GATE> variable, an answers file
and the app's round gate, and `scars log verify` fails a hand-written iteration-log.yaml whose
era-B accept carries it (a legacy accept with expiry_date stays a note).
"""

from __future__ import annotations

import asyncio
import functools
import json

import pytest
import yaml

from scars.core.gates.verify import verify_feature
from scars.core.samsara.session import FeatureSession
from scars.core.text import is_meaningful, text_problem
from scars.tui.app.app import ScarsApp
from tests.factories import (
    ACCEPT,
    app_repo,
    clean_env,
    csv_feature,
    item_id,
    loop_spec_feature,
    run_cli,
    tree_hashes,
    wait_until,
)

REFUSED = [
    "",
    "   ",
    "tbd",
    "TBD.",
    "n/a",
    "N/A",
    "-",
    "…",
    "...",
    "ok",
    "OK.",
    "approved",
    "looks good",
    "Looks good!",
    "lgtm",
    "LGTM 👍",
    "<owner>",
    "<question-specific answer>",
    "owner",
    "TODO: fill",
    "todo fill in",
    "xxx",
    "???",
    "none",
    "continue",
    "yes",
    "done",
    "ok, continue",
    "待定",
    "无",
    "無",
    "好的",
    "同意",
    "好的，继续",
]

# Texts that must pass wherever a text is asked for (they come from real upstream logs or the
# spec's examples): the validator may not be a blunt length or language filter.
KEPT = [
    "repo maintainer",
    "該次修改的作者",
    "a second process starts writing exports",
    "single-process deployment today",
    "registry 機制照設計運作的結果；每項在原 scar 都有本 task 的具體落點 note",
    "maintainer of export service",
    "no fix-class items remain; another round cannot lower signal_lost",
]

SIZE = (120, 40)


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_env(monkeypatch)


# ---------------------------------------------------------------- the validator itself


@pytest.mark.parametrize("value", REFUSED)
def test_the_validator_refuses_the_list(value):
    assert text_problem(value) is not None
    assert not is_meaningful(value)


@pytest.mark.parametrize("value", KEPT)
def test_the_validator_keeps_real_texts(value):
    assert text_problem(value) is None, text_problem(value)


# ---------------------------------------------------------------- scars decide (CLI)


@pytest.mark.parametrize("field", ["re_review_signal", "owner", "rationale"])
def test_decide_refuses_the_list_in_every_accept_field(field, tmp_path, capsys):
    feature = csv_feature(tmp_path)
    item = item_id(feature, "Retry count is hard-coded to 3")
    flags = {"re_review_signal": "--signal", "owner": "--owner", "rationale": "--rationale"}
    for value in REFUSED:
        fields = {**ACCEPT, field: value}
        argv = ["decide", item, "--accept", "--feature", str(feature), "--json"]
        for name, flag in flags.items():
            argv += [flag, fields[name]]
        code, out, err = run_cli(argv, capsys)
        assert code == 4, (value, out, err)
        assert [f["field"] for f in json.loads(out)["fields"]] == [field], value
    assert not (feature / ".scars" / "journal.jsonl").exists()  # nothing was recorded


def test_decide_refuses_the_list_as_a_defer_reason(tmp_path, capsys):
    feature = csv_feature(tmp_path)
    item = item_id(feature, "Retry count is hard-coded to 3")
    for value in REFUSED:
        if not value.strip():
            continue  # an empty optional reason is no reason: the defer is taken without one
        code, out, err = run_cli(["decide", item, "--defer", "--reason", value, "--feature", str(feature)], capsys)
        assert code == 4, (value, out, err)
    assert not (feature / ".scars" / "journal.jsonl").exists()


# ---------------------------------------------------------------- the app's forms and round gate (Pilot)


def _aio(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return asyncio.run(fn(*args, **kwargs))

    return wrapper


def _decided(feature_dir) -> dict:
    with FeatureSession.open(feature_dir, read_only=True) as s:
        return dict(s.decisions)


async def _refused_by_form(app, pilot, form, field: str, values: dict[str, str]) -> None:
    for name, value in values.items():
        form.query_one(f"#field-{name}").value = value
    form.show_errors([])  # no error shown before the save: the one awaited is this save's
    last = form.query_one(f"#field-{form.FIELDS[-1][0]}")
    last.focus()
    await wait_until(pilot, lambda: last.has_focus, "the last field focused")
    await pilot.press("enter")  # Enter on the last field saves
    await wait_until(
        pilot,
        lambda: form.query_one(f"#error-{field}").has_class("shown") and form.query_one(f"#field-{field}").has_focus,
        f"{field} refused (its error shown, the field focused)",
    )
    assert app.screen is form


@_aio
async def test_app_accept_and_defer_forms_refuse_the_list(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    feature_dir = app_repo(root)
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_loaded()
        await pilot.pause()
        await pilot.press("a")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "AcceptForm", "the accept form")
        form = app.screen
        for field in ("re_review_signal", "owner", "rationale"):
            for value in REFUSED:
                await _refused_by_form(app, pilot, form, field, {**ACCEPT, field: value})
        await pilot.press("escape")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "MainScreen", "the main screen")
        await pilot.press("d")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "DeferForm", "the defer form")
        form = app.screen
        for value in REFUSED:
            if value.strip():
                await _refused_by_form(app, pilot, form, "reason", {"reason": value})
    assert _decided(feature_dir) == {}


@_aio
async def test_app_round_gate_refuses_the_list_as_its_reason(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    feature_dir = app_repo(root)
    log_before = (feature_dir / "iteration-log.yaml").read_bytes()
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_loaded()
        await pilot.pause()
        await pilot.press("f")
        await wait_until(pilot, lambda: len(app.decisions) == 1, "the fix recorded")
        await pilot.press("g")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "RoundGate", "the round gate")
        gate = app.screen
        choices = gate.query_one("#gate-choices")
        for value in REFUSED:
            gate.query_one("#gate-reason").value = value
            gate.query_one("#gate-error").remove_class("shown")
            choices.focus()  # the refusal focuses the reason: b marks stop at the choices, Enter records it
            await wait_until(pilot, lambda: choices.has_focus, "the choices focused")
            await pilot.press("b", "enter")
            await wait_until(
                pilot,
                lambda: gate.query_one("#gate-error").has_class("shown") and gate.query_one("#gate-reason").has_focus,
                f"{value!r} refused (the error shown, the reason focused again)",
            )
            assert app.screen is gate, value
    assert (feature_dir / "iteration-log.yaml").read_bytes() == log_before
    assert not (feature_dir / "auto-decisions.md").exists()


# ---------------------------------------------------------------- gate reasons: flag, environment, answers file


@pytest.mark.parametrize("source", ["flag", "env", "file"])
def test_gate_reason_refuses_the_list_from_every_source(source, tmp_path, capsys, monkeypatch):
    fdir = loop_spec_feature(tmp_path / "p")
    before = tree_hashes(tmp_path / "p")
    for value in REFUSED:
        if not value.strip() and source == "env":
            continue  # an empty variable is an unset one: "no reason given", refused the same way below
        argv = ["gate", "spec", str(fdir), "--json"]
        if source == "flag":
            argv += ["--answer", "ship", "--reason", value]
        elif source == "env":
            monkeypatch.setenv("SCARS_ANSWER_SPEC", "ship")
            monkeypatch.setenv("SCARS_REASON_SPEC", value)
        else:
            f = tmp_path / "answers.yaml"
            f.write_text(yaml.safe_dump({"spec": {"answer": "ship", "reason": value}}, allow_unicode=True))
            argv += ["--answers", str(f)]
        code, out, err = run_cli(argv, capsys)
        assert code == 4, (source, value, out, err)
    assert tree_hashes(tmp_path / "p") == before


# ---------------------------------------------------------------- scars log verify on a hand-written log


def _hand_log(accept: dict) -> str:
    body = "\n".join(f"          {k}: {json.dumps(v, ensure_ascii=False)}" for k, v in accept.items())
    return f"""\
feature: "csv-export"
signal_lost_initial: 3
rounds:
  - round: 1
    signal_lost_before: 3
    triage_result:
      fix: []
      accept:
        - description: "Retry count is hard-coded to 3"
{body}
      defer: []
    signal_lost_after: 3
    decision: stop
    decision_reason: "the remaining items are accepted with owners"
"""


@pytest.mark.parametrize("field", ["re_review_signal", "owner", "rationale"])
def test_log_verify_fails_a_hand_written_placeholder_accept(field, tmp_path):
    feature = csv_feature(tmp_path)
    log = feature / "iteration-log.yaml"
    log.write_text(_hand_log(ACCEPT), encoding="utf-8")
    assert not [f for f in verify_feature(feature).findings if f.severity == "failure"]
    for value in REFUSED:
        log.write_text(_hand_log({**ACCEPT, field: value}), encoding="utf-8")
        failures = [f.message for f in verify_feature(feature).findings if f.severity == "failure"]
        assert any(field in m for m in failures), (value, failures)


def test_log_verify_keeps_a_legacy_expiry_accept_a_note(tmp_path):
    """The expiry_date form needs no re-review signal or owner (read-time compatibility, seed
    002), but its rationale is judged by the one rule: "ok" says nothing (issue 29)."""
    feature = csv_feature(tmp_path)
    log = feature / "iteration-log.yaml"
    log.write_text(_hand_log({"expiry_date": "2026-10-19", "rationale": ACCEPT["rationale"]}), encoding="utf-8")
    v = verify_feature(feature)
    assert not [f for f in v.findings if f.severity == "failure"], v.findings
    assert any("legacy accept" in f.message for f in v.findings if f.severity == "note")
    for value in REFUSED:
        log.write_text(_hand_log({"expiry_date": "2026-10-19", "rationale": value}), encoding="utf-8")
        failures = [f.message for f in verify_feature(feature).findings if f.severity == "failure"]
        assert any("legacy accept" in m and "rationale" in m for m in failures), (value, failures)
