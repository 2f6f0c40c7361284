"""Whose a gate request is: requests and answers signed with this user's own secret, so that a
request file a repository ships (copied, committed with ``git add -f``, planted) is never taken
for one posted — or answered — in this checkout.

The secret is 32 random bytes in ``<state dir>/request-key`` (the state directory of the
intents: ``SCARS_STATE_DIR``, else ``$XDG_STATE_HOME/scars``; the directory 0700, the file 0600,
created on first use, refused when it is a link, not this user's or readable by others). A
request's signature is an HMAC-SHA256 over what it asks (id, gate, path, options, who, when, the
evidence and loop-files fingerprint it was posted with) and where it was posted: the host, the
user id and the checkout (the repository root's real path, device and inode). An answer's is an
HMAC over the request's signature and the whole answer. A file copied to another checkout,
another host or another user fails; so does one edited by hand. A request without a signature
(written by a scars before signatures, or by hand) is "not posted here": listed, never applied.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import socket
from pathlib import Path
from typing import Any

from scars.core import settings
from scars.core.errors import ScarsError
from scars.core.storage.durable import WriteFailed, create_private, read_private

KEY_FILE = "request-key"
ALG = "hmac-sha256"
_KEY_BYTES = 32


class SigningKeyUnusable(ScarsError):
    """This user's request key cannot be used (another user's, readable by others, a link)."""

    exit_code = 2


def key_path() -> Path:
    return settings.current().state_dir / KEY_FILE


def _unusable(path: Path, why: str) -> SigningKeyUnusable:
    return SigningKeyUnusable(
        f"{path}: this user's request key cannot be used ({why}); remove it (a new one is made) or set "
        "SCARS_STATE_DIR to a directory of your own"
    )


def _read_key(path: Path) -> bytes | None:
    """The key, read as the user's own secret (``storage/durable.read_private``: no link followed, a
    regular file of this user's that nobody else can read or write)."""
    try:
        data = read_private(path, 4 * _KEY_BYTES)
    except OSError as exc:
        raise _unusable(path, exc.strerror or str(exc)) from None
    if data is None:
        return None
    try:
        key = bytes.fromhex(data.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        key = b""
    if len(key) != _KEY_BYTES:
        raise SigningKeyUnusable(f"{path}: not a request key (64 hex digits); remove it and a new one is made")
    return key


def user_key(*, create: bool) -> bytes | None:
    """This user's request key; made now when ``create`` and there is none (else None). Made by
    ``storage/durable.create_private``: once, durable, 0600, in a folder of this user's own (refused
    when another user's, narrowed to 0700), never through a link; a second process making one at the
    same time uses the winner's (no reader ever sees a half-written key)."""
    path = key_path()
    key = _read_key(path)
    if key is not None or not create:
        return key
    try:
        create_private(path, secrets.token_bytes(_KEY_BYTES).hex().encode("ascii") + b"\n")
    except WriteFailed as exc:
        raise _unusable(path, str(exc)) from None
    key = _read_key(path)
    assert key is not None  # made just now (or by the process that won)
    return key


def checkout(root: str | os.PathLike[str]) -> dict[str, Any]:
    """The checkout's identity: the repository root's real path, device and inode."""
    real = os.path.realpath(root)
    st = os.stat(real)
    return {"path": real, "dev": st.st_dev, "ino": st.st_ino}


def origin(root: str | os.PathLike[str]) -> dict[str, Any]:
    """Where this process posts or answers: host, user id, checkout."""
    return {"host": socket.gethostname(), "uid": os.getuid(), "checkout": checkout(root)}


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=True, default=str).encode()).hexdigest()


def mac(key: bytes, what: str, fields: dict[str, Any], root: str | os.PathLike[str]) -> str:
    """The HMAC of ``fields`` (``what``: "request" or "answer") as signed here, in ``root``."""
    body = json.dumps(
        {"v": 1, "what": what, "fields": fields, "origin": origin(root)},
        sort_keys=True,
        ensure_ascii=True,
        default=str,
    )
    return hmac.new(key, body.encode("utf-8"), hashlib.sha256).hexdigest()


def request_fields(data: dict[str, Any]) -> dict[str, Any]:
    """What a request's signature covers (its file's JSON)."""
    keys = ("id", "gate", "path", "options", "asked_by", "asked_at", "fingerprint")
    return {**{k: data.get(k) for k in keys}, "evidence": _digest(data.get("evidence"))}


def answer_fields(request_mac: str, answer: dict[str, Any]) -> dict[str, Any]:
    """What an answer's signature covers: the request's signature and the whole answer."""
    return {"request": request_mac, "answer": {k: v for k, v in answer.items() if k != "mac"}}


def matches(expected: str, given: Any) -> bool:
    return isinstance(given, str) and hmac.compare_digest(expected, given)
