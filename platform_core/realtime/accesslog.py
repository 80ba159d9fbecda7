"""Keep query strings out of access logs (Document 1, 4.5: the SSE `token` is a credential).

- daphne: its access log (`--access-log`, or stdout at verbosity 1) is written by
  `daphne.access.AccessLogGenerator` from the raw request URI; `install()` wraps it so
  the logged path stops at `?`. daphne imports the application (config/asgi.py, which
  imports platform_core.realtime.routing, which calls `install()`) before it builds its
  access logger, so the wrapper is always in place.
- Python logging: `QueryStringFilter` removes query strings from request lines in the
  records of the loggers that write them (`django.server`, `django.channels.server`,
  `daphne.*`); `install()` attaches it.
- gunicorn (the REST API): run it with an access-log format that uses the path without
  the query, `%(U)s`, instead of `%(r)s`:
      gunicorn config.wsgi:application --access-logformat \
        '%(h)s %(l)s %(u)s %(t)s "%(m)s %(U)s %(H)s" %(s)s %(b)s "%(a)s"'
  (`ACCESS_LOG_FORMAT` below holds that format for the gunicorn config).
"""

from __future__ import annotations

import logging
import re

ACCESS_LOG_FORMAT = '%(h)s %(l)s %(u)s %(t)s "%(m)s %(U)s %(H)s" %(s)s %(b)s "%(a)s"'

SANITIZED_LOGGERS = ("django.server", "django.channels.server", "daphne", "daphne.server",
                     "daphne.http_protocol", "daphne.ws_protocol", "gunicorn.access")

# A request target inside a log line: a path followed by a query string.
_QUERY = re.compile(r"(/[^\s?\"']*)\?[^\s\"']*")


def strip_query(text: str) -> str:
    """`GET /a/b?token=x HTTP/1.1` -> `GET /a/b HTTP/1.1`."""
    return _QUERY.sub(r"\1", text) if "?" in text else text


class QueryStringFilter(logging.Filter):
    """Removes query strings from a record's message and arguments (never drops records)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = strip_query(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(strip_query(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.args, dict):  # in place: keep the mapping's own class
            for key, value in list(record.args.items()):
                if isinstance(value, str):
                    record.args[key] = strip_query(value)
        return True


_FILTER = QueryStringFilter()


def _sanitize_daphne() -> None:
    try:
        from daphne.access import AccessLogGenerator
    except ImportError:  # pragma: no cover - daphne is a dependency
        return
    if getattr(AccessLogGenerator, "_query_strings_stripped", False):
        return
    original = AccessLogGenerator.__call__

    def __call__(self, protocol, action, details):  # noqa: N807
        if isinstance(details, dict) and isinstance(details.get("path"), str):
            details = {**details, "path": details["path"].split("?", 1)[0]}
        return original(self, protocol, action, details)

    AccessLogGenerator.__call__ = __call__
    AccessLogGenerator._query_strings_stripped = True


def install() -> None:
    """Idempotent: sanitize daphne's access log and attach the logging filter."""
    _sanitize_daphne()
    for name in SANITIZED_LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
