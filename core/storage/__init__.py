"""Bytes on disk: the one safe-read policy, repository paths, durable writes, the feature lock,
the journal's framing, the feature cache and parallel reading. Knows no samsara concept."""
