#!/usr/bin/env python3
"""Deterministic generator of synthetic samsara repositories for the benchmarks.

    python bench/generate.py SIZE OUTDIR [--seed N]

SIZE is one of:

* ``small`` — one feature, 50 scar reports, 500 items;
* ``large`` — one feature, 5,000 scar reports, 50,000 items;
* ``wide``  — 1,000 features of 10 reports each (5 items per report: 50,000 items).

OUTDIR becomes a repository root: ``.samsara/systemic-scars.yaml`` (a registry) and
``changes/<date>_<feature>/`` feature directories, each with ``scar-reports/*-scar.yaml``,
``index.yaml``, ``pre-thinking.md`` (with an Evaluation Contract) and, for most features,
``iteration-log.yaml`` with earlier rounds. Reports mix every item form and era of
formats.md §1: Gen 1 strings, Gen 2 dicts (deferred, resolved in place), ``systemic_ref``
items, Gen 3 slots, era-D lifecycle items (open / resolved / accepted / deferred / blocked),
assumptions verified / unverified / with ``verified`` missing, legacy ``resolved_items``
lists; with comments, folded and literal block scalars, CJK text, fix-round reports with
extra top-level keys, and a few reports that must become parse failures (a markdown file, a
YAML syntax error, a dangling ``systemic_ref``).

The same seed gives byte-identical output. Next to the repository the generator writes
``bench-manifest.json``: the figures a correct reader must compute from these files
(``signal_lost``, per-category counts, parse failures, dangling refs, remaining and
resolved item counts, literal cross-task patterns), computed here from the generator's own
knowledge of what it wrote, never by reading the files back.

Only the standard library is used, so the generator runs before scars is installed.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

GENERATOR_VERSION = 1
MANIFEST = "bench-manifest.json"

SIZES: dict[str, dict[str, int]] = {
    "small": {"features": 1, "reports": 50, "items": 10},
    "large": {"features": 1, "reports": 5000, "items": 10},
    "wide": {"features": 1000, "reports": 10, "items": 5},
}

CATEGORY_OF_SECTION = {
    "known_shortcuts": "known_shortcuts",
    "silent_failure_conditions": "silent_failure_conditions",
    "assumptions_made": "unverified_assumptions",
}

# --- vocabulary -------------------------------------------------------------------------

# Sentences are built from several lists and an identifier so that texts are about as varied
# as real scar descriptions (most words are rare; a few recur across many items).
_ADJ = [
    "nightly",
    "legacy",
    "async",
    "shared",
    "regional",
    "primary",
    "fallback",
    "batched",
    "cached",
    "streaming",
    "tenant-scoped",
    "retrying",
    "lazy",
    "optimistic",
    "external",
    "internal",
    "bulk",
    "incremental",
    "signed",
    "compressed",
    "paginated",
    "sharded",
    "versioned",
    "pooled",
    "background",
    "scheduled",
    "idempotent",
    "throttled",
]
_NOUNS = [
    "retry loop",
    "CSV exporter",
    "cache invalidator",
    "config loader",
    "token refresher",
    "batch scheduler",
    "webhook dispatcher",
    "migration runner",
    "rate limiter",
    "search indexer",
    "upload handler",
    "audit logger",
    "permission check",
    "report renderer",
    "sync worker",
    "payment reconciler",
    "feature-flag client",
    "notification fan-out",
    "session store",
    "invoice builder",
    "geo resolver",
    "thumbnail pipeline",
    "ledger writer",
    "quota tracker",
    "schema validator",
    "event replayer",
    "lock manager",
    "diff engine",
    "archive pruner",
    "mail relay",
    "price calculator",
    "consent recorder",
    "backup verifier",
    "DNS prober",
    "queue consumer",
    "metrics exporter",
    "template engine",
    "tax estimator",
]
_VERBS = [
    "silently drops",
    "double counts",
    "never retries",
    "caches forever",
    "truncates",
    "ignores",
    "reorders",
    "swallows the error of",
    "compares as UTC",
    "hard-codes",
    "skips validation of",
    "holds a lock across",
    "re-reads on every call",
    "leaks",
    "overwrites",
    "rounds down",
    "logs in clear text",
    "mis-sorts",
    "duplicates",
    "serialises without escaping",
    "times out on",
    "loses the ordering of",
]
_OBJECTS = [
    "empty rows",
    "non-ASCII file names",
    "timezone-naive timestamps",
    "the last page",
    "duplicate keys",
    "partial writes",
    "expired credentials",
    "negative amounts",
    "concurrent writers",
    "a missing trailing newline",
    "records above 1 MiB",
    "a slow upstream",
    "half-open connections",
    "retries after a 429",
    "leap days",
    "soft-deleted rows",
    "unicode normalisation forms",
    "mixed line endings",
    "zero quantities",
    "currency rounding",
    "stale ETags",
    "nested transactions",
    "symlinked paths",
    "oversized headers",
    "out-of-order events",
    "duplicate webhooks",
    "null foreign keys",
]
_IDENT = [
    "parse",
    "load",
    "flush",
    "merge",
    "split",
    "apply",
    "emit",
    "fetch",
    "store",
    "resolve",
    "render",
    "encode",
    "decode",
    "match",
    "index",
    "prune",
    "retry",
    "sign",
    "invoice",
    "ledger",
    "quota",
    "tenant",
    "batch",
    "page",
    "token",
    "event",
    "row",
    "header",
    "slot",
    "window",
    "cursor",
    "offset",
    "bucket",
    "shard",
    "lease",
    "chunk",
]
_CONDITIONS = [
    "two writers run at once",
    "the clock jumps backwards",
    "the disk fills up",
    "the upstream returns 503 twice",
    "a user uploads a 2 GB file",
    "the queue backs up",
    "a locale without UTF-8 is set",
    "the nightly job overlaps the backup",
]
_CJK = [
    "在高並發下重試計數器可能溢出",
    "舊格式的 expiry_date 條目沒有遷移指引",
    "測試只驗證文件存在，無法證明執行時遵守",
    "缓存键没有包含用户区域设置",
    "跨任务的同一问题只能靠字面比对发现",
    "並列書き込み時にログ行が混ざる可能性がある",
]
_MODULES = [
    "src/export",
    "src/sync",
    "src/auth",
    "src/billing",
    "src/search",
    "lib/queue",
    "skills/implement",
    "agents/reviewer",
    "src/storage",
    "src/api",
]
_OWNERS = ["repo maintainer", "on-call engineer", "billing team", "platform team", "the task author", "data steward"]


@dataclass
class _Report:
    file: str  # relative to the feature directory
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CATEGORY_OF_SECTION.values(), 0))
    remaining: int = 0  # items that are not resolved (counted when the report parses)
    resolved: int = 0  # items resolved in place (Gen 2 / Gen 3 / era D)
    legacy_resolved_entries: int = 0  # resolved_items entries (never items)
    verified_assumptions: int = 0
    missing_verified: int = 0
    entries: int = 0  # entries in the three sections
    failure: str | None = None  # "markdown" | "syntax" | "dangling"
    dangling: list[str] = field(default_factory=list)
    pattern_keys: list[tuple[str, str]] = field(default_factory=list)  # of remaining items


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _q(text: str) -> str:
    """A YAML double-quoted scalar."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class _Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.serial = 0
        self.registry_ids = [f"systemic-fact-{i:02d}" for i in range(1, 31)]
        # Texts that recur across reports: the literal cross-task patterns.
        self.common = [self._sentence(unique=False) for _ in range(40)]

    # --- text -------------------------------------------------------------------------

    def _sentence(self, unique: bool = True) -> str:
        r = self.rng
        text = (
            f"The {r.choice(_ADJ)} {r.choice(_NOUNS)} {r.choice(_VERBS)} {r.choice(_OBJECTS)}"
            f" in {r.choice(_IDENT)}_{r.choice(_IDENT)}_{r.choice(_IDENT)}()"
        )
        if r.random() < 0.5:
            text += f" when {r.choice(_CONDITIONS)}"
        if unique:
            self.serial += 1
            text += f" ({r.choice(_MODULES)}/m{self.serial}.py:{r.randint(1, 900)})"
        if r.random() < 0.12:
            text += f"；{r.choice(_CJK)}"
        return text

    def _long(self) -> str:
        """A multi-sentence text for block scalars."""
        parts = [self._sentence() + "."]
        for _ in range(self.rng.randint(1, 3)):
            parts.append(self._sentence(unique=False) + ".")
        return " ".join(parts)

    def text(self) -> tuple[str, str]:
        """(text, style) where style is plain | folded | literal."""
        r = self.rng.random()
        if r < 0.03:
            return self.rng.choice(self.common), "plain"
        if r < 0.25:
            return self._long(), "folded"
        if r < 0.30:
            return self._long(), "literal"
        return self._sentence(), "plain"

    # --- YAML pieces ------------------------------------------------------------------

    @staticmethod
    def _wrap(text: str, width: int = 72) -> list[str]:
        words, lines, cur = text.split(" "), [], ""
        for w in words:
            if cur and len(cur) + 1 + len(w) > width:
                lines.append(cur)
                cur = w
            else:
                cur = f"{cur} {w}" if cur else w
        if cur:
            lines.append(cur)
        return lines

    def scalar(self, key_prefix: str, text: str, style: str, indent: int) -> list[str]:
        """Lines for `<key_prefix>text` in the given style at the given indent of continuation."""
        pad = " " * indent
        if style == "folded":
            return [f"{key_prefix}>-"] + [pad + ln for ln in self._wrap(text)]
        if style == "literal":
            # The literal text is the wrapped lines joined by newlines (what a reader gets).
            return [f"{key_prefix}|-"] + [pad + ln for ln in self._wrap(text)]
        return [f"{key_prefix}{_q(text)}"]

    # --- reports ----------------------------------------------------------------------

    def report(
        self, file: str, task_id: str, n_items: int, fix_round: int | None, failure: str | None
    ) -> tuple[str, _Report]:
        r = self.rng
        rep = _Report(file=file, failure=failure)
        if failure == "markdown":
            # Markdown written where YAML belongs: n bullet points, none of them items.
            rep.entries = n_items
            bullets = "".join(f"- {self._sentence()}\n" for _ in range(n_items))
            body = (
                f"# Scar report for {task_id}\n\n"
                "Written as markdown by mistake; the reader must list it as a parse failure.\n\n" + bullets
            )
            return body, rep
        if failure == "syntax":
            # A complete report whose last line breaks the YAML: every item is uncounted.
            body, rep = self.report(file, task_id, n_items, fix_round, None)
            rep.failure = "syntax"
            return body + "  unclosed_flow: [true, false\n", rep

        era = r.choices("ABCD", weights=(2, 4, 2, 2))[0]
        n_assume = r.randint(1, 3) if n_items >= 4 else 1
        n_short = (n_items - n_assume + 1) // 2
        n_silent = n_items - n_assume - n_short
        out: list[str] = []
        if r.random() < 0.3:
            out.append(f"# Scar report — {task_id} (era {era} writer)")
            out.append("# Items below are what a future reader would act on (write filter).")
        out.append(f"task_id: {task_id}")
        status = r.choice(["done", "done_with_concerns", "done_with_concerns", "blocked"])
        out.append(f"completion_status: {status}")
        if era == "D":
            self._scar_n = 0
        dangling_left = 1 if failure == "dangling" else 0
        any_debt = False
        for section, n in (("known_shortcuts", n_short), ("silent_failure_conditions", n_silent)):
            if n == 0:
                out.append(f"{section}: []")
                continue
            out.append("")
            out.append(f"{section}:")
            for _ in range(n):
                force_dangling = dangling_left > 0 and r.random() < 0.5
                if force_dangling or (dangling_left and section == "silent_failure_conditions"):
                    dangling_left = 0
                    ref = f"retired-fact-{r.randint(100, 999)}"
                    rep.dangling.append(ref)
                    out.append(f"  - systemic_ref: {ref}")
                    out.append(f"    note: {_q('lands in ' + r.choice(_MODULES) + ' step ' + str(r.randint(1, 9)))}")
                    rep.entries += 1
                    rep.remaining += 1
                    rep.counts[CATEGORY_OF_SECTION[section]] += 1
                    rep.pattern_keys.append(("ref", ref))
                    any_debt = True
                    continue
                any_debt = True
                self._item(out, rep, section, era)
            if r.random() < 0.15:
                out.append("  # end of section: reviewed by both reviewers")
        out.append("")
        out.append("assumptions_made:")
        for _ in range(n_assume):
            self._assumption(out, rep, era)
        out.append(f"debt_registered: {'true' if any_debt else 'false'}")
        if any_debt:
            out.append(f"debt_location: {_q(r.choice(_MODULES) + '.py:' + str(r.randint(1, 400)))}")
        else:
            out.append("debt_location: null")
        if era in "CD":
            out.append("structural_decisions: []")
        if era == "A" and r.random() < 0.6:
            out.append("resolved_items:")
            for _ in range(r.randint(1, 2)):
                rep.legacy_resolved_entries += 1
                sec = r.choice(list(CATEGORY_OF_SECTION))
                out.append(f"  - original_section: {_q(sec)}")
                out.extend(self.scalar("    original_description: ", self._sentence(), "folded", 6))
                out.append(f"    resolution: {_q('fixed by ' + self._sentence())}")
        if r.random() < 0.2:
            out.extend(self.scalar("narrative: ", self._long(), "literal", 2))
        if fix_round is not None:
            out.append("budget_spent:")
            out.append(f"  validation_runs: {r.randint(1, 5)}")
            out.append(f"  reviewer_retries_consumed: {r.randint(0, 2)}")
            out.append("evidence_gained:")
            out.append(f"  - {_q('death test for ' + self._sentence())}")
            out.append("residual_risk: []")
        return "\n".join(out) + "\n", rep

    def _item(self, out: list[str], rep: _Report, section: str, era: str) -> None:
        r = self.rng
        cat = CATEGORY_OF_SECTION[section]
        rep.entries += 1
        text, style = self.text()
        resolved = False
        key: tuple[str, str] = ("text", _norm(text))
        if era == "A":
            form = r.choices(["gen1", "gen2"], weights=(5, 5))[0]
        elif era == "B":
            form = r.choices(["gen1", "gen2", "ref"], weights=(1, 8, 1))[0]
        elif era == "C":
            form = r.choices(["gen3", "ref"], weights=(19, 1))[0]
        else:
            form = "lifecycle"

        if form == "gen1":
            if style != "plain":
                style = "plain"
            line = f"  - {_q(text)}"
            if r.random() < 0.2:
                line += "        # Gen 1 still legal on read"
            out.append(line)
        elif form == "gen2":
            out.extend(self.scalar("  - description: ", text, style, 6))
            roll = r.random()
            if roll < 0.2:
                out.append("    deferred_to_feature_iteration: true")
            elif roll < 0.3:
                out.append("    deferred_to_feature_iteration: false")
            elif era == "B" and roll < 0.5:
                out.append("    status: resolved")
                out.append(f"    resolution: {_q('fixed in place: ' + self._sentence())}")
                resolved = True
        elif form == "ref":
            ref = r.choice(self.registry_ids[:8] if r.random() < 0.5 else self.registry_ids)
            out.append(f"  - systemic_ref: {ref}")
            out.append(f"    note: {_q('lands in ' + r.choice(_MODULES) + ' step ' + str(r.randint(1, 9)))}")
            key = ("ref", ref)
        elif form == "gen3":
            out.extend(self.scalar("  - what: ", text, style, 6))
            out.append(f"    bites_when: {_q(r.choice(_CONDITIONS))}")
            out.append(f"    where: {_q(r.choice(_MODULES) + '.py:' + str(r.randint(1, 400)))}")
            roll = r.random()
            if roll < 0.2:
                out.append("    deferred_to_feature_iteration: true")
            elif roll < 0.4:
                out.append("    status: resolved")
                out.append(f"    resolution: {_q('fixed in place: ' + self._sentence())}")
                resolved = True
            if r.random() < 0.3:
                out.append(f"    accepted_because: {_q('cost of a fix exceeds the risk today')}")
        else:  # era D lifecycle
            self._scar_n += 1
            out.append(f"  - scar_id: SC-{self._scar_n}")
            out.extend(self.scalar("    what: ", text, style, 6))
            out.append(f"    bites_when: {_q(r.choice(_CONDITIONS))}")
            out.append(f"    where: {_q(r.choice(_MODULES) + '.py:' + str(r.randint(1, 400)))}")
            status = r.choices(["open", "resolved", "accepted", "deferred", "blocked"], weights=(40, 20, 15, 15, 10))[0]
            out.append(f"    status: {status}")
            out.extend(self._iteration_map(status))
            resolved = status == "resolved"

        if resolved:
            rep.resolved += 1
        else:
            rep.remaining += 1
            rep.counts[cat] += 1
            rep.pattern_keys.append(key)

    def _iteration_map(self, status: str, indent: int = 4) -> list[str]:
        r = self.rng
        pad = " " * indent
        if status == "open" and r.random() < 0.6:
            return [f"{pad}iteration: null"]
        if status == "resolved":
            if r.random() < 0.5:
                return [f"{pad}resolution: {_q('fixed in place: ' + self._sentence())}", f"{pad}iteration: null"]
            action = "fixed"
        else:
            action = {"open": "fix", "accepted": "accept", "deferred": "defer", "blocked": "block"}[status]
        lines = [f"{pad}iteration:", f"{pad}  round: {r.randint(1, 3)}", f"{pad}  action: {action}"]
        if action == "accept":
            lines += [
                f"{pad}  rationale: {_q('risk is bounded by ' + r.choice(_OBJECTS))}",
                f"{pad}  re_review_signal: {_q('when ' + r.choice(_CONDITIONS))}",
                f"{pad}  owner: {_q(r.choice(_OWNERS))}",
            ]
        elif action == "defer":
            lines += [
                f"{pad}  target: {_q('feature ' + r.choice(_MODULES))}",
                f"{pad}  resume_when: {_q('after ' + r.choice(_CONDITIONS))}",
                f"{pad}  owner: {_q(r.choice(_OWNERS))}",
            ]
        elif action == "block":
            lines += [
                f"{pad}  blocker: {_q('waiting on ' + r.choice(_OWNERS))}",
                f"{pad}  owner: {_q(r.choice(_OWNERS))}",
            ]
        lines += [f"{pad}  evidence_refs:", f"{pad}    - {_q('tests/test_' + str(r.randint(1, 99)) + '.py')}"]
        return lines

    def _assumption(self, out: list[str], rep: _Report, era: str) -> None:
        r = self.rng
        rep.entries += 1
        text, style = self.text()
        out.extend(self.scalar("  - assumption: ", text, style, 6))
        roll = r.random()
        if roll < 0.4:
            out.append("    verified: true")
            out.append(f"    note: {_q('tests/test_' + str(r.randint(1, 99)) + '.py::test_case')}")
            rep.verified_assumptions += 1
            return
        if roll < 0.45:
            out.append(f"    note: {_q('nobody checked; ' + r.choice(_CONDITIONS))}")  # verified missing
            rep.missing_verified += 1
        else:
            out.append("    verified: false  # could matter")
            out.append(f"    note: {_q('consequence: ' + self._sentence(unique=False))}")
            if r.random() < 0.3:
                out.append("    deferred_to_feature_iteration: true")
        if era == "D":
            self._scar_n += 1
            status = r.choice(["open", "accepted", "deferred"])
            out.append(f"    scar_id: SC-{self._scar_n}")
            out.append(f"    status: {status}")
            out.extend(self._iteration_map(status))
        rep.remaining += 1
        rep.counts["unverified_assumptions"] += 1
        rep.pattern_keys.append(("text", _norm(text)))

    # --- feature files ----------------------------------------------------------------

    def index_yaml(self, feature: str, tasks: list[tuple[str, int]]) -> str:
        out = [f"feature: {feature}", "status: in_progress  # pending | in_progress | done | blocked", "", "tasks:"]
        for tid, scars in tasks:
            out.append(f"  - id: {tid}")
            out.append(f"    title: {_q(self._sentence(unique=False))}")
            out.append(f"    status: {self.rng.choice(['done', 'done_with_concerns', 'done'])}")
            out.append(f"    scar_count: {scars}")
            out.append(f"    unresolved_assumptions: {self.rng.randint(0, 2)}")
            out.append("    depends_on: []")
        return "\n".join(out) + "\n"

    def pre_thinking(self, feature: str) -> str:
        return (
            f"# Pre-thinking: {feature}\n\n## Session: 2026-03-01\n\n"
            "Execution mode: human-in-the-loop\n\n"
            "## Step A — Design and Gap Map\n\n"
            f"{self._long()}\n\n"
            "## Evaluation Contract\n\n"
            "**Primary evaluator:** the pytest suite under tests/\n"
            "**Agent can perform it by:** `pytest -q`\n"
            "**Pass signal:** every test passes\n"
            "**Fail signal:** any test fails or errors\n"
            "**Feedback loop:** run after each fix; failures name the test\n"
            "**Out of scope validation:** none\n\n"
            "## Step C — Commitment\n\n"
            "**Date:** 2026-03-01\n**Decision:** Proceed\n**Accepted gaps:** none\n**Notes:** synthetic\n"
        )

    def iteration_log(self, feature: str, signal_now: int, era_a: bool) -> str:
        r = self.rng
        s0 = signal_now + r.randint(3, 9)
        s1 = signal_now + r.randint(0, s0 - signal_now)
        out = [
            f"# Iteration Log — {feature} (synthetic, generated by bench/generate.py)",
            "#",
            "# 第一輪 triage 的紀錄；rounds below are earlier rounds.",
            "",
            f"feature: {_q(feature)}",
            f"signal_lost_initial: {s0}  # aggregated at entry",
            "",
        ]
        if not era_a:
            out += ["budget:", "  max_rounds: 3", "  reviewer_retry_limit: 2", ""]
        out.append("rounds:")
        for rnd, (before, after) in enumerate(((s0, s1), (s1, signal_now)), start=1):
            out.append(f"  - round: {rnd}")
            out.append(f"    signal_lost_before: {before}")
            if not era_a:
                stagn = 0 if rnd == 1 or after < before else 1
                out += [
                    "    budget_context:",
                    f"      remaining_rounds_at_start: {3 - rnd}",
                    f"      stagnation_count_at_start: {stagn}",
                    f"      net_rot_previous_round: {0 if rnd == 1 else r.randint(-2, 1)}",
                    f"      strategy_hint: {'explore' if rnd == 1 else 'converge'}",
                ]
            out.append(f"    items_triaged: {before}")
            out.append("    triage_result:")
            out.append("      fix:")
            for _ in range(max(1, before - after)):
                out.append(f"        - {_q(self._sentence())}")
            out.append("      accept:")
            out.extend(self.scalar("        - description: ", self._long(), "folded", 12))
            if era_a:
                out.append('          expiry_date: "2026-09-30"')
            else:
                out.append(f"          re_review_signal: {_q('when ' + r.choice(_CONDITIONS))}")
                out.append(f"          owner: {_q(r.choice(_OWNERS))}")
            out.append(f"          rationale: {_q('bounded by ' + r.choice(_OBJECTS))}")
            out.append(f"      defer: [{_q(self._sentence())}]")
            out.append(f"    fixes_applied: {max(1, before - after)}")
            out.append(f"    fixes_scar_count: {r.randint(0, 1)}  # new scar items from the fixes")
            if not era_a:
                out.append(
                    "    budget_spent: {implementer_dispatches: 2, reviewer_dispatches: 4, "
                    "reviewer_retries: 0, validation_runs: 3}"
                )
                out.append(f"    evidence_gained: [{_q('death test ' + str(r.randint(1, 99)))}]")
                out.append("    residual_risk: []")
            out.append(f"    signal_lost_after: {after}")
            out.append("    decision: continue")
            out.append(f"    decision_reason: {_q('round ' + str(rnd) + ' made progress; user chose to continue')}")
        return "\n".join(out) + "\n"

    def registry(self) -> str:
        out = [
            "# Systemic Scar Registry (synthetic)",
            "#",
            "# Cross-feature structural facts referenced by `systemic_ref: <id>`.",
            "",
            "entries:",
        ]
        for rid in self.registry_ids:
            out.append(f"  - id: {rid}")
            out.extend(self.scalar("    description: ", self._long(), "folded", 6))
            out.append('    first_recorded: "2026-02-01"')
            out.append(f"    applies_when: {_q('a task touches ' + self.rng.choice(_MODULES))}")
            out.append("")
        return "\n".join(out)


