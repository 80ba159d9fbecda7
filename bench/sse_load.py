"""`python -m bench.sse_load`: many concurrent SSE streams, and when each event reached each.

Run by the `sse_latency` scenario in a process of its own, so that reading the streams
and stamping receipts does not compete with the harness that emits the events. It opens
`--streams` concurrent `GET /api/v1/events/stream` connections to daphne on loopback
(raw asyncio streams speaking HTTP/1.1, chunked or not; `--connect-concurrency` at a
time, each waiting for the stream's `: connected` comment), authenticated with the key
in the BENCH_SSE_KEY variable (never on the command line) as `X-API-Key`. Then, for
every event whose data carries `bench_run == --run`, it records the receipt time on
CLOCK_MONOTONIC against the emit time `bench_sent` (the harness's CLOCK_MONOTONIC: same
machine) and the event id, per stream.

Lines on stdout:
    READY <connected> <failed>     every stream is open (or failed to open)
    COMPLETE                       every open stream has received --events events
    RESULT {json}                  after `STOP` on stdin: the figures (see `_result`)
It exits after RESULT, when stdin closes, or after --max-seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import threading
import time
from dataclasses import dataclass, field

import orjson

STREAM_PATH = "/api/v1/events/stream"


@dataclass
class Stream:
    index: int
    connected: bool = False
    error: str | None = None
    closed: bool = False
    latencies_ms: dict[str, float] = field(default_factory=dict)  # event id -> latency
    duplicates: int = 0


class Load:
    def __init__(self, args: argparse.Namespace, key: str):
        self.args = args
        self.key = key
        self.streams = [Stream(i) for i in range(args.streams)]
        self.complete_sent = False
        self.loop: asyncio.AbstractEventLoop | None = None
        self.stop = asyncio.Event()
        self.writers: list[asyncio.StreamWriter] = []

    # --- one stream --------------------------------------------------------------------

    async def open_stream(self, stream: Stream, gate: asyncio.Semaphore,
                          opened: asyncio.Event) -> None:
        host, port = self.args.host, self.args.port
        try:
            async with gate:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection(host, port), timeout=30)
                self.writers.append(writer)
                writer.write(
                    f"GET {STREAM_PATH} HTTP/1.1\r\nHost: {host}:{port}\r\n"
                    f"X-API-Key: {self.key}\r\nAccept: text/event-stream\r\n"
                    "Cache-Control: no-cache\r\n\r\n".encode()
                )
                await writer.drain()
                status, headers = await asyncio.wait_for(_read_head(reader), timeout=30)
                if status != 200:
                    body = await asyncio.wait_for(reader.read(500), timeout=5)
                    raise RuntimeError(f"status {status}: {body[:300]!r}")
                chunks = _body(reader, chunked="chunked" in headers.get("transfer-encoding", ""))
                parser = _SSEParser()
                # Wait for the stream's greeting before letting the next connection in.
                while not parser.connected:
                    chunk = await asyncio.wait_for(chunks.__anext__(), timeout=30)
                    for event in parser.feed(chunk):
                        self.on_event(stream, event, time.monotonic())
                stream.connected = True
        except Exception as exc:  # noqa: BLE001 - recorded and reported
            stream.error = f"{type(exc).__name__}: {exc}"[:300]
            return
        finally:
            opened.set()
        try:
            async for chunk in chunks:
                received = time.monotonic()
                for event in parser.feed(chunk):
                    self.on_event(stream, event, received)
        except (ConnectionError, asyncio.IncompleteReadError, OSError) as exc:
            stream.error = f"{type(exc).__name__}: {exc}"[:300]
        except asyncio.CancelledError:
            return
        stream.closed = True

    def on_event(self, stream: Stream, data: bytes, received: float) -> None:
        try:
            envelope = orjson.loads(data)
            payload = envelope.get("data") or {}
        except (orjson.JSONDecodeError, AttributeError):
            return
        if payload.get("bench_run") != self.args.run:
            return
        event_id = envelope.get("id")
        if event_id in stream.latencies_ms:
            stream.duplicates += 1
            return
        stream.latencies_ms[event_id] = (received - float(payload["bench_sent"])) * 1000
        if not self.complete_sent and len(stream.latencies_ms) >= self.args.events:
            self.maybe_complete()

    def maybe_complete(self) -> None:
        open_streams = [s for s in self.streams if s.connected]
        if open_streams and all(len(s.latencies_ms) >= self.args.events for s in open_streams):
            self.complete_sent = True
            _say("COMPLETE")

    # --- the whole load ----------------------------------------------------------------

    async def run(self) -> dict:
        self.loop = asyncio.get_running_loop()
        gate = asyncio.Semaphore(self.args.connect_concurrency)
        opened = [asyncio.Event() for _ in self.streams]
        tasks = [asyncio.create_task(self.open_stream(s, gate, o))
                 for s, o in zip(self.streams, opened, strict=True)]
        threading.Thread(target=self._watch_stdin, daemon=True).start()
        try:
            await asyncio.wait_for(asyncio.gather(*(o.wait() for o in opened)),
                                   timeout=self.args.max_seconds)
            connected = sum(s.connected for s in self.streams)
            _say(f"READY {connected} {len(self.streams) - connected}")
            await asyncio.wait_for(self.stop.wait(), timeout=self.args.max_seconds)
        except TimeoutError:
            pass
        finally:
            for task in tasks:
                task.cancel()
            for writer in self.writers:
                writer.close()
            await asyncio.gather(*tasks, return_exceptions=True)
        return _result(self.streams, self.args.events)

    def _watch_stdin(self) -> None:
        for line in sys.stdin:
            if line.strip() == "STOP":
                break
        assert self.loop is not None
        self.loop.call_soon_threadsafe(self.stop.set)


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    status_line = await reader.readline()
    parts = status_line.split()
    if len(parts) < 2:
        raise RuntimeError(f"bad status line {status_line!r}")
    headers = {}
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b"\n", b""):
            return int(parts[1]), headers
        name, _, value = line.decode("latin1").partition(":")
        headers[name.strip().lower()] = value.strip().lower()


async def _body(reader: asyncio.StreamReader, *, chunked: bool):
    if not chunked:
        while data := await reader.read(65536):
            yield data
        return
    while True:
        size_line = await reader.readline()
        if not size_line:
            return
        size = int(size_line.split(b";")[0].strip() or b"0", 16)
        if size == 0:
            return
        yield await reader.readexactly(size)
        await reader.readexactly(2)  # the chunk's CRLF


class _SSEParser:
    """Enough of the SSE format: `data:` lines joined, events dispatched on a blank line."""

    def __init__(self):
        self.buffer = b""
        self.data: list[bytes] = []
        self.connected = False

    def feed(self, chunk: bytes) -> list[bytes]:
        self.buffer += chunk
        events = []
        *lines, self.buffer = self.buffer.split(b"\n")
        for raw in lines:
            line = raw.rstrip(b"\r")
            if not line:
                if self.data:
                    events.append(b"\n".join(self.data))
                    self.data = []
            elif line.startswith(b":"):
                if line.startswith(b": connected"):
                    self.connected = True
            elif line.startswith(b"data:"):
                self.data.append(line[5:].lstrip(b" "))
        return events


def _percentile(ordered: list[float], pct: float) -> float | None:
    if not ordered:
        return None
    rank = max(1, -(-len(ordered) * pct // 100))  # nearest rank
    return ordered[int(rank) - 1]


def _result(streams: list[Stream], events: int) -> dict:
    latencies = sorted(v for s in streams for v in s.latencies_ms.values())
    errors = [s.error for s in streams if s.error]
    # Per event: from its first stream to its last (what one event costs daphne to fan out).
    per_event: dict[str, list[float]] = {}
    for s in streams:
        for event_id, latency in s.latencies_ms.items():
            per_event.setdefault(event_id, []).append(latency)
    spreads = sorted(max(v) - min(v) for v in per_event.values())
    return {
        "streams": len(streams),
        "connected": sum(s.connected for s in streams),
        "complete": sum(len(s.latencies_ms) >= events for s in streams),
        "received": len(latencies),
        "expected": len(streams) * events,
        "duplicates": sum(s.duplicates for s in streams),
        "closed": sum(s.closed for s in streams),
        "p50_ms": _percentile(latencies, 50),
        "p99_ms": _percentile(latencies, 99),
        "max_ms": latencies[-1] if latencies else None,
        "spread_p50_ms": _percentile(spreads, 50),
        "spread_max_ms": spreads[-1] if spreads else None,
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
    }


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _raise_fd_limit(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--streams", type=int, required=True)
    parser.add_argument("--events", type=int, required=True)
    parser.add_argument("--run", required=True)
    parser.add_argument("--connect-concurrency", type=int, default=50)
    parser.add_argument("--max-seconds", type=float, default=300)
    args = parser.parse_args()
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit("sse_load: loopback targets only")
    key = os.environ.get("BENCH_SSE_KEY", "")
    if not key:
        raise SystemExit("sse_load: BENCH_SSE_KEY is not set")
    _raise_fd_limit(args.streams + 256)
    result = asyncio.run(Load(args, key).run())
    _say("RESULT " + orjson.dumps(result).decode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
