"""The contacts scenarios of `make bench` (issue 5, "Done means"): exports and a segment count.

Data: bench/contacts_data.py seeds up to 100,000 contacts once in the bench organization.

Exports (rows/s and the serving process's peak memory; memory must stay flat as rows
grow). Each measurement runs against a gunicorn of its own, started like the harness's
(same command, same environment) but with ONE sync worker (`-w 1`) and fresh for each
measurement, so the figure belongs to one known process with a clean baseline (a worker
that served a 50,000-row export earlier keeps a higher RSS, which would hide the growth
of a later one). The worker is warmed up with a 200-row export of the same endpoint, its
baseline VmRSS taken over 0.3 s, then the measured export is read in full by this process
while a thread samples the worker's VmRSS every 20 ms; peak growth = highest sample -
baseline (VmHWM before/after is reported too).

- `contact_export`: POST /api/v1/contacts/export, CSV, 10,000 rows (the endpoint's cap):
  `{"tags": ["export-10k"]}`, with every custom field as a column.
- `segment_export_10k` / `segment_export_50k`: POST /api/v1/segments/export.csv with the
  filter `custom_fields.seq lt N`, which matches exactly N rows (50,000 is the cap).
- `segment_count`: the three-rule filter (tags eq vip AND custom_fields.plan eq pro AND
  email contains @example.com) over 100,000 contacts, counted in-process with
  `contacts_matching(tree, organization=org).count()`, BENCH_SEGMENT_COUNT_RUNS times
  (default 100) after 5 warm-up runs: p50/p99 ms.
- `segment_count_http`: the same count through HTTP, POST /api/v1/contacts/segments/autopilot
  with the description that the rule-based autopilot parses into the same three rules
  (checked), answering `matched_count`; wrk at one connection (a request's own latency).
BENCH_SCALE multiplies the row counts (seed, exports) and the runs.
"""

from __future__ import annotations

import http.client
import json
import statistics
import time
from typing import Any

from . import contacts_data as data
from .base import BenchContext, Measurement, Scenario
from .env import WORK_DIR, scaled, server_environ
from .event_scenarios import percentile
from .memory import RssSampler, children, settled_rss_kib, status_kib
from .post import PostScenario
from .server import GunicornServer, ServerError

WARMUP_ROWS = 200
MIB = 1024.0


def _org(ctx: BenchContext):
    from platform_core.tenancy.models import Organization

    return Organization.objects.get(pk=ctx.seed.org_id)


def ensure_contacts(ctx: BenchContext) -> int:
    """Seed (once per database) and remember how many contacts there are."""
    if "contacts_total" not in ctx.values:
        try:
            ctx.values["contacts_total"] = data.ensure_contacts(_org(ctx),
                                                                rows=data.contact_target())
        except Exception as exc:
            raise RuntimeError(f"seeding contacts failed: {type(exc).__name__}: {exc}") from exc
    return ctx.values["contacts_total"]


# --- Exports ------------------------------------------------------------------------------


class ExportServer(GunicornServer):
    """The harness's gunicorn command with one worker and a log of its own."""

    def __init__(self, *, env: dict[str, str]):
        super().__init__(env=env, workers=1)
        self.log_path = WORK_DIR / "gunicorn-export.log"

    def worker_pid(self) -> int:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            pids = children(self.process.pid)
            if len(pids) == 1:
                return pids[0]
            time.sleep(0.1)
        raise ServerError(f"expected one gunicorn worker, found {children(self.process.pid)}")


