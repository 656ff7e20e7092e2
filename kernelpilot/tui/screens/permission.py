"""Asks whether the agent may run a shell command: allow once, always, or deny."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static


class PermissionScreen(ModalScreen[str]):
    """Dismisses with "once", "always" or "deny" (escape denies)."""

    CSS_PATH = "permission.tcss"
    BINDINGS = [
        Binding("o", "answer('once')", "Allow once", id="permission_once"),
        Binding("A", "answer('always')", "Always", id="permission_always"),
        Binding("n,escape", "answer('deny')", "Deny", id="permission_deny"),
    ]

    def __init__(self, command: str) -> None:
        super().__init__()
        self.command = command

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("The agent wants to run a shell command:")
            yield Static(Text(self.command), id="command")
            with Horizontal():
                yield Button("Allow once [o]", id="once", variant="primary")
                yield Button("Always [A]", id="always")
                yield Button("Deny [n]", id="deny", variant="error")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id)

    def action_answer(self, answer: str) -> None:
        self.dismiss(answer)
