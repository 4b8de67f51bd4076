"""The errors a front-end turns into a message: the app cannot start as configured, or a person's input is wrong."""

from __future__ import annotations

from collections.abc import Callable


class StartupError(Exception):
    """The app, a worker or a database command cannot start as configured; the message says what to change."""


class InputError(Exception):
    """A person's input cannot be used (a wrong password, a display name already taken); says what to fix.

    `message` is English with `{field}`s, marked for translation where it is raised (`N_`); a page shows
    `text(gettext)` in its language, the CLI `str(error)`.
    """

    def __init__(self, message: str, **params):
        super().__init__(message)
        self.message, self.params = message, params

    def text(self, gettext: Callable[[str], str] = lambda m: m) -> str:
        return gettext(self.message).format(**self.params)

    def __str__(self) -> str:
        return self.text()
