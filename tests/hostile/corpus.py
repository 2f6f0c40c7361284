"""Hostile-input corpus, generated at test time (nothing binary is committed).

``build_case(root, case)`` writes, under ``root``, a small samsara repository
(``.samsara/systemic-scars.yaml`` + ``changes/<FEATURE>/``) holding one well-formed report
(``good-scar.yaml``, two counted items) and one hostile input: a scar report, or the
registry, ``index.yaml``, ``iteration-log.yaml``, ``auto-decisions.md`` or
``pre-thinking.md``. ``build_all(root)`` writes every report case into one feature.

Each ``Case`` says what a reader must do with it:

* ``expect="failure"`` — listed as a parse failure (file + a reason matching ``reason``);
* ``expect="ok"`` — read normally (the file is *not* a parse failure);
* ``expect="accounted"`` — either, but never dropped silently and never a crash.

``heavy`` cases (alias bomb, 50 MB, deep nesting, FIFO, /dev/zero) can hang, blow memory or
kill a naive reader; tests run them only in an isolated child with a memory limit and a
timeout. Run this file as a script to write the corpus somewhere and look at it::

    python tests/hostile/corpus.py OUTDIR            # one repo per case under OUTDIR
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

FEATURE = "2026-01-01_hostile"
REGISTRY_ID = "known-systemic-fact"
GOOD_TEXTS = ("Good shortcut: retry count is hard-coded", "Good silent failure: naive timestamps")
SECRET = "SECRET-OUTSIDE-THE-REPOSITORY"  # text of files outside the repo: must never be shown
MB = 1024 * 1024

GOOD_REPORT = f"""\
task_id: task-1
completion_status: done_with_concerns
known_shortcuts:
  - description: "{GOOD_TEXTS[0]}"
    deferred_to_feature_iteration: true
  - systemic_ref: {REGISTRY_ID}
    note: "lands in the good report"
    status: resolved
    resolution: "fixed"
silent_failure_conditions:
  - "{GOOD_TEXTS[1]}"
assumptions_made:
  - assumption: "verified one"
    verified: true
    note: "tests/test_x.py::test_y"
debt_registered: true
debt_location: "src/app.py:1-9"
"""

REGISTRY = f"""\
entries:
  - id: {REGISTRY_ID}
    description: "A fact that holds across features"
    first_recorded: "2026-01-01"
    applies_when: "always"
"""

# A well-formed report with ``n`` plain items; used for encodings and line-end variants.
OK_REPORT = """\
task_id: task-ok
completion_status: done
known_shortcuts:
  - description: "Encoded shortcut one"
  - "Encoded shortcut two — 中文"
