"""The steering box: a message for the agent's next turn."""

from __future__ import annotations

from textual.binding import Binding
from textual.message import Message
from textual.widgets import Input


class SteerInput(Input):
    """While it has the focus, the letters type into it rather than reach the app's keys, which leaves the footer
    with nothing to show; it shows how to send and how to leave instead. Leaving posts `SteerInput.Left`."""

    BINDINGS = [
        Binding("enter", "submit", "Send", tooltip="send the message for the agent's next turn"),
        Binding("escape", "leave", "Back", tooltip="back to the candidates; what you typed stays"),
    ]

    class Left(Message):
        """The user is done with the steering box for now (what they typed stays)."""

    def action_leave(self) -> None:
        self.post_message(self.Left())
