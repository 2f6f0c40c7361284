"""The Hypothesis profiles of the suite (loaded by tests/conftest.py before any test module).

- ``ci`` (the default, and whenever ``CI`` is set): derandomised (each test's examples are drawn
  from a seed made from the test itself, so every run of the suite tries the same examples and a
  failure in CI is a failure on every machine), no example database (nothing a previous run left
  on this machine changes what runs), no deadline and no ``too_slow`` health check (a loaded
  machine is not a failure: no test depends on timing).
- ``dev``: a random search on every run, each test's number of examples as in ``ci``; a failure
  prints the blob that reproduces it (``@reproduce_failure``), and the local database
  (``.hypothesis/``, ignored by git) replays it first on the next run.
- ``thorough``: the random search of ``dev`` with ten times the examples of every test (a few
  minutes more), to look for new examples.

``HYPOTHESIS_PROFILE=dev`` (or ``thorough``) selects one. A test that sets its own number of
examples gives it as ``examples(n)``: n in ``ci`` and ``dev``, n × 10 in ``thorough``. An example
a search finds is kept in its test as an explicit ``@example(...)``, so ``ci`` runs it every time.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_SCALE = {"ci": 1, "dev": 1, "thorough": 10}

_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", derandomize=True, database=None, print_blob=True, **_COMMON)
settings.register_profile("dev", derandomize=False, print_blob=True, **_COMMON)
settings.register_profile("thorough", derandomize=False, print_blob=True, max_examples=1000, **_COMMON)

PROFILE = "ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "ci")
if PROFILE not in _SCALE:
    raise SystemExit(f"HYPOTHESIS_PROFILE={PROFILE!r}: one of {', '.join(_SCALE)}")
settings.load_profile(PROFILE)


def examples(n: int) -> int:
    """A test's number of examples under the loaded profile (``n`` in ci and dev)."""
    return n * _SCALE[PROFILE]
