"""The one error a front-end turns into a message: the app cannot start as configured."""


class StartupError(Exception):
    """The app, a worker or a database command cannot start as configured; the message says what to change."""
