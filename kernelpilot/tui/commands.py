"""The command palette's actions: every binding of the app that applies right now."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider


class ActionsProvider(Provider):
    """Context-aware: an action the app's `check_action` rules out (accept with nothing selected) is not offered."""

    def _commands(self):
        app = self.app
        for binding in app.BINDINGS:
            if binding.action == "command_palette" or not app.check_action(binding.action, ()):
                continue
            yield binding.description, binding.tooltip, partial(app.run_action, binding.action)

    async def discover(self) -> Hits:
        for title, help_text, run in self._commands():
            yield DiscoveryHit(title, run, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, run in self._commands():
            if (score := matcher.match(title)) > 0:
                yield Hit(score, matcher.highlight(title), run, help=help_text)
