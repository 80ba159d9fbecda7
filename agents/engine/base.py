"""The engine interface shared by the local and the live (OpenAI-compatible) engines.

    engine.chat(messages, model=..., temperature=..., max_tokens=..., tools=...,
                response_format=..., stream=False) -> ChatResult
    engine.chat(..., stream=True) -> Iterator[ChatDelta]   (the last one carries usage)
    engine.embed(texts) -> EmbedResult

Messages are OpenAI-shaped dicts (`{"role", "content"}`, plus `tool_calls` /
`tool_call_id` / `name` passed through to a live upstream). Neither engine meters: the
caller goes through `agents.usage.metered` which checks the budget first and records the
usage row after (see docs/ai-engine.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol


class EngineError(Exception):
    """The engine could not answer (upstream refused or failed); `status` is upstream's."""

    def __init__(self, message: str, *, status: int | None = None,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


@dataclass
class ChatResult:
    content: str | None
    model: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str = "stop"
    tool_calls: list[dict[str, Any]] | None = None
    id: str | None = None  # upstream's completion id, when there is one
    notes: dict[str, Any] = field(default_factory=dict)  # how the local engine answered
    usage_record: Any = None  # the AIUsage row, set by agents.engine.calls once metered

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class ChatDelta:
    """One streamed piece: text and/or tool-call deltas; the final one has finish_reason
    and the usage of the whole completion."""

    content: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    finish_reason: str | None = None
    model: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass
class EmbedResult:
    vectors: list[list[float]]
    model: str
    prompt_tokens: int
    usage_record: Any = None  # the AIUsage row, set by agents.engine.calls once metered


class Engine(Protocol):
    name: str  # "local" or "live"

    def chat(self, messages: list[dict[str, Any]], *, model: str | None = None,
             temperature: float | None = None, max_tokens: int | None = None,
             tools: list[dict[str, Any]] | None = None,
             response_format: dict[str, Any] | None = None,
             stream: bool = False) -> ChatResult | Iterator[ChatDelta]: ...

    def embed(self, texts: list[str]) -> EmbedResult: ...

    def count_tokens(self, text: str) -> int: ...

    def default_model(self) -> str: ...
