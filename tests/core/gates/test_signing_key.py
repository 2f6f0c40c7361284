"""This user's request key (issue 27 §5): a per-user secret kept outside every repository, written
and read by storage's rule for the user's own files (``durable.create_private``, ``read_private``):
made once, durably, 0600 in a 0700 folder of the user's own, never through a link; refused when it
is a link, another user's, or readable or writable by anyone else, as the cache and the intents are."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from scars.core import settings
from scars.core.gates import signing
from scars.core.storage import durable

ROOT = os.getuid() == 0


@pytest.fixture
def state(tmp_path: Path, monkeypatch) -> Path:
    d = tmp_path / "state"
    monkeypatch.setenv("SCARS_STATE_DIR", str(d))
    settings.load()
    return d


def test_the_key_is_made_once_durably_and_this_users_alone(state: Path, monkeypatch):
    from tests.factories import SyscallTrace

    trace = SyscallTrace(monkeypatch)
    key = signing.user_key(create=True)
    assert key is not None and len(key) == 32
    path = state / signing.KEY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(state.stat().st_mode) == 0o700
    assert os.listdir(state) == [signing.KEY_FILE]  # the name it was written under is gone
    fsynced = [p for kind, p, is_dir in trace.events if kind == "fsync"]
    assert fsynced[-1] == str(state)  # the folder, after the key was linked into place
    assert signing.user_key(create=True) == key  # made once: the same key next time
    assert durable.create_private(path, b"another\n") is False and signing.user_key(create=False) == key


def test_a_state_folder_others_could_read_is_narrowed(state: Path):
    state.mkdir(mode=0o755)
    os.chmod(state, 0o755)
    signing.user_key(create=True)
    assert stat.S_IMODE(state.stat().st_mode) == 0o700


@pytest.mark.parametrize(
    ("mode", "usable"), [(0o600, True), (0o400, True), (0o640, False), (0o604, False), (0o620, False)]
)
def test_a_key_anyone_else_can_read_or_write_is_refused(state: Path, mode: int, usable: bool):
    key = signing.user_key(create=True)
    os.chmod(state / signing.KEY_FILE, mode)
    if usable:
        assert signing.user_key(create=False) == key
    else:
        with pytest.raises(signing.SigningKeyUnusable, match="nobody else can read"):
            signing.user_key(create=False)


def test_a_key_that_is_a_link_is_never_followed_nor_written_through(state: Path, tmp_path: Path):
    state.mkdir(mode=0o700)
    elsewhere = tmp_path / "elsewhere"
    (state / signing.KEY_FILE).symlink_to(elsewhere)  # a dangling link: making a key must not create it
    with pytest.raises(signing.SigningKeyUnusable, match="symlink"):
        signing.user_key(create=True)
    assert not elsewhere.exists()
    elsewhere.write_text("00" * 32 + "\n", encoding="utf-8")
    os.chmod(elsewhere, 0o600)
    with pytest.raises(signing.SigningKeyUnusable, match="symlink"):
        signing.user_key(create=False)


@pytest.mark.skipif(not ROOT, reason="giving a file to another user needs root")
def test_another_users_key_or_folder_is_refused(state: Path):
    key = signing.user_key(create=True)
    path = state / signing.KEY_FILE
    os.chown(path, 54321, -1)
    with pytest.raises(signing.SigningKeyUnusable, match="not yours alone"):
        signing.user_key(create=False)
    os.chown(path, os.getuid(), -1)
    assert signing.user_key(create=False) == key
    path.unlink()
    os.chown(state, 54321, -1)
    with pytest.raises(signing.SigningKeyUnusable, match="another user's"):
        signing.user_key(create=True)
    assert not path.exists()


def test_a_private_file_is_never_made_through_a_link(tmp_path: Path):
    folder = tmp_path / "own"
    folder.mkdir(mode=0o700)
    elsewhere = tmp_path / "elsewhere"
    (folder / "secret").symlink_to(elsewhere)
    assert durable.create_private(folder / "secret", b"x\n") is False
    assert not elsewhere.exists() and os.listdir(folder) == ["secret"]