def stream_post(port: int, path: str, key: str, body: Any, *, timeout: float = 300
                ) -> dict[str, Any]:
    """POST and read the whole answer in 64 KiB reads, counting lines as they come."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    payload = json.dumps(body).encode()
    try:
        started = time.monotonic()
        conn.request("POST", path, body=payload, headers={
            "X-API-Key": key, "Content-Type": "application/json", "Accept": "text/csv"})
        response = conn.getresponse()
        first_byte = time.monotonic() - started
        size = lines = 0
        head = b""
        while True:
            chunk = response.read(65536)
            if not chunk:
                break
            if len(head) < 600:
                head += chunk[:600]
            size += len(chunk)
            lines += chunk.count(b"\n")
        elapsed = time.monotonic() - started
        return {"status": response.status, "headers": dict(response.getheaders()),
                "bytes": size, "lines": lines, "seconds": elapsed, "first_byte": first_byte,
                "head": head.decode(errors="replace")}
    finally:
        conn.close()


class ExportScenario(Scenario):
    """One export of `rows` rows, read in full, its worker's memory sampled."""

    needs_server = False  # it starts a one-worker gunicorn of its own per measurement

    def __init__(self, *, name: str, kind: str, rows: int, env_name: str):
        self.name, self.kind, self.wanted, self.env_name = name, kind, rows, env_name
        self.rows = scaled(env_name, rows, minimum=WARMUP_ROWS)
        what = ("POST /api/v1/contacts/export" if kind == "contacts"
                else "POST /api/v1/segments/export.csv")
        self.title = f"Export {self.rows:,} rows ({what}; req/s = rows/s)"

    def path(self) -> str:
        return "/api/v1/contacts/export" if self.kind == "contacts" else "/api/v1/segments/export.csv"

    def row_header(self) -> str:
        return "X-Export-Rows" if self.kind == "contacts" else "X-Export-Row-Count"

    def body(self, ctx: BenchContext, rows: int) -> dict:
        if self.kind == "segments":
            return {"filters": data.seq_filter(rows), "filename": f"bench-{rows}"}
        tagged = min(data.EXPORT_TAGGED, ctx.values["contacts_total"])
        body = {"tags": [data.EXPORT_TAG]}
        if rows < tagged:  # a smaller export (warm-up, BENCH_SCALE < 1): the first ids
            body["contact_ids"] = ctx.values["first_ids"][:rows]
        return body

    def prepare(self, ctx: BenchContext) -> None:
        total = ensure_contacts(ctx)
        if self.kind == "contacts":
            self.rows = min(self.rows, data.EXPORT_TAGGED, total)
            if "first_ids" not in ctx.values:
                ctx.values["first_ids"] = data.first_contact_ids(_org(ctx), data.EXPORT_TAGGED)
        elif self.rows > total:
            raise AssertionError(f"{self.rows:,} rows wanted, {total:,} contacts seeded")
        what = ("POST /api/v1/contacts/export" if self.kind == "contacts"
                else "POST /api/v1/segments/export.csv")
        self.title = f"Export {self.rows:,} rows ({what}; req/s = rows/s)"

    def warm_up(self, ctx: BenchContext, *, seconds: int) -> None:
        """Nothing here: each measurement warms its own fresh worker up first."""

    def _request(self, ctx: BenchContext, port: int, rows: int) -> dict[str, Any]:
        result = stream_post(port, self.path(), ctx.seed.raw_key, self.body(ctx, rows))
        got_rows = result["lines"] - 1  # the header line
        if result["status"] != 200:
            raise RuntimeError(f"export answered {result['status']}: {result['head'][:300]}")
        declared = result["headers"].get(self.row_header())
        if got_rows != rows or declared != str(rows):
            raise RuntimeError(f"expected {rows:,} rows, read {got_rows:,}"
                               f" ({self.row_header()}: {declared})")
        return result

    def measure(self, ctx: BenchContext, *, seconds: int) -> Measurement:
        server = ExportServer(env=server_environ())
        try:
            with server:
                worker = server.worker_pid()
                self._request(ctx, server.port, WARMUP_ROWS)
                baseline = settled_rss_kib(worker)
                hwm_before = status_kib(worker)[1]
                with RssSampler(worker, interval=0.02) as sampler:
                    result = self._request(ctx, server.port, self.rows)
                    time.sleep(0.05)  # one more sample after the last byte
                after, hwm_after = status_kib(worker)
        except ServerError as exc:
            raise RuntimeError(str(exc)) from exc
        except (OSError, http.client.HTTPException) as exc:
            raise RuntimeError(f"{type(exc).__name__}: {exc}") from exc
        growth = max(0, sampler.peak_kib - baseline) / MIB
        rate = self.rows / result["seconds"]
        return Measurement(
            scenario=self.name, title=self.title,
            requests_per_second=rate, requests=self.rows, errors=0,
            figures={"peak_growth_mib": growth, "peak_rss_mib": sampler.peak_kib / MIB,
                     "baseline_mib": baseline / MIB, "seconds": result["seconds"]},
            notes=(f"{self.rows:,} rows, {result['bytes'] / MIB / MIB:.1f} MiB in"
                   f" {result['seconds']:.2f}s (first byte {result['first_byte'] * 1000:.0f} ms);"
                   f" worker RSS {baseline / MIB:.1f} MiB -> peak {sampler.peak_kib / MIB:.1f}"
                   f" MiB (+{growth:.1f} MiB, {sampler.samples} samples), after"
                   f" {after / MIB:.1f} MiB; VmHWM {hwm_before / MIB:.1f} ->"
                   f" {hwm_after / MIB:.1f} MiB"),
        )