def _failure_plan(size: str, n_features: int, n_reports: int) -> dict[tuple[int, int], str]:
    """Which (feature, report) get a parse failure, fixed per size."""
    if size == "small":
        return {(0, 17): "markdown", (0, 29): "dangling", (0, 41): "syntax"}
    if size == "large":
        plan: dict[tuple[int, int], str] = {}
        for k, kind in enumerate(["markdown", "dangling", "syntax"] * 3):
            plan[(0, 500 + k * 509)] = kind
        return plan
    plan = {}
    for f in range(0, n_features, 50):
        plan[(f, 3)] = "dangling"
    for f in range(25, n_features, 100):
        plan[(f, 7)] = "markdown"
    return plan


def generate(size: str, outdir: Path | str, seed: int = 0) -> dict:
    """Write the repository for ``size`` into ``outdir``; return the manifest (also written)."""
    if size not in SIZES:
        raise ValueError(f"unknown size {size!r}: choose one of {', '.join(SIZES)}")
    spec = SIZES[size]
    out = Path(outdir)
    changes = out / "changes"
    if changes.exists() and any(changes.iterdir()):
        raise FileExistsError(f"{out} already holds a changes/ directory; give an empty OUTDIR")
    g = _Gen(seed)
    (out / ".samsara").mkdir(parents=True, exist_ok=True)
    (out / ".samsara" / "systemic-scars.yaml").write_text(g.registry(), encoding="utf-8")
    plan = _failure_plan(size, spec["features"], spec["reports"])

    features = []
    for fi in range(spec["features"]):
        name = f"bench-{size}" if spec["features"] == 1 else f"bench-{size}-{fi + 1:04d}"
        fdir_rel = f"changes/2026-03-01_{name}"
        fdir = out / fdir_rel
        (fdir / "scar-reports").mkdir(parents=True)
        reports: list[_Report] = []
        tasks: list[tuple[str, int]] = []
        fix_round = 0
        for ri in range(spec["reports"]):
            if ri % 10 == 9:
                fix_round += 1
                fname = f"scar-reports/iteration-fix-{fix_round}-scar.yaml"
                tid = f"iteration-r{fix_round}-fix"
                fr: int | None = fix_round
            else:
                tnum = ri + 1 - fix_round
                fname = f"scar-reports/task-{tnum}-scar.yaml"
                tid = f"task-{tnum}"
                fr = None
            body, rep = g.report(fname, tid, spec["items"], fr, plan.get((fi, ri)))
            (fdir / fname).write_text(body, encoding="utf-8")
            reports.append(rep)
            if fr is None:
                tasks.append((tid, rep.remaining))
        (fdir / "index.yaml").write_text(g.index_yaml(name, tasks), encoding="utf-8")
        (fdir / "pre-thinking.md").write_text(g.pre_thinking(name), encoding="utf-8")
        figures = _figures(reports)
        has_log = size != "wide" or fi % 3 != 2
        if has_log:
            log = g.iteration_log(name, figures["signal_lost"], era_a=(size == "wide" and fi % 3 == 1))
            (fdir / "iteration-log.yaml").write_text(log, encoding="utf-8")
        figures.update(path=fdir_rel, name=name, iteration_log=has_log)
        features.append(figures)

    totals = {
        k: sum(f[k] for f in features)
        for k in (
            "reports",
            "entries",
            "signal_lost",
            "remaining_items",
            "uncounted_items",
            "resolved_in_place",
            "verified_assumptions",
            "missing_verified",
        )
    }
    totals["parse_failures"] = sum(len(f["parse_failures"]) for f in features)
    totals["dangling_refs"] = sum(len(f["dangling_refs"]) for f in features)
    totals["counts"] = {c: sum(f["counts"][c] for f in features) for c in CATEGORY_OF_SECTION.values()}
    manifest = {
        "generator_version": GENERATOR_VERSION,
        "size": size,
        "seed": seed,
        "features": features,
        "totals": totals,
    }
    (out / MANIFEST).write_text(
        json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return manifest


def _figures(reports: list[_Report]) -> dict:
    counts = dict.fromkeys(CATEGORY_OF_SECTION.values(), 0)
    remaining = uncounted = resolved = verified = missing = entries = 0
    failures: list[str] = []
    dangling: list[list[str]] = []
    seen: dict[tuple[str, str], set[str]] = {}
    for rep in reports:
        entries += rep.entries
        if rep.failure:
            failures.append(rep.file)
            dangling += [[rep.file, ref] for ref in rep.dangling]
            uncounted += rep.remaining
            continue
        for c, n in rep.counts.items():
            counts[c] += n
        remaining += rep.remaining
        resolved += rep.resolved
        verified += rep.verified_assumptions
        missing += rep.missing_verified
        for key in rep.pattern_keys:
            seen.setdefault(key, set()).add(rep.file)
    patterns = sum(1 for files in seen.values() if len(files) >= 2)
    return {
        "reports": len(reports),
        "entries": entries,
        "signal_lost": sum(counts.values()),
        "counts": counts,
        "remaining_items": remaining,
        "uncounted_items": uncounted,
        "resolved_in_place": resolved,
        "verified_assumptions": verified,
        "missing_verified": missing,
        "parse_failures": sorted(failures),
        "dangling_refs": sorted(dangling),
        "cross_task_patterns": patterns,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("size", choices=sorted(SIZES), help="which repository to generate")
    p.add_argument("outdir", type=Path, help="empty (or new) directory to become the repository root")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0); same seed, same bytes")
    args = p.parse_args(argv)
    try:
        m = generate(args.size, args.outdir, args.seed)
    except (FileExistsError, ValueError) as exc:
        print(f"generate.py: {exc}", file=sys.stderr)
        return 2
    t = m["totals"]
    print(
        f"{args.size}: {len(m['features'])} feature(s), {t['reports']} reports, {t['entries']} items, "
        f"signal_lost {t['signal_lost']}, {t['parse_failures']} parse failures -> {args.outdir}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
