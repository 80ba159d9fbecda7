"""Query strings (the SSE `token`) never reach access logs (Document 1, 4.5).

The end-to-end check against a running daphne is in
tests/platform_core/events/test_stream.py::test_query_strings_never_reach_the_access_log.
"""

from __future__ import annotations

import datetime
import io
import logging

import pytest

from platform_core.realtime import accesslog

SECRET = "svc_live_sk_SECRETVALUE"


@pytest.mark.parametrize(("line", "expected"), [
    (f"GET /api/v1/events/stream?token={SECRET} HTTP/1.1",
     "GET /api/v1/events/stream HTTP/1.1"),
    (f'"GET /a?b=1&token={SECRET}" 200 12', '"GET /a" 200 12'),
    ("GET /plain HTTP/1.1", "GET /plain HTTP/1.1"),
    ("no path here? fine", "no path here? fine"),
])
def test_strip_query(line, expected):
    assert accesslog.strip_query(line) == expected


def test_daphne_access_log_is_written_without_query():
    from daphne.access import AccessLogGenerator

    accesslog.install()
    accesslog.install()  # idempotent
    stream = io.StringIO()
    AccessLogGenerator(stream)("http", "complete", {
        "path": f"/api/v1/events/stream?token={SECRET}", "status": 200, "method": "GET",
        "client": "127.0.0.1:5000", "time_taken": 0.1, "size": 10})
    AccessLogGenerator(stream)("websocket", "connected", {
        "path": f"/ws/team-chat/?token={SECRET}", "client": "127.0.0.1:5000"})
    text = stream.getvalue()
    assert '"GET /api/v1/events/stream" 200' in text
    assert "WSCONNECT /ws/team-chat/" in text
    assert SECRET not in text
    assert "?" not in text


@pytest.mark.parametrize("name", ["django.server", "django.channels.server", "daphne.server"])
def test_logging_filter_on_request_loggers(name):
    accesslog.install()
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger(name)
    logger.addHandler(handler)
    try:
        logger.warning('"%s" %s %s', f"GET /api/v1/events/stream?token={SECRET} HTTP/1.1",
                       200, 12)
        logger.warning(f"GET /x?token={SECRET}")
    finally:
        logger.removeHandler(handler)
    text = stream.getvalue()
    assert SECRET not in text
    assert '"GET /api/v1/events/stream HTTP/1.1" 200 12' in text


def test_gunicorn_access_log_format_omits_the_query():
    pytest.importorskip("gunicorn")
    from gunicorn.config import Config
    from gunicorn.glogging import Logger, SafeAtoms

    class Response:
        status = "200 OK"
        sent = 10
        headers = []

    environ = {"REQUEST_METHOD": "GET", "RAW_URI": f"/api/v1/events?token={SECRET}",
               "PATH_INFO": "/api/v1/events", "QUERY_STRING": f"token={SECRET}",
               "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1"}
    atoms = Logger(Config()).atoms(Response(), {}, environ, datetime.timedelta(seconds=0))
    assert SECRET in Config().access_log_format % SafeAtoms(atoms)  # gunicorn's default leaks
    line = accesslog.ACCESS_LOG_FORMAT % SafeAtoms(atoms)
    assert '"GET /api/v1/events HTTP/1.1" 200' in line
    assert SECRET not in line
