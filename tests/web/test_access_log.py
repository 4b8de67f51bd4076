"""The access log of `practice serve` (web/server.py): answered `/healthz` polls leave no line, failing ones and
every other request do, and sign-in links stay redacted."""

from __future__ import annotations

import logging
import logging.config

import pytest

from web.server import log_config


def access_lines(*requests: tuple[str, int]) -> list[str]:
    """What uvicorn's access logger, configured by `log_config()`, lets through for (path, status) requests."""
    logging.config.dictConfig(log_config())
    logger = logging.getLogger("uvicorn.access")
    written: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            written.append(record.getMessage())

    keep = Keep()
    logger.addHandler(keep)  # after the logger's own filters, as uvicorn's handler
    try:
        for path, status in requests:
            logger.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5000", "GET", path, "1.1", status)
    finally:
        logger.removeHandler(keep)
    return written


@pytest.mark.parametrize("path, status, logged", [
    ("/healthz", 200, False), ("/healthz?verbose=1", 200, False), ("/healthz", 503, True),
    ("/exercises/graph-break-step", 200, True), ("/healthzz", 200, True),
])
def test_healthz_polls_leave_no_line(path, status, logged):
    assert bool(access_lines((path, status))) is logged


def test_sign_in_links_stay_redacted():
    (line,) = access_lines(("/signin/link/SECRET", 200))
    assert "SECRET" not in line and "/signin/link/<redacted>" in line