silent_failure_conditions: []
assumptions_made: []
debt_registered: true
debt_location: "src/enc.py:3"
"""
OK_REPORT_ITEMS = 2


def billion_laughs(levels: int = 9, width: int = 9) -> str:
    """A 'billion laughs' document fragment: ``levels`` anchors each aliasing the previous ``width`` times."""
    lines = ['a0: &a0 ["lol"]']
    for i in range(1, levels + 1):
        refs = ", ".join(f"*a{i - 1}" for _ in range(width))
        lines.append(f"a{i}: &a{i} [{refs}]")
    return "\n".join(lines) + "\n"


def deep(n: int) -> str:
    return "[" * n + "]" * n


@dataclass(frozen=True)
class Case:
    name: str
    target: str  # report | registry | index | iteration_log | auto_decisions | pre_thinking
    expect: str  # failure | ok | accounted
    write: Callable[[Path, Path], None] = field(repr=False)  # (path of the hostile file, repo root)
    reason: str | None = None  # regex (case-insensitive) the parse-failure reason must match
    heavy: bool = False
    note: str = ""

    @property
    def id(self) -> str:
        return f"{self.target}:{self.name}"


TARGET_PATHS = {
    "registry": ".samsara/systemic-scars.yaml",
    "index": f"changes/{FEATURE}/index.yaml",
    "iteration_log": f"changes/{FEATURE}/iteration-log.yaml",
    "auto_decisions": f"changes/{FEATURE}/auto-decisions.md",
    "pre_thinking": f"changes/{FEATURE}/pre-thinking.md",
}


def report_path(root: Path, name: str) -> Path:
    return root / "changes" / FEATURE / "scar-reports" / f"{name}-scar.yaml"


def target_path(root: Path, case: Case) -> Path:
    if case.target == "report":
        return report_path(root, case.name)
    return root / TARGET_PATHS[case.target]


# ---------------------------------------------------------------- writers


def _text(s: str) -> Callable[[Path, Path], None]:
    def w(p: Path, root: Path) -> None:
        p.write_text(s, encoding="utf-8")

    return w


def _bytes(b: bytes) -> Callable[[Path, Path], None]:
    def w(p: Path, root: Path) -> None:
        p.write_bytes(b)

    return w


def _report_with(body: str) -> str:
    return "task_id: task-h\ncompletion_status: done\n" + body + 'debt_registered: true\ndebt_location: "x.py:1"\n'


def _write_huge(p: Path, root: Path, size: int = 50 * MB) -> None:
    """A syntactically valid YAML document of ``size`` bytes (many plain items)."""
    line = '  - "' + "filler text of a huge report " * 3 + '"\n'
    head = "task_id: task-huge\ncompletion_status: done\nknown_shortcuts:\n"
    with open(p, "w", encoding="utf-8") as f:
        f.write(head)
        written = len(head)
        chunk = line * 1000
        while written < size:
            f.write(chunk)
            written += len(chunk)


def _write_big_scalar(p: Path, root: Path, size: int = 5 * MB) -> None:
    # Slightly under 5 MiB in total, so a 5 MiB cap keeps it readable.
    body = "x" * (size - 400)
    p.write_text(_report_with(f'known_shortcuts:\n  - description: "BIGSCALAR{body}"\n'), encoding="utf-8")


def _write_symlink_outside(p: Path, root: Path) -> None:
    outside = root.parent / f"outside-{root.name}"
    outside.mkdir(exist_ok=True)
    target = outside / "secret-scar.yaml"
    target.write_text(_report_with(f'known_shortcuts:\n  - "{SECRET}"\n'), encoding="utf-8")
    p.symlink_to(target)


def _write_symlink_abs_system(p: Path, root: Path) -> None:
    p.symlink_to("/etc/passwd")


def _write_symlink_devzero(p: Path, root: Path) -> None:
    p.symlink_to("/dev/zero")


def _write_symlink_loop(p: Path, root: Path) -> None:
    other = p.with_name("loop-b-scar.yaml")
    p.symlink_to(other.name)
    other.symlink_to(p.name)


def _write_symlink_dangling(p: Path, root: Path) -> None:
    p.symlink_to("does-not-exist.yaml")


def _write_fifo(p: Path, root: Path) -> None:
    os.mkfifo(p)


def _write_dir(p: Path, root: Path) -> None:
    p.mkdir()
    (p / "inner.yaml").write_text(OK_REPORT, encoding="utf-8")


def _write_unreadable(p: Path, root: Path) -> None:
    p.write_text(OK_REPORT, encoding="utf-8")
    p.chmod(0)


def _write_python_tag(p: Path, root: Path) -> None:
    marker = root / "PWNED"
    p.write_text(
        _report_with(
            "known_shortcuts:\n"
            f'  - !!python/object/apply:os.system ["touch {marker}"]\n'
            "  - !!python/object/new:builtins.dict {}\n"
        ),
        encoding="utf-8",
    )


def is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


# Reason patterns, loose on wording but specific on the cause.
R_YAML = r"yaml|pars|scan|expected|mapping|invalid|could not"
R_MAPPING = r"mapping|dict|not a|top.level|expected"
R_SIZE = r"size|large|bytes|MB|MiB|limit|cap"
R_ALIAS = r"alias|anchor|expan|nodes|size|bomb"
R_DEPTH = r"nest|depth|deep"
R_BINARY = r"utf|decod|encod|binary|byte|character|NUL|control|special"
R_TAG = r"tag|python|construct"
R_NOTFILE = r"regular|not a file|fifo|directory|device|special|pipe"
R_OUTSIDE = r"outside|symlink|link|escape"
R_LOOP = r"loop|symlink|link|resolve|not exist|no such file|missing|dangling|too many"
R_DUP = r"duplicate"
R_EMPTY = r"empty|mapping|no content|nothing"
R_SHAPE = r"shape|unrecogni|unknown|item|invalid|not a|type|expected"

REPORT_CASES: tuple[Case, ...] = (
    Case("not-yaml", "report", "failure", _text("task_id: [unclosed\n  known_shortcuts: : :\n\t- x\n"), R_YAML),
    Case("markdown", "report", "failure", _text("# Scar report\n\nJust prose, no structure.\n"), R_MAPPING),
    Case("top-list", "report", "failure", _text("- a\n- b\n"), R_MAPPING),
    Case("top-scalar", "report", "failure", _text("42\n"), R_MAPPING),
    Case("empty", "report", "failure", _text(""), R_EMPTY),
    Case("comment-only", "report", "failure", _text("# nothing here\n"), R_EMPTY),
    Case(
        "wrong-section-types",
        "report",
        "failure",
        _text(_report_with('known_shortcuts: "a string"\nsilent_failure_conditions: 42\nassumptions_made: {a: 1}\n')),
        r"known_shortcuts|silent_failure_conditions|assumptions_made",
    ),
    Case(
        "wrong-top-types",
        "report",
        "accounted",
        _text(
            'task_id: [1, 2]\ncompletion_status: {a: b}\nknown_shortcuts:\n  - "ok item"\n'
            'silent_failure_conditions: []\nassumptions_made: []\ndebt_registered: "yes"\n'
            'debt_location: [1]\nnarrative: 12\nresolved_items: "nope"\n'
        ),
        note="top-level scalars of the wrong type: a warning or a failure, never a crash",
    ),
    Case(
        "item-description-list",
        "report",
        "failure",
        _text(_report_with("known_shortcuts:\n  - description: [1, 2]\n")),
        R_SHAPE,
    ),
    Case(
        "item-field-types",
        "report",
        "accounted",
        _text(
            _report_with(
                'known_shortcuts:\n  - description: "x"\n    deferred_to_feature_iteration: "maybe"\n'
                "    status: [resolved]\n    resolution: {a: 1}\n"
                'assumptions_made:\n  - assumption: "y"\n    verified: "yes"\n    note: 7\n'
            )
        ),
    ),
    Case(
        "systemic-ref-list",
        "report",
        "failure",
        _text(_report_with("known_shortcuts:\n  - systemic_ref: [a, b]\n    note: 1\n")),
        R_SHAPE + "|systemic",
    ),
    Case(
        "gen3-wrong-types",
        "report",
        "failure",
        _text(_report_with("known_shortcuts:\n  - what: {a: 1}\n    bites_when: [x]\n    where: {}\n")),
        R_SHAPE + "|what",
    ),
    Case(
        "unknown-item-shapes",
        "report",
        "failure",
        _text(_report_with("known_shortcuts:\n  - {foo: bar}\n  - [nested, list]\n")),
        R_SHAPE,
    ),
    Case(
        "dangling-ref",
        "report",
        "failure",
        _text(_report_with('known_shortcuts:\n  - systemic_ref: no-such-systemic-id\n    note: "x"\n')),
        r"no-such-systemic-id|dangling|registry",
    ),
    Case(
        "alias-bomb",
        "report",
        "failure",
        _text(billion_laughs() + _report_with("known_shortcuts:\n  - description: *a9\n")),
        R_ALIAS,
        heavy=True,
    ),
    Case(
        "alias-bomb-unknown-key",
        "report",
        "failure",
        _text(
            _report_with('known_shortcuts:\n  - "fine"\n')
            + "bomb:\n"
            + "".join("  " + ln + "\n" for ln in billion_laughs().splitlines())
        ),
        R_ALIAS,
        heavy=True,
        note="the bomb sits in an unknown top-level key, kept by the reader and walked by --json",
    ),
    Case(
        "self-alias",
        "report",
        "accounted",
        _text(_report_with('known_shortcuts:\n  - "fine"\ncycle: &c [1, *c]\n')),
        heavy=True,
        note="a cyclic list in an unknown key",
    ),
    Case(
        "nesting-10000",
        "report",
        "failure",
        _text(_report_with("known_shortcuts: " + deep(10_000) + "\n")),
        R_DEPTH + "|" + R_YAML,
        heavy=True,
    ),
    Case(
        "nesting-30000",
        "report",
        "failure",
        _text(_report_with("known_shortcuts: " + deep(30_000) + "\n")),
        R_DEPTH + "|" + R_YAML,
        heavy=True,
        note="60 KB: PyYAML 6.0.3's C composer recursed into SIGSEGV on this",
    ),
    Case(
        "block-nesting-30000",
        "report",
        "failure",
        _text(_report_with("known_shortcuts:\n  " + "- " * 30_000 + "x\n")),
        R_DEPTH + "|" + R_YAML,
        heavy=True,
        note="block sequences nested on one line",
    ),
    Case(
        "nesting-900-unknown-key",
        "report",
        "accounted",
        _text(_report_with('known_shortcuts:\n  - "fine"\nextra: ' + deep(900) + "\n")),
        heavy=True,
        note="below libyaml's limit of 1000: loads, then must survive every later walk (--json)",
    ),
    Case("huge-50mb", "report", "failure", _write_huge, R_SIZE, heavy=True),
    Case("scalar-5mb", "report", "accounted", _write_big_scalar, note="one 5 MB scalar: display must truncate"),
    Case("binary", "report", "failure", _bytes(bytes(range(256)) * 64), R_BINARY),
    Case(
        "invalid-utf8",
        "report",
        "failure",
        _bytes(b'task_id: t\nknown_shortcuts:\n  - description: "caf\xe9 \xff\xfe"\n'),
        R_BINARY,
    ),
    Case("nul-bytes", "report", "failure", _bytes(b"task_id: t\x00\nknown_shortcuts: []\n"), R_BINARY),
    Case("utf16-bom", "report", "accounted", _bytes(OK_REPORT.encode("utf-16")), note="UTF-16 with BOM"),
    Case("utf8-bom", "report", "ok", _bytes(b"\xef\xbb\xbf" + OK_REPORT.encode())),
    Case("crlf", "report", "ok", _bytes(OK_REPORT.replace("\n", "\r\n").encode())),
    Case("cr-only", "report", "accounted", _bytes(OK_REPORT.replace("\n", "\r").encode())),
    Case("tab-indent", "report", "failure", _text('task_id: t\nknown_shortcuts:\n\t- "tabbed"\n'), R_YAML),
    Case("tab-in-values", "report", "ok", _text(OK_REPORT.replace("Encoded shortcut one", "Encoded\tshortcut\tone"))),
    Case(
        "duplicate-keys",
        "report",
        "failure",
        _text(_report_with('known_shortcuts:\n  - "first list"\nknown_shortcuts: []\n')),
        R_DUP,
    ),
    Case(
        "duplicate-keys-item",
        "report",
        "failure",
        _text(_report_with('known_shortcuts:\n  - description: "a"\n    description: "b"\n')),
        R_DUP,
    ),
    Case("python-object-tag", "report", "failure", _write_python_tag, R_TAG),
    Case(
        "unknown-tag", "report", "failure", _text(_report_with("known_shortcuts:\n  - !evil {description: x}\n")), R_TAG
    ),
    Case("two-documents", "report", "failure", _text(OK_REPORT + "---\n" + OK_REPORT), r"document|" + R_YAML),
    Case("symlink-outside", "report", "failure", _write_symlink_outside, R_OUTSIDE),
    Case("symlink-etc-passwd", "report", "failure", _write_symlink_abs_system, R_OUTSIDE),
    Case("symlink-dev-zero", "report", "failure", _write_symlink_devzero, R_OUTSIDE + "|" + R_NOTFILE, heavy=True),
    Case("loop-a", "report", "failure", _write_symlink_loop, R_LOOP),
    Case("symlink-dangling", "report", "failure", _write_symlink_dangling, R_LOOP),
    Case(
        "fifo",
        "report",
        "failure",
        _write_fifo,
        R_NOTFILE,
        heavy=True,
        note="opening a FIFO blocks a naive reader forever",
    ),
    Case("directory", "report", "failure", _write_dir, R_NOTFILE),
    (
        Case(
            "unreadable", "report", "accounted", _write_unreadable, note="mode 0000: root reads it anyway (documented)"
        )
        if is_root()
        else Case("unreadable", "report", "failure", _write_unreadable, r"permission|read|denied")
    ),
    Case("long-line", "report", "ok", _text(_report_with('known_shortcuts:\n  - "' + "long " * 40_000 + '"\n'))),
)

# Inputs tried against every other file the samsara reader opens.
_GENERIC: tuple[tuple[str, str, Callable[[Path, Path], None], bool], ...] = (
    ("not-yaml", "failure", _text("key: [unclosed\n  : : :\n\t- x\n"), False),
    ("top-list", "failure", _text("- a\n- b\n"), False),
    ("binary", "failure", _bytes(bytes(range(256)) * 64), False),
    ("invalid-utf8", "failure", _bytes(b'feature: "caf\xe9 \xff"\n'), False),
    ("alias-bomb", "failure", _text(billion_laughs()), True),
    ("nesting-10000", "failure", _text("a: " + deep(10_000) + "\n"), True),
    ("nesting-30000", "failure", _text("a: " + deep(30_000) + "\n"), True),
    ("huge-50mb", "failure", _write_huge, True),
    ("fifo", "failure", _write_fifo, True),
    ("directory", "failure", lambda p, root: p.mkdir(), False),
    ("symlink-outside", "failure", _write_symlink_outside, False),
    ("duplicate-keys", "failure", _text("feature: a\nfeature: b\nentries: []\nrounds: []\n"), False),
    ("python-object-tag", "failure", _write_python_tag, False),
)

# Markdown files: the YAML-specific cases do not apply (they are just text there).
_MARKDOWN_SKIP = {
    "not-yaml",
    "top-list",
    "alias-bomb",
    "nesting-10000",
    "nesting-30000",
    "duplicate-keys",
    "python-object-tag",
}

OTHER_CASES: tuple[Case, ...] = tuple(
    Case(
        name,
        target,
        "accounted" if (target in ("auto_decisions", "pre_thinking") and name not in ("huge-50mb",)) else expect,
        w,
        heavy=heavy,
    )
    for target in ("registry", "index", "iteration_log", "auto_decisions", "pre_thinking")
    for (name, expect, w, heavy) in _GENERIC
    if not (target in ("auto_decisions", "pre_thinking") and name in _MARKDOWN_SKIP)
) + (
    Case(
        "wrong-types",
        "iteration_log",
        "accounted",
        _text(
            'feature: [x]\nsignal_lost_initial: "many"\nbudget: 3\nrounds:\n  - 1\n  - "two"\n'
            '  - {round: "three", signal_lost_before: [1], triage_result: "x", decision: {a: 1}}\n'
        ),
    ),
    Case("wrong-types", "index", "accounted", _text('feature: [x]\nstatus: 12\ntasks: "none"\n')),
    Case("wrong-types", "registry", "accounted", _text("entries:\n  - 1\n  - {id: [x]}\n  - {description: no-id}\n")),
    Case(
        "forged-entries",
        "auto_decisions",
        "accounted",
        _text(
            "## Decision 1 - x\n## Decision 999999999999999999999 - iteration.x\n- decision_id: \x00\n- uncertainty:\n    level: [\n"
        ),
    ),
)

ALL_CASES: tuple[Case, ...] = REPORT_CASES + OTHER_CASES


# ---------------------------------------------------------------- builders


def build_base(root: Path, *, registry: bool = True) -> Path:
    """Write the well-formed part of the repository; return the feature directory."""
    feature = root / "changes" / FEATURE
    (feature / "scar-reports").mkdir(parents=True, exist_ok=True)
    if registry:
        (root / ".samsara").mkdir(exist_ok=True)
        (root / ".samsara" / "systemic-scars.yaml").write_text(REGISTRY, encoding="utf-8")
    (feature / "scar-reports" / "good-scar.yaml").write_text(GOOD_REPORT, encoding="utf-8")
    return feature


def build_case(root: Path, case: Case) -> Path:
    """A repository holding the good report and ``case``; returns the feature directory."""
    root.mkdir(parents=True, exist_ok=True)
    feature = build_base(root)
    path = target_path(root, case)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    case.write(path, root)
    return feature


def build_all(root: Path, *, heavy: bool = True) -> Path:
    """One feature holding every report case (heavy ones too unless ``heavy=False``)."""
    root.mkdir(parents=True, exist_ok=True)
    feature = build_base(root)
    for case in REPORT_CASES:
        if case.heavy and not heavy:
            continue
        case.write(report_path(root, case.name), root)
    return feature


def build_registry_missing(root: Path) -> Path:
    feature = build_base(root, registry=False)
    return feature


def restore_permissions(root: Path) -> None:
    """Give back read permission so tmp_path can be cleaned."""
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            p = Path(dirpath) / name
            try:
                st = p.lstat()
                if stat.S_ISREG(st.st_mode):
                    p.chmod(0o644)
            except OSError:
                pass


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    out = Path(argv[0])
    for case in ALL_CASES:
        d = out / case.id.replace(":", "--")
        build_case(d, case)
        print(f"{case.id:40} {case.expect:10} {'heavy' if case.heavy else ''}  {d}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
