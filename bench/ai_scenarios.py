"""The AI engine scenarios of `make bench` (issue 15, "Done means"), in-process (no server):
the model work dominates, and the HTTP path is the same as any POST.

- `ai_embeddings`: embeddings per second of the local engine (all-MiniLM-L6-v2 in numpy),
  batches of 32 chunks of about 200 tokens each, as a knowledge-base import embeds them.
- `ai_chat_local`: chat-completion latency of the local engine (p50/p99 of one completion
  of a 3-turn conversation with a question answered from its context).
"""

from __future__ import annotations

import statistics
import time

from .base import BenchContext, Measurement, Scenario

_WORDS = ["delivery", "order", "refund", "account", "password", "invoice", "shipping", "customer", "support", "message", "channel", "campaign", "contact", "update", "payment", "subscription", "plan", "team"]


def _chunk(i: int) -> str:
    words = [_WORDS[(i * 7 + k * 3) % len(_WORDS)] for k in range(170)]
    return " ".join(words) + f" {i}."


class Embeddings(Scenario):
    name = "ai_embeddings"
    title = "Local embeddings (all-MiniLM-L6-v2, batches of 32 chunks of ~200 tokens); req/s = embeddings/s"
    needs_server = False

    def check(self, ctx: BenchContext) -> None:
        from agents.engine import minilm

        encoded = minilm.encode([_chunk(0)])
        if encoded.vectors.shape != (1, 384) or not 150 <= encoded.token_counts[0] <= 256:
            raise AssertionError(f"unexpected encoding {encoded.vectors.shape} "
                                 f"{encoded.token_counts}")

    def warm_up(self, ctx: BenchContext, *, seconds: int) -> None:
        from agents.engine import minilm

        minilm.encode([_chunk(i) for i in range(32)])

    def measure(self, ctx: BenchContext, *, seconds: int) -> Measurement:
        from agents.engine import minilm

        batches, started, n = [], time.perf_counter(), 0
        while time.perf_counter() - started < max(seconds, 3):
            t0 = time.perf_counter()
            minilm.encode([_chunk(n * 32 + i) for i in range(32)], batch_size=32)
            batches.append(time.perf_counter() - t0)
            n += 1
        total = time.perf_counter() - started
        return Measurement(scenario=self.name, title=self.title,
                           requests_per_second=32 * n / total,
                           p50_ms=statistics.median(batches) * 1000, requests=n,
                           notes=f"{n} batches of 32 in {total:.1f}s")


class ChatLocal(Scenario):
    name = "ai_chat_local"
    title = "Chat completion latency, local engine (3 turns, answered from context)"
    needs_server = False
    messages = [
        {"role": "system", "content": "Orders ship within two days. Refunds take five "
                                      "business days. Support is open 9am to 5pm."},
        {"role": "assistant", "content": "Hi! How can I help?"},
        {"role": "user", "content": "How long do refunds take?"},
    ]

    def check(self, ctx: BenchContext) -> None:
        from agents.engine import LocalEngine

        answer = LocalEngine().chat(self.messages)
        if answer.content != "Refunds take five business days.":
            raise AssertionError(f"unexpected answer {answer.content!r}")

    def measure(self, ctx: BenchContext, *, seconds: int) -> Measurement:
        from agents.engine import LocalEngine

        engine, times, started = LocalEngine(), [], time.perf_counter()
        while time.perf_counter() - started < max(seconds, 3):
            t0 = time.perf_counter()
            engine.chat(self.messages)
            times.append(time.perf_counter() - t0)
        times.sort()
        return Measurement(scenario=self.name, title=self.title,
                           requests_per_second=len(times) / sum(times),
                           p50_ms=statistics.median(times) * 1000,
                           p99_ms=times[min(len(times) - 1, int(len(times) * 0.99))] * 1000,
                           requests=len(times))


AI_SCENARIOS: list[Scenario] = [Embeddings(), ChatLocal()]
