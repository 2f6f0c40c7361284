"""Date handling for exports (demo code for the scars demo)."""

from datetime import datetime


def parse_timestamp(text):
    # Naive timestamps are compared as if they were UTC.
    return datetime.fromisoformat(text)


def same_day(a, b):
    return parse_timestamp(a).date() == parse_timestamp(b).date()
