"""The footer: Textual's, with its keys enabled and disabled in place rather than rebuilt."""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

COMPACT_BELOW = 120
"""Terminal widths below which the footer draws its keys closer together."""

NO_PALETTE_KEY_BELOW = 90
"""Terminal widths below which the footer leaves out the command palette's key."""


def _shown_keys(screen: Screen) -> tuple[dict[str, tuple[str, str, str]], dict[str, bool]]:
    """What the footer draws, by action: the first key bound to it with its label and tooltip, and
    whether it applies now."""
    keys: dict[str, tuple[str, str, str]] = {}
    enabled: dict[str, bool] = {}
    for key, (_node, binding, applies, tooltip) in screen.active_bindings.items():
        if binding.show and binding.action not in keys:
            keys[binding.action] = (key, binding.description, tooltip)
            enabled[binding.action] = applies
    return keys, enabled


class KeyFooter(Footer):
    """Textual's footer unmounts and mounts all its keys on every bindings refresh. The app refreshes
    them on each candidate highlight (what can be accepted depends on the selection); twenty remounts
    made that frame the slowest of a session. Here a refresh that only changes which keys apply
    updates those keys, and the footer is rebuilt only when the keys themselves change."""

    _drawn_keys: dict[str, tuple[str, str, str]] | None = None

    def on_resize(self, event: events.Resize) -> None:
        """Where the keys would not all fit: Textual's compact style (less space between keys), and no
        palette key over the last of them (ctrl+p still opens it)."""
        self.compact = event.size.width < COMPACT_BELOW
        self.show_command_palette = event.size.width >= NO_PALETTE_KEY_BELOW

    def bindings_changed(self, screen: Screen) -> None:
        keys, enabled = _shown_keys(screen)
        if keys == self._drawn_keys:
            for footer_key in self.query(FooterKey):
                footer_key.disabled = not enabled.get(footer_key.action, True)
            return
        super().bindings_changed(screen)

    def compose(self) -> ComposeResult:
        self._drawn_keys = _shown_keys(self.screen)[0] if self._bindings_ready else None
        yield from super().compose()
