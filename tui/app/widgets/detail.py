"""The detail pane: everything known about the item under the cursor.

All text from input files is untrusted: it is passed through ``sanitize.visible`` and put
into ``rich.text.Text`` objects (never parsed as markup). The code excerpt is given, read off
the event loop by the view model (``viewmodel.Excerpts``), and only when its real path lies
inside the repository (``scars.core.samsara.locate``): the pane reads nothing from disk.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import Group, RenderableType
from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from scars.core.model import CATEGORY_LABEL, REGISTRY_FILE, Feature, Problem, Registry, ScarItem
from scars.core.samsara.decisions import Decision, describe_carried
from scars.core.sanitize import one_line, visible
from scars.core.text import natural_key
from scars.tui.app.viewmodel import ALL_GROUP_LABEL, Excerpted, decision_state, item_text
from scars.tui.app.widgets.base_style import BaseStyleCache

# Shown for an excerpt still being read (a worker reads the rows around the cursor; it follows).
READING = "reading the source…"
_TRACK = ("scrollbar_background", "scrollbar_background_hover", "scrollbar_background_active")


def _label(name: str) -> Text:
    return Text(name, style="bold")


def _field(name: str, value: Any) -> Text:
    t = Text()
    t.append(f"{name}: ", style="bold")
    t.append(visible(str(value)))
    return t


def describe_decision(decision: Decision | None, stopped: tuple[int, str] | None = None) -> Text:
    """A decision as words: action, who, when, and its fields. ``stopped``: (round, decision) when
    the iteration stopped: an undecided item says how deciding goes on (the next round is asked)."""
    state = decision_state(decision)
    t = Text()
    if decision is None:
        t.append("Decision: ", style="bold")
        t.append("undecided (f fix · a accept · d defer)")
        if stopped is not None:
            t.append(
                f" — the iteration stopped after round {stopped[0]} ({stopped[1]}): a decision first asks "
                f"to start round {stopped[0] + 1}"
            )
        return t
    words = {"fix": "FIX", "accept": "ACCEPT", "pending": "ACCEPT — waiting for a second person", "defer": "DEFER"}
    t.append("Decision: ", style="bold")
    t.append(words.get(state, state), style="bold")
    if decision.carried:
        # From an earlier round of iteration-log.yaml, not decided in scars: said as such.
        t.append("  carried from iteration-log.yaml")
        t.append("\n  " + visible(describe_carried(decision)))
        t.append("\n  ")
        t.append("matched: ", style="bold")
        t.append(visible(one_line(decision.matched or "", 240)))
        t.append("\n  re-decide it for this round with f / a / d")
    by = decision.decided_by or ""
    at = decision.decided_at or ""
    if by or at:
        t.append(visible(f"  by {by}" if by else ""))
        t.append(visible(f" at {at}" if at else ""))
    for name in (
        "re_review_signal",
        "owner",
        "rationale",
        "expiry_date",
        "watch",
        "reason",
        "revisit_when",
        "reviewed_by",
        "blocked_outcome",
    ):
        value = getattr(decision, name)  # a Decision field named in the tuple above
        if value:
            t.append("\n  ")
            t.append(f"{name}: ", style="bold")
            t.append(visible(str(value)))
    return t


def describe_reopen(rec: dict) -> Text:
    """Why an accepted item is back in triage: the watch that fired and its cause."""
    t = Text()
    t.append("Reopened by a watch: ", style="bold")
    t.append(visible(one_line(str(rec.get("cause") or "the watch fired"), 300)))
    if rec.get("watch"):
        t.append("\n  watch: ", style="bold")
        t.append(visible(one_line(str(rec["watch"]), 200)))
    if rec.get("at"):
        t.append("\n  at: ", style="bold")
        t.append(visible(str(rec["at"])))
    return t


def describe_unknown_registry(registry: Registry | None) -> str:
    """Why a systemic ref is ``unknown``: the registry is missing or unreadable (formats.md §1.7)."""
    if registry is not None and registry.state == "unreadable":
        where = (registry.path or REGISTRY_FILE) + (f":{registry.line}" if registry.line else "")
        return (
            f"unreadable ({where}: {one_line(registry.reason or '', 200)}). The ref cannot be described; "
            "it is still counted in signal_lost, and the registry is listed under Parse failures."
        )
    why = f" ({registry.reason})" if registry is not None and registry.reason else ""
    return f"missing — no {REGISTRY_FILE}{why}. The ref cannot be described; it is still counted in signal_lost."


def unsettled_log_matches(feature: Feature, item_id: str) -> list[str]:
    """Descriptions of iteration-log.yaml that may name this item but were not taken (weak or
    ambiguous matches): shown, never applied."""
    out = []
    for m in feature.log_matches:
        if m.confident or not any(cid == item_id for cid, _ in m.candidates):
            continue
        score = next(sc for cid, sc in m.candidates if cid == item_id)
        out.append(
            f"round {m.round} {m.action} '{one_line(m.description)}' may name this item "
            f"({m.confidence}, {score:.2f}); not taken — {one_line(m.reason, 160)}"
        )
    return out


def describe_history(records: Iterable[dict]) -> Text | None:
    lines = []
    for rec in records:
        if not isinstance(rec, dict):
            continue
        action = rec.get("action") or rec.get("kind") or rec.get("type") or "?"
        who = rec.get("decided_by") or rec.get("user") or ""
        at = rec.get("decided_at") or rec.get("at") or rec.get("timestamp") or ""
        extra = [f"{k}={rec[k]}" for k in ("owner", "re_review_signal", "reason", "rationale") if rec.get(k)]
        lines.append(one_line(f"{at} {who}: {action}" + (f" ({'; '.join(extra)})" if extra else ""), 160))
    if not lines:
        return None
    t = Text()
    t.append("Earlier decisions:", style="bold")
    for line in lines:
        t.append("\n  • " + line.strip())
    return t


class DetailPane(BaseStyleCache, ScrollView, can_focus=True):
    """Scrollable details of one item or parse failure: a Line-API widget (issue 17).

    The content is rendered to lines once per item (at the pane's width, again only when the
    width changes) and the pane draws the lines on screen from them. A Static in a scrolling
    container cost ~40 ms per cursor step at any size: Textual measured and drew the whole
    content twice and laid the screen out again; rendering the lines here takes ~1 ms.
    """

    DEFAULT_CSS = """
    DetailPane {
        overflow-x: hidden;
        overflow-y: scroll;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.content: RenderableType = Text("")
        self._lines: list[Strip] = []
        self._blank = Strip.blank(0)
        self._rendered: tuple[int, Style] | None = None  # (width, style) of self._lines
        self._fits = False

    # -- content ----------------------------------------------------------------------
    def _update(self, content: RenderableType) -> None:
        """Show ``content`` from its first line."""
        self.content = content
        self._rendered = None
        self._render_content()
        self.scroll_home(animate=False, immediate=True)
        self.refresh()

    def _render_content(self) -> None:
        """Render the content to lines at the pane's width, padded and in the pane's style (the
        scrollbar never comes or goes: the width is the same for every item)."""
        width = self.scrollable_content_region.width
        style = self.base_style()
        if width <= 0 or (width, style) == self._rendered:
            return
        console = self.app.console
        options = console.options.update_width(width)
        lines = console.render_lines(self.content, options, style=style, pad=True)
        self._lines = [Strip(line, width) for line in lines]
        self._blank = Strip.blank(width, style)
        self._rendered = (width, style)
        size = Size(width, len(self._lines))
        if self.virtual_size != size:
            # Without a layout of the screen (a layout redraws every widget's scrollbars).
            self.set_reactive(ScrollView.virtual_size, size)
            self._update_scrollbar()

    def _update_scrollbar(self) -> None:
        """The vertical scrollbar is always there (``overflow-y: scroll``): one that came and went
        with the item's length laid the whole screen out again, and rendered the detail at both
        widths, on each cursor step where it did. Its track is drawn only when there is something
        to scroll (transparent otherwise: the pane's background), and the bar is repainted only
        when what it draws changes (every detail that fits draws the same)."""
        window = self.scrollable_content_region.height
        fits = self.virtual_size.height <= window
        bar = self.vertical_scrollbar
        bar.window_size = window  # reactives: a repaint of the bar only when a value changes
        bar.window_virtual_size = window if fits else self.virtual_size.height
        if fits != self._fits:
            self._fits = fits
            for name in _TRACK:
                setattr(self.styles, name, "transparent" if fits else None)
        self.scroll_y = self.validate_scroll_y(self.scroll_y)

    def on_resize(self) -> None:
        self._render_content()
        self._update_scrollbar()  # the height may change alone (the lines stay)
        self.refresh()

    def render_line(self, y: int) -> Strip:
        if self._base_style is None:  # once per repaint (BaseStyleCache: a refresh, a style change), not per line
            self._render_content()  # again only when the width or the style (focus, theme) changed
        index = int(self.scroll_offset.y) + y
        return self._lines[index] if index < len(self._lines) else self._blank

    def show_nothing(self, message: str = "No item selected.") -> None:
        self._update(Text(message))

    def show_failure(self, pf: Problem) -> None:
        if pf.of_registry:
            head = "Parse failure — the systemic registry is unreadable"
            after = (
                "Every systemic_ref is unknown and still counted in signal_lost; the iteration-entry "
                "verdict stays unknown. Fix the file and reopen."
            )
        else:
            head = "Parse failure — this report's items are not counted"
            after = "Fix the file and reopen; scars never drops a report silently."
        parts: list[RenderableType] = [
            Text(head, style="bold"),
            _field("File", pf.where),
            _field("Reason", pf.message),
            Text(after),
        ]
        self._update(Group(*parts))

    def show_item(
        self,
        feature: Feature,
        item: ScarItem,
        decision: Any,
        history: list[dict],
        group: str | None = None,
        tasks: Iterable[str] = (),
        stopped: tuple[int, str] | None = None,
        reopened: dict | None = None,
        excerpt: Excerpted | None = None,
    ) -> None:
        """``reopened``: the record of the watch that reopened this undecided item (the backend's,
        computed once per load or decision); ``excerpt``: the item's source excerpt, or why there is
        none (the view model's :class:`~scars.tui.app.viewmodel.Excerpts`, read off the event loop;
        None while it is read). A cursor step reads nothing from disk."""
        parts: list[RenderableType] = []
        head = Text()
        head.append(CATEGORY_LABEL.get(item.category, item.category).upper(), style="bold")
        head.append(f"  {item.id}")
        if group:
            head.append(f"  · {ALL_GROUP_LABEL.get(group, group)}")
        parts.append(head)
        parts.append(Text(visible(item_text(item))))
        parts.append(Text(""))
        parts.append(describe_decision(decision, stopped))
        if decision is None and reopened:
            parts.append(describe_reopen(reopened))
        tasks = sorted(set(tasks) | ({item.task_id} if item.task_id else set()), key=natural_key)
        parts.append(_field("Task" + ("s" if len(tasks) > 1 else ""), ", ".join(tasks) if tasks else "—"))
        parts.append(_field("Source", item.file + (f":{item.line}" if item.line else "")))
        flags = []
        if item.deferred:
            flags.append("deferred to feature iteration")
        if not item.counted:
            flags.append("not counted (its report failed to parse)")
        if item.status:
            flags.append(f"status {item.status}")
        if item.scar_id:
            flags.append(item.scar_id)
        if item.verified is None and item.category == "unverified_assumptions":
            flags.append("verified: missing (counted as unverified)")
        if flags:
            parts.append(_field("Flags", "; ".join(flags)))
        for note in item.notes:
            parts.append(_field("Noticed", note))
        for name, value in (
            ("Bites when", item.bites_when),
            ("Accepted because", item.accepted_because),
            ("Note", item.note if item.text else None),
            ("Where", item.where),
            ("Report's debt_location", item.debt_location),
        ):
            if value:
                parts.append(_field(name, value))
        for line in unsettled_log_matches(feature, item.id):
            parts.append(_field("Log", line))
        if item.systemic_ref:
            parts.append(_field("Systemic ref", f"{item.systemic_ref} ({item.registry_state or 'unknown'})"))
            if item.registry_description:
                parts.append(_field("Registry", item.registry_description))
            elif item.registry_state == "unknown":
                parts.append(_field("Registry", describe_unknown_registry(feature.registry)))
        contract = feature.contract
        if contract is not None and (contract.primary_evaluator or contract.pass_signal or contract.fail_signal):
            parts.append(Text(""))
            parts.append(_label(f"Evaluation Contract ({contract.file}):"))
            for name, value in (
                ("Primary evaluator", contract.primary_evaluator),
                ("Pass signal", contract.pass_signal),
                ("Fail signal", contract.fail_signal),
            ):
                if value:
                    parts.append(_field(name, value))
        if contract is not None and contract.feedback_loop:
            parts.append(Text(""))
            parts.append(_label("Suggested first fix path (Evaluation Contract feedback loop):"))
            parts.append(Text(visible(contract.feedback_loop)))
        source, reason = excerpt if excerpt is not None else (None, READING)
        if source is not None:
            # lazy: rich.syntax loads pygments (~8 ms), not before the app's first frame (issue 31)
            from rich.syntax import Syntax

            parts.append(Text(""))
            parts.append(_label(f"{source.path}:"))
            lexer = Syntax.guess_lexer(source.path, code=None) if source.path else "text"
            parts.append(
                Syntax(
                    visible(source.text),
                    lexer or "text",
                    line_numbers=True,
                    start_line=source.first_line,
                    highlight_lines=set(range(source.highlight[0], source.highlight[1] + 1))
                    if source.highlight
                    else None,
                    theme="ansi_dark",
                    word_wrap=False,
                    indent_guides=False,
                )
            )
        elif reason:
            parts.append(_field("Excerpt", reason))
        hist = describe_history(history)
        if hist is not None:
            parts.append(Text(""))
            parts.append(hist)
        self._update(Group(*parts))