# --- The segment count --------------------------------------------------------------------


class SegmentCount(Scenario):
    name = "segment_count"
    needs_server = False

    def __init__(self):
        self.runs = scaled("BENCH_SEGMENT_COUNT_RUNS", 100, minimum=5)
        self.title = "Segment count, 3-rule filter, in-process (req/s = counts/s)"

    def prepare(self, ctx: BenchContext) -> None:
        from contacts.segments.filters import contacts_matching

        total = ensure_contacts(ctx)
        org = _org(ctx)
        matched = contacts_matching(data.THREE_RULE_FILTER, organization=org).count()
        ctx.values["three_rule_count"] = matched
        self.title = (f"Segment count, 3-rule filter over {total:,} contacts, in-process"
                      " (req/s = counts/s)")
        if not matched:
            raise AssertionError("the three-rule filter matches nothing")

    def warm_up(self, ctx: BenchContext, *, seconds: int) -> None:
        """The measurement does its own 5 warm-up runs."""

    def measure(self, ctx: BenchContext, *, seconds: int) -> Measurement:
        from contacts.segments.filters import contacts_matching

        org = _org(ctx)
        expected = ctx.values["three_rule_count"]
        for _ in range(5):
            contacts_matching(data.THREE_RULE_FILTER, organization=org).count()
        times, wrong = [], 0
        started = time.monotonic()
        for _ in range(self.runs):
            t0 = time.perf_counter()
            n = contacts_matching(data.THREE_RULE_FILTER, organization=org).count()
            times.append((time.perf_counter() - t0) * 1000)
            wrong += n != expected
        elapsed = time.monotonic() - started
        total = ctx.values["contacts_total"]
        return Measurement(
            scenario=self.name, title=self.title,
            requests_per_second=self.runs / elapsed,
            p50_ms=percentile(times, 50), p99_ms=percentile(times, 99),
            requests=self.runs, errors=wrong,
            notes=(f"{expected:,} of {total:,} contacts matched ({expected / total:.1%});"
                   f" mean {statistics.fmean(times):.1f} ms, max {max(times):.1f} ms;"
                   " filter: tags eq vip AND custom_fields.plan eq pro AND email contains"
                   " @example.com (one SQL COUNT)"),
        )


def _prepare_http_count(ctx: BenchContext) -> None:
    if "three_rule_count" not in ctx.values:
        from contacts.segments.filters import contacts_matching

        ensure_contacts(ctx)
        ctx.values["three_rule_count"] = contacts_matching(
            data.THREE_RULE_FILTER, organization=_org(ctx)).count()


def _canonical(tree: dict) -> list[tuple]:
    return sorted((r.get("field"), r.get("operator"), json.dumps(r.get("value")))
                  for r in tree.get("rules", []))


def _expect_http_count(ctx: BenchContext, answer: Any) -> str | None:
    body = answer.get("data", {}) if isinstance(answer, dict) else {}
    if _canonical(body.get("filters", {})) != _canonical(data.THREE_RULE_FILTER) or (
            body.get("filters", {}).get("op") != "and"):
        return f"autopilot parsed another filter: {body.get('filters')}"
    if body.get("matched_count") != ctx.values["three_rule_count"]:
        return (f"matched_count {body.get('matched_count')} != in-process"
                f" {ctx.values['three_rule_count']}")
    return None


CONTACT_SCENARIOS: list[Scenario] = [
    ExportScenario(name="contact_export", kind="contacts", rows=10_000,
                   env_name="BENCH_CONTACT_EXPORT_ROWS"),
    ExportScenario(name="segment_export_10k", kind="segments", rows=10_000,
                   env_name="BENCH_SEGMENT_EXPORT_SMALL_ROWS"),
    ExportScenario(name="segment_export_50k", kind="segments", rows=50_000,
                   env_name="BENCH_SEGMENT_EXPORT_LARGE_ROWS"),
    SegmentCount(),
    PostScenario(
        name="segment_count_http",
        title="Segment count, 3-rule filter, HTTP (POST /api/v1/contacts/segments/autopilot)",
        path="/api/v1/contacts/segments/autopilot",
        body=lambda ctx: {"description": data.THREE_RULE_DESCRIPTION},
        prepare_fn=_prepare_http_count,
        expect=_expect_http_count,
        connections=1,
    ),
]
