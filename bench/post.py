"""A POST loaded with wrk: JSON body (fixed, or built per request in Lua), its own key.

`WrkScenario` (bench/scenarios.py) checks GETs only; `PostScenario` checks one POST for the
expected answer, may carry another organization's key (`key_fn`), may run at its own
concurrency (`connections`: 1 gives a request's own latency rather than a queue's) and
may set wrk's `request` hook (`extra_lua`) so that each request differs.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from . import wrk
from .base import BenchContext, Measurement, Scenario


def http_post_json(url: str, headers: dict[str, str], body: Any, *, timeout: float = 30
                   ) -> tuple[int, Any]:
    data = json.dumps(body).encode()
    request = urllib.request.Request(  # noqa: S310 - loopback only
        url, data=data, method="POST",
        headers={**headers, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read()
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw.decode(errors="replace")[:500]


class PostScenario(Scenario):
    def __init__(self, *, name: str, title: str, path: str,
                 body: Callable[[BenchContext], Any],
                 key_fn: Callable[[BenchContext], str] | None = None,
                 expect_status: int = 200,
                 expect: Callable[[BenchContext, Any], str | None] | None = None,
                 prepare_fn: Callable[[BenchContext], None] | None = None,
                 extra_lua: Callable[[BenchContext], str] | None = None,
                 after_fn: Callable[[BenchContext], None] | None = None,
                 connections: int | None = None):
        self.name, self.title, self.path = name, title, path
        self.body, self.key_fn, self.expect_status = body, key_fn, expect_status
        self.expect, self.prepare_fn, self.extra_lua = expect, prepare_fn, extra_lua
        self.after_fn, self.connections = after_fn, connections

    def headers(self, ctx: BenchContext) -> dict[str, str]:
        key = self.key_fn(ctx) if self.key_fn else ctx.seed.raw_key
        return {"X-API-Key": key}

    def prepare(self, ctx: BenchContext) -> None:
        if self.prepare_fn is not None:
            self.prepare_fn(ctx)

    def check(self, ctx: BenchContext) -> None:
        status, answer = http_post_json(ctx.base_url + self.path, self.headers(ctx),
                                        self.body(ctx))
        if status != self.expect_status:
            raise AssertionError(f"expected {self.expect_status}, got {status}:"
                                 f" {str(answer)[:300]}")
        if self.expect is not None:
            problem = self.expect(ctx, answer)
            if problem:
                raise AssertionError(problem)

    def measure(self, ctx: BenchContext, *, seconds: int) -> Measurement:
        connections = self.connections or ctx.options.connections
        try:
            result = wrk.run(
                ctx.base_url + self.path,
                seconds=seconds,
                threads=min(ctx.options.threads, connections),
                connections=connections,
                method="POST",
                headers={**self.headers(ctx), "Content-Type": "application/json"},
                body=json.dumps(self.body(ctx)),
                name=self.name,
                extra_lua=self.extra_lua(ctx) if self.extra_lua else None,
            )
        finally:
            if self.after_fn is not None:
                self.after_fn(ctx)
        return Measurement(
            scenario=self.name,
            title=self.title,
            requests_per_second=result.requests_per_second,
            p50_ms=result.p50_ms,
            p99_ms=result.p99_ms,
            requests=result.requests,
            errors=result.status_errors + result.socket_errors + result.timeouts,
            notes=(f"wrk -c{connections}" if self.connections else ""),
        )
