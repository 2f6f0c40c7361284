"""The collector paused while the app starts (issue 31: its collections were ~20 ms of the first
screen): paused only when it ran, resumed only by the pause's owner, what the start allocated
frozen at the resume (a first collection over all of it was a stall after the first frame)."""

from __future__ import annotations

import gc

from scars.core.storage.parallel import pause_for_startup, resume_after_startup


def test_a_pause_is_resumed_once_with_what_it_allocated_frozen():
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    try:
        pause_for_startup()
        assert not gc.isenabled()
        pause_for_startup()  # the app's own on_load after the CLI's: the same pause
        kept = [[] for _ in range(1000)]  # what a start allocates
        resume_after_startup()
        assert gc.isenabled() and gc.get_freeze_count() >= frozen + len(kept)
        gc.disable()
        resume_after_startup()  # resumed already: nothing more
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()


def test_someone_else_s_pause_is_neither_taken_nor_ended():
    gc.disable()
    try:
        pause_for_startup()
        resume_after_startup()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_start_that_ends_without_a_first_frame_resumes_the_collector():
    from scars.core.storage.parallel import paused_for_startup

    try:
        with paused_for_startup():
            assert not gc.isenabled()
            raise RuntimeError("the app failed to start")
    except RuntimeError:
        pass
    assert gc.isenabled()
    gc.unfreeze()
