"""Decoding of uploaded ledgers (demo code for the scars demo)."""


def decode_ledger(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")  # silent fallback: mojibake instead of an error
