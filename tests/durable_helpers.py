"""A small samsara feature generated in tmp_path for the durable-layer tests."""

from __future__ import annotations

from pathlib import Path

REPORT = """task_id: task-1
completion_status: done_with_concerns
known_shortcuts:
  - description: "Retry count is hard-coded to 3"
  - description: "Only one writer at a time"
silent_failure_conditions:
  - description: "Timezone-naive timestamps compare as UTC"
assumptions_made:
  - assumption: "Exports are smaller than 1 GB"
    verified: false
    note: "a larger export would be truncated"
debt_registered: true
debt_location: "src/export.py"
"""

EXTRA = """task_id: task-2
completion_status: done
known_shortcuts:
  - description: "{text}"
silent_failure_conditions: []
assumptions_made: []
debt_registered: true
debt_location: "src/other.py"
"""


def make_feature(root: Path, *, auto: bool = False, name: str = "2026-07-10_csv-export") -> Path:
    feature = root / "changes" / name
    (feature / "scar-reports").mkdir(parents=True)
    (feature / "scar-reports" / "task-1-scar.yaml").write_text(REPORT, encoding="utf-8")
    (feature / "index.yaml").write_text("tasks:\n  - id: task-1\n    status: done\n", encoding="utf-8")
    if auto:
        (feature / "pre-thinking.md").write_text(
            "# Pre-thinking\n\n## Evaluation Contract\n\n**Primary evaluator:** tests\n\nExecution mode: auto\n",
            encoding="utf-8",
        )
    return feature


def add_item(feature: Path, text: str, n: int = 2) -> None:
    (feature / "scar-reports" / f"task-{n}-scar.yaml").write_text(EXTRA.format(text=text), encoding="utf-8")


ACCEPT = {"re_review_signal": "a second process starts writing exports", "owner": "export team", "rationale": "single-process deployment today"}


# ------------------------------------------------------------------ what the durable layer does


class SyscallTrace:
    """The durable layer's file-system calls, in order, with the paths they act on.

    Installed over ``scars.core.storage.durable.os`` (a proxy: every other attribute is the real
    ``os``). It records ``open`` (and whether the call created the file), ``fsync`` (of a
    file or of a directory, by path), ``replace`` and ``close``; :meth:`missing_dir_fsyncs`
    then names every rename or file creation that no later fsync of its directory made
    durable. ``hook(name, args)`` sees every ``open``, ``fsync``, ``replace``, ``write``,
    ``ftruncate`` and ``mkdir`` before the real call and may raise to inject a fault
    (tests/hostile/test_hostile_faults.py's ``Injector``).
    """

    def __init__(self, monkeypatch, hook=None):
        import os as real_os

        from scars.core.storage import durable

        self.events: list[tuple] = []
        self._fds: dict[int, str] = {}
        self._hook = hook
        trace = self

        class Proxy:
            def __getattr__(_self, name):
                return getattr(real_os, name)

            def open(_self, path, flags, *a, **k):
                full = real_os.path.realpath(path)
                existed = real_os.path.lexists(full)
                trace._call("open", (path, flags) + a)
                fd = real_os.open(path, flags, *a, **k)
                trace._fds[fd] = full
                trace.events.append(("open", full, bool(flags & real_os.O_CREAT) and not existed))
                return fd

            def fsync(_self, fd):
                trace._call("fsync", (fd,))
                real_os.fsync(fd)
                path = trace._fds.get(fd) or _fd_path(fd)
                trace.events.append(("fsync", path, _is_dir(fd)))

            def replace(_self, src, dst, *a, **k):
                trace._call("replace", (src, dst) + a)
                real_os.replace(src, dst, *a, **k)
                trace.events.append(("replace", real_os.path.realpath(dst), None))

            def close(_self, fd):
                trace._fds.pop(fd, None)
                real_os.close(fd)

            def write(_self, fd, data):
                trace._call("write", (fd, data))
                return real_os.write(fd, data)

            def ftruncate(_self, fd, length):
                trace._call("ftruncate", (fd, length))
                return real_os.ftruncate(fd, length)

            def mkdir(_self, path, *a, **k):
                trace._call("mkdir", (path,) + a)
                return real_os.mkdir(path, *a, **k)

        self.proxy = Proxy()
        monkeypatch.setattr(durable, "os", self.proxy)

    def _call(self, name: str, args: tuple) -> None:
        if self._hook is not None:
            self._hook(name, args)

    def missing_dir_fsyncs(self) -> list[str]:
        """Renames and creations not followed by an fsync of their directory (empty: durable)."""
        import os as real_os

        missing = []
        for i, (kind, path, flag) in enumerate(self.events):
            if kind == "replace" or (kind == "open" and flag):
                directory = real_os.path.dirname(path)
                if not any(k == "fsync" and p == directory and is_dir for k, p, is_dir in self.events[i + 1:]):
                    missing.append(f"{'rename to' if kind == 'replace' else 'creation of'} {path}: "
                                   f"no fsync of {directory} after it")
        return missing

    def dir_fsyncs(self) -> list[str]:
        return [p for k, p, is_dir in self.events if k == "fsync" and is_dir]


def _is_dir(fd: int) -> bool:
    import os as real_os
    import stat as real_stat

    return real_stat.S_ISDIR(real_os.fstat(fd).st_mode)


def _fd_path(fd: int) -> str:
    import os as real_os

    try:
        return real_os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return f"<fd {fd}>"
