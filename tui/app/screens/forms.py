"""Decision forms: accept (re-review signal, owner, rationale, optional watch) and defer.

Each is a typed ``ModalScreen[dict | None]``: it returns the fields through ``dismiss``
once core's ``validate_decision`` finds nothing wrong, or ``None`` when cancelled. The
rules live in core; the form only shows core's messages inline, next to their fields.
Nothing is saved by the form itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import Button, Input, Label, Static

from scars.core.sanitize import one_line
from scars.tui.app.screens import DIALOGS_CSS
from scars.tui.app.screens.confirm import subject_line

Validator = Callable[[str, dict], list]  # (action, fields) -> [FieldError(field, message)]

# (field, label, placeholder, required-looking)
ACCEPT_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("re_review_signal", "Re-review signal", "an observable condition that reopens this item"),
    ("owner", "Owner", "who watches for the signal"),
    ("rationale", "Rationale", "why the risk is acceptable now"),
    ("watch", "Watch (optional)", "path-changed: GLOB | pattern: REGEX in GLOB | recurs"),
)
DEFER_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("reason", "Reason (optional)", "why not now"),
    ("revisit_when", "Revisit when (optional)", "e.g. round 3, or when the scheduler lands"),
)


class DecisionForm(ModalScreen[dict | None]):
    """Shared body of the accept and defer forms."""

    CSS_PATH = DIALOGS_CSS

    ACTION = ""
    TITLE = ""
    FIELDS: tuple[tuple[str, str, str], ...] = ()
    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="form.cancel"),
    ]

    def __init__(
        self,
        subjects: Sequence[str],
        validate: Validator,
        *,
        suggestions: Iterable[str] = (),
        initial: dict | None = None,
    ) -> None:
        super().__init__()
        self.subjects = list(subjects)
        self._validate = validate
        self.suggestions = [s for s in suggestions if s]
        self.initial = dict(initial or {})
        self._judged: set[str] = set()  # fields once shown wrong

    def compose(self) -> ComposeResult:
        with Vertical(id="form", classes="form"):
            yield Label(Text(self.title_text(), style="bold"), id="form-title")
            with VerticalScroll(id="form-subjects"):
                for s in self.subjects[:50]:
                    yield Static(subject_line(s), classes="form-subject")
                if len(self.subjects) > 50:
                    yield Static(Text(f"… and {len(self.subjects) - 50} more"), classes="form-subject")
            # The fields scroll on a short terminal; Save and Cancel stay in view below them.
            with VerticalScroll(id="form-body"):
                yield from self._fields()
            yield Static("", id="form-summary", classes="form-error")
            with Horizontal(id="form-buttons"):
                yield Button(f"Save {self.ACTION}", id="form-save", variant="primary", compact=True)
                yield Button("Cancel (esc)", id="form-cancel", compact=True)
            yield Static(Text("Enter: next field, on the last one save · Tab moves · esc cancels"), classes="form-hint")

    def _fields(self) -> ComposeResult:
        for name, label, placeholder in self.FIELDS:
            yield Label(label, classes="form-label")
            suggester = None
            if name == "owner" and self.suggestions:
                suggester = SuggestFromList(self.suggestions, case_sensitive=False)
            yield Input(
                value=self.initial.get(name) or "",
                placeholder=placeholder,
                id=f"field-{name}",
                suggester=suggester,
                compact=True,
            )
            if name == "owner" and self.suggestions:
                yield Static(
                    Text("suggested: " + one_line(", ".join(self.suggestions[:6]), 160)),
                    id="owner-suggestions",
                    classes="form-hint",
                )
            yield Static("", id=f"error-{name}", classes="form-error")

    def title_text(self) -> str:
        n = len(self.subjects)
        return f"{self.TITLE} — {n} item{'s' if n != 1 else ''}" if n != 1 else self.TITLE

    def on_mount(self) -> None:
        if self.FIELDS:
            self.query_one(f"#field-{self.FIELDS[0][0]}", Input).focus()

    def values(self) -> dict:
        out = {}
        for name, _, _ in self.FIELDS:
            value = self.query_one(f"#field-{name}", Input).value.strip()
            out[name] = value or None
        return out

    def show_errors(self, problems: list) -> None:
        by_field: dict[str, list[str]] = {}
        unplaced: list[str] = []
        names = {n for n, _, _ in self.FIELDS}
        for p in problems:
            if p.field in names:
                by_field.setdefault(p.field, []).append(p.message)
            else:
                unplaced.append(f"{p.field}: {p.message}" if p.field else p.message)
        for name, _, _ in self.FIELDS:
            msgs = by_field.get(name, [])
            err = self.query_one(f"#error-{name}", Static)
            err.update(Text("✗ " + one_line("; ".join(msgs), 200)) if msgs else Text(""))
            err.set_class(bool(msgs), "shown")
            self.query_one(f"#field-{name}", Input).set_class(bool(msgs), "invalid")
        summary = self.query_one("#form-summary", Static)
        summary.update(Text("✗ " + one_line("; ".join(unplaced), 200)) if unplaced else Text(""))
        summary.set_class(bool(unplaced), "shown")
        for name, _, _ in self.FIELDS:
            if name in by_field:
                self.query_one(f"#field-{name}", Input).focus()
                break

    def action_save(self) -> None:
        fields = self.values()
        problems = self._validate(self.ACTION, fields)
        if problems:
            self._judged.update(p.field for p in problems)  # judged again as they are typed
            self.show_errors(problems)
            return
        self.dismiss(fields)

    def on_input_changed(self, event: Input.Changed) -> None:
        """A field shown wrong is judged again as it is typed: its message goes once it is right."""
        name = (event.input.id or "").removeprefix("field-")
        if name not in self._judged:
            return
        still = [p.message for p in self._validate(self.ACTION, self.values()) if p.field == name]
        err = self.query_one(f"#error-{name}", Static)
        err.update(Text("✗ " + one_line("; ".join(still), 200)) if still else Text(""))
        err.set_class(bool(still), "shown")
        event.input.set_class(bool(still), "invalid")

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "form-save":
            self.action_save()
        else:
            self.action_cancel()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter moves to the next field; on the last field it saves."""
        event.stop()
        ids = [f"field-{n}" for n, _, _ in self.FIELDS]
        try:
            pos = ids.index(event.input.id or "")
        except ValueError:
            return
        if pos + 1 < len(ids):
            self.query_one(f"#{ids[pos + 1]}", Input).focus()
        else:
            self.action_save()


class AcceptForm(DecisionForm):
    ACTION = "accept"
    TITLE = "Accept as known risk"
    FIELDS = ACCEPT_FIELDS


class DeferForm(DecisionForm):
    ACTION = "defer"
    TITLE = "Defer"
    FIELDS = DEFER_FIELDS
