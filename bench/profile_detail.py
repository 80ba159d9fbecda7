"""`python -m bench.profile_detail`: where one authenticated detail request spends its time.

Not under load: the real WSGI application (config.wsgi, the same middleware and settings
the benchmark's gunicorn runs) is called in a loop in this process against the seeded
PostgreSQL + Redis. It prints
1. the mean time per request of the floor, the detail and the two list pages;
2. a breakdown of the detail request by layer, from light wrappers (not the profiler):
   authentication, Redis round trips, the rate limiter, permissions, tenant scoping,
   the query (with PostgreSQL round trips and the connection health check), serializing,
   rendering, and what is left (Django's handler, middleware, DRF's dispatch);
3. cProfile's top functions for the detail request (also saved to var/bench/detail.prof).

Variables: PROFILE_REQUESTS (default 2000).
"""

from __future__ import annotations

import cProfile
import io
import os
import pstats
import statistics
import sys
import time
from collections import defaultdict
from contextlib import ExitStack, contextmanager

from .env import WORK_DIR, apply_to_this_process, server_environ

_totals: dict[str, float] = defaultdict(float)
_counts: dict[str, int] = defaultdict(int)


def _environ(path: str, headers: dict[str, str]) -> dict:
    route, _, query = path.partition("?")
    env = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": route,
        "QUERY_STRING": query,
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "REMOTE_ADDR": "127.0.0.1",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": False,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    for name, value in headers.items():
        env["HTTP_" + name.upper().replace("-", "_")] = value
    return env


def _call(application, path: str, headers: dict[str, str]) -> int:
    status_holder = []
    body = application(_environ(path, headers), lambda s, h, exc=None: status_holder.append(s))
    try:
        for _chunk in body:
            pass
    finally:
        if hasattr(body, "close"):
            body.close()
    return int(status_holder[0].split()[0])


def _time_requests(application, path: str, headers: dict[str, str], n: int) -> list[float]:
    for _ in range(min(200, n)):
        _call(application, path, headers)
    out = []
    for _ in range(n):
        started = time.perf_counter()
        status = _call(application, path, headers)
        out.append(time.perf_counter() - started)
        if status != 200:
            raise SystemExit(f"{path} answered {status}")
    return out


def _wrap(owner, attr: str, label: str, stack: ExitStack) -> None:
    original = getattr(owner, attr)

    def timed(*args, **kwargs):
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            _totals[label] += time.perf_counter() - started
            _counts[label] += 1

    setattr(owner, attr, timed)
    stack.callback(setattr, owner, attr, original)


def sql_timer(label: str):
    """A `connection.execute_wrapper` adding each statement's time to `label`."""
    def timer(execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            _totals[label] += time.perf_counter() - started
            _counts[label] += 1

    return timer


@contextmanager
def _instrumented():
    import redis.client
    from django.core.handlers.wsgi import WSGIHandler
    from django.db import connection
    from django.db.backends.postgresql.base import DatabaseWrapper
    from rest_framework import generics, serializers
    from rest_framework.views import APIView

    from platform_core.api import authentication, permissions, ratelimit, renderers, views
    from platform_core.identity import credentials
    from platform_core.tenancy import managers

    with ExitStack() as stack:
        _wrap(WSGIHandler, "__call__", "whole request (WSGI handler)", stack)
        _wrap(APIView, "dispatch", "DRF dispatch (view)", stack)
        _wrap(authentication.PlatformAuthentication, "authenticate", "authentication", stack)
        _wrap(credentials, "principal_for_api_key", "  principal_for_api_key", stack)
        _wrap(redis.client.Redis, "execute_command", "  Redis single commands (round trips)",
              stack)
        _wrap(redis.client.Pipeline, "execute", "  Redis pipelines (round trips)", stack)
        _wrap(ratelimit, "enforce", "rate limit (enforce)", stack)
        _wrap(permissions.DeclaredScopes, "has_permission", "permission (scopes, roles)", stack)
        _wrap(views.PlatformAPIMixin, "initial", "initial(): auth+perm+tenant+limit", stack)
        _wrap(managers.TenantManager, "get_queryset", "tenant scoping (TenantManager)", stack)
        _wrap(generics.GenericAPIView, "get_object", "get_object (queryset + query)", stack)
        _wrap(DatabaseWrapper, "is_usable", "  connection health check (SELECT 1)", stack)
        _wrap(serializers.Serializer, "to_representation", "serializer to_representation",
              stack)
        _wrap(renderers.EnvelopeJSONRenderer, "render", "envelope render (orjson)", stack)
        _wrap(views.PlatformAPIMixin, "finalize_response", "finalize_response", stack)
        stack.enter_context(connection.execute_wrapper(
            sql_timer("  SQL statements (round trips)")))
        yield


def _print_breakdown(n: int) -> None:
    whole = _totals["whole request (WSGI handler)"]
    print(f"\n{'layer':48} {'us/request':>10} {'share':>6} {'calls/request':>14}")
    for label, total in sorted(_totals.items(), key=lambda kv: -kv[1]):
        print(f"{label:48} {total / n * 1e6:10.1f} {total / whole:6.0%} {_counts[label] / n:14.2f}")


def main() -> int:
    apply_to_this_process(server_environ())
    import django

    django.setup()
    from django.core.wsgi import get_wsgi_application

    from . import seed
    from .env import BenchOptions
    from .scenarios import SCENARIOS, BenchContext

    n = int(os.environ.get("PROFILE_REQUESTS", "2000"))
    data = seed.ensure_seed()
    ctx = BenchContext(base_url="", options=BenchOptions.from_environ(), seed=data)
    application = get_wsgi_application()
    paths = {}
    for scenario in SCENARIOS:
        if hasattr(scenario, "url"):
            scenario.prepare(ctx)
            paths[scenario.name] = (scenario.url(ctx), scenario.headers(ctx), scenario.title)

    print(f"{n} sequential requests each, in-process WSGI calls, PostgreSQL + Redis:\n")
    for _name, (path, headers, title) in paths.items():
        times = _time_requests(application, path, headers, n)
        print(f"  {title:55} mean {statistics.mean(times) * 1e6:7.0f} us"
              f"  median {statistics.median(times) * 1e6:7.0f} us")

    path, headers, _title = paths["detail"]
    with _instrumented():
        _totals.clear()
        _counts.clear()
        for _ in range(n):
            _call(application, path, headers)
        _print_breakdown(n)

    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(n):
        _call(application, path, headers)
    profiler.disable()
    WORK_DIR.mkdir(parents=True, exist_ok=True)
    profiler.dump_stats(WORK_DIR / "detail.prof")
    for order in ("tottime", "cumulative"):
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats(order).print_stats(30)
        print(f"\n--- cProfile, detail request x{n}, by {order} ---")
        print("\n".join(out.getvalue().splitlines()[4:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
