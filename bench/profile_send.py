"""`python -m bench.profile_send`: where one accepted send spends its time.

The companion of `bench.profile_detail` for `POST /api/v1/messages` (issue 6's
`message_send` scenario): the real WSGI application is called in a loop in this process
with the scenario's body (a random valid +1 415 recipient each time) as the sandbox
organization's `*` test key, against the benchmark's PostgreSQL and Redis. It prints
1. wall and CPU time per send;
2. a breakdown by layer, from light wrappers: validation of the body, the service, its
   phone parsing, the model, the accepting statement (`messaging/acceptance.py`) and the
   PostgreSQL round trip, the representation and the envelope render.
Not under load: under the benchmark's load every figure grows (the PostgreSQL round trip
most; see README "Benchmarks"). The messages made are deleted at the end.

Variables: PROFILE_REQUESTS (default 2000).
"""

from __future__ import annotations

import io
import json
import os
import random
import sys
import time
from contextlib import ExitStack, contextmanager

from .env import apply_to_this_process, server_environ
from .profile_detail import _counts, _print_breakdown, _totals, _wrap, sql_timer

SEND_PATH = "/api/v1/messages"


def _environ(key: str, body: bytes) -> dict:
    return {
        "REQUEST_METHOD": "POST", "PATH_INFO": SEND_PATH, "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "8000", "REMOTE_ADDR": "127.0.0.1",
        "SERVER_PROTOCOL": "HTTP/1.1", "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body), "wsgi.errors": sys.stderr,
        "wsgi.multithread": False, "wsgi.multiprocess": True, "wsgi.run_once": False,
        "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body)),
        "HTTP_AUTHORIZATION": f"Bearer {key}",
    }


def _send(application, key: str, rng: random.Random) -> None:
    from .messaging_scenarios import random_number

    body = json.dumps({"channel": "sms", "to": random_number(rng), "body": "profile"}).encode()
    status: list[str] = []
    answer = application(_environ(key, body), lambda s, h, exc=None: status.append(s))
    payload = b"".join(answer)
    if hasattr(answer, "close"):
        answer.close()
    if not status[0].startswith("202"):
        raise SystemExit(f"the send answered {status[0]}: {payload[:300]!r}")


@contextmanager
def _instrumented():
    from django.core.handlers.wsgi import WSGIHandler
    from django.db import connection
    from rest_framework.views import APIView

    from messaging import acceptance, services, validation
    from messaging.api import views as message_views
    from messaging.models import Message
    from platform_core.api import renderers, views

    with ExitStack() as stack:
        _wrap(WSGIHandler, "__call__", "whole request (WSGI handler)", stack)
        _wrap(APIView, "dispatch", "DRF dispatch (view)", stack)
        _wrap(views.PlatformAPIMixin, "initial", "initial(): auth+perm+tenant+limit", stack)
        _wrap(message_views, "validated_input", "body validation (serializer)", stack)
        _wrap(services, "message_send", "service: message_send", stack)
        _wrap(validation, "normalize_recipient", "  phone parsing (normalize_recipient)", stack)
        _wrap(Message, "__init__", "  Message()", stack)
        _wrap(acceptance, "insert_unless_opted_out", "  accepting statement (acceptance)",
              stack)
        _wrap(message_views, "represent", "representation", stack)
        _wrap(renderers.EnvelopeJSONRenderer, "render", "envelope render (orjson)", stack)
        stack.enter_context(connection.execute_wrapper(
            sql_timer("    SQL statement (round trip)")))
        yield


def main() -> int:
    apply_to_this_process(server_environ())
    import django

    django.setup()
    from django.core.wsgi import get_wsgi_application

    from platform_core.tenancy.models import Organization

    from . import contacts_data as data

    n = int(os.environ.get("PROFILE_REQUESTS", "2000"))
    org_id, key = data.ensure_sandbox_org()
    organization = Organization.objects.get(pk=org_id)
    application = get_wsgi_application()
    rng = random.Random(6)
    try:
        for _ in range(min(200, n)):
            _send(application, key, rng)
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(n):
            _send(application, key, rng)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(f"{n} sequential sends, in-process WSGI calls, PostgreSQL + Redis: "
              f"{wall / n * 1e6:.0f} us wall, {cpu / n * 1e6:.0f} us CPU per send")
        with _instrumented():
            _totals.clear()
            _counts.clear()
            for _ in range(n):
                _send(application, key, rng)
            _print_breakdown(n)
    finally:
        data.clear_sandbox_messages(organization)
    return 0


if __name__ == "__main__":
    sys.exit(main())
