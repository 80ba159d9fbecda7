"""The live engine: any OpenAI-compatible upstream at LLM_BASE_URL (OpenAI, Azure, vLLM,
Ollama), through the official `openai` client.

- Timeouts (LLM_TIMEOUT_SECONDS) and retries on 429/5xx/connection errors with backoff
  (the client's own, LLM_MAX_RETRIES, honouring Retry-After).
- The platform's circuit breaker (`platform_core.net.provider_client`, provider `llm`,
  state shared in the cache): failures that survived the retries open it, and while open
  calls fail at once with 503 PROVIDER_UNAVAILABLE instead of waiting on a dead upstream.
- Streaming, tools/function calling and JSON mode are passed through as given.
- Embeddings go upstream only when LLM_EMBEDDING_MODEL is set; otherwise the local
  all-MiniLM-L6-v2 answers, so stored vectors keep one dimension whatever the chat model.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from platform_core.net import provider_client

from . import local
from .base import ChatDelta, ChatResult, EmbedResult, EngineError

PROVIDER = "llm"
_clients: dict[tuple[str, str, float, int], Any] = {}
_lock = threading.Lock()


def configured() -> bool:
    return bool(getattr(settings, "LLM_BASE_URL", "") and getattr(settings, "LLM_API_KEY", ""))


def _client():
    import openai

    key = (settings.LLM_BASE_URL, settings.LLM_API_KEY,
           float(getattr(settings, "LLM_TIMEOUT_SECONDS", 60.0)),
           int(getattr(settings, "LLM_MAX_RETRIES", 2)))
    client = _clients.get(key)
    if client is None:
        with _lock:
            client = _clients.get(key)
            if client is None:
                client = _clients[key] = openai.OpenAI(
                    base_url=key[0], api_key=key[1], timeout=key[2], max_retries=key[3])
    return client


def _host() -> str:
    parts = urlsplit(settings.LLM_BASE_URL)
    return f"{parts.hostname}:{parts.port}" if parts.port else (parts.hostname or "")


def _is_failure(exc: Exception) -> bool | None:
    """Breaker verdict: 5xx and transport failures count; 4xx prove the upstream is up."""
    import openai

    if isinstance(exc, openai.APIStatusError):
        return exc.status_code >= 500
    return isinstance(exc, openai.APIConnectionError)  # timeouts are connection errors


def _call(fn):
    import openai

    try:
        return provider_client.guarded(PROVIDER, _host(), fn, is_failure=_is_failure)
    except openai.APIStatusError as exc:
        retry = exc.response.headers.get("retry-after") if exc.response is not None else None
        raise EngineError(f"The model upstream answered {exc.status_code}.",
                          status=exc.status_code,
                          retry_after=provider_client.retry_after_seconds(retry)) from exc
    except openai.APIConnectionError as exc:
        raise EngineError("The model upstream could not be reached.") from exc


class LiveEngine:
    name = "live"

    def __init__(self) -> None:
        self._local = local.LocalEngine()

    def default_model(self) -> str:
        return getattr(settings, "LLM_MODEL", "") or "gpt-4o-mini"

    def count_tokens(self, value: str) -> int:
        # An estimate before the call (budget checks); metering uses upstream's usage.
        return self._local.count_tokens(value)

    def chat(self, messages: list[dict[str, Any]], *, model: str | None = None,
             temperature: float | None = None, max_tokens: int | None = None,
             tools: list[dict[str, Any]] | None = None,
             response_format: dict[str, Any] | None = None,
             stream: bool = False,
             extra: dict[str, Any] | None = None) -> ChatResult | Iterator[ChatDelta]:
        params: dict[str, Any] = {"model": model or self.default_model(),
                                  "messages": messages}
        for name, value in (("temperature", temperature), ("max_tokens", max_tokens),
                            ("tools", tools), ("response_format", response_format)):
            if value is not None:
                params[name] = value
        params.update(extra or {})
        if stream:
            params["stream"] = True
            params["stream_options"] = {"include_usage": True}
            upstream = _call(lambda: _client().chat.completions.create(**params))
            return self._stream(upstream, params["model"], messages)
        completion = _call(lambda: _client().chat.completions.create(**params))
        choice = completion.choices[0] if completion.choices else None
        message = choice.message if choice else None
        usage = completion.usage
        content = message.content if message else None
        return ChatResult(
            content=content, model=completion.model or params["model"], id=completion.id,
            prompt_tokens=usage.prompt_tokens if usage else self._local.prompt_tokens(messages),
            completion_tokens=(usage.completion_tokens if usage
                               else self.count_tokens(content or "")),
            finish_reason=(choice.finish_reason if choice else None) or "stop",
            tool_calls=([c.model_dump(exclude_none=True) for c in message.tool_calls]
                        if message and message.tool_calls else None),
        )

    def _stream(self, upstream, model: str, messages: list[dict[str, Any]]
                ) -> Iterator[ChatDelta]:
        import openai

        text: list[str] = []
        finish, usage, seen_model = "stop", None, model
        try:
            for chunk in upstream:
                seen_model = chunk.model or seen_model
                if chunk.usage is not None:
                    usage = chunk.usage
                for choice in chunk.choices or []:
                    delta = choice.delta
                    if choice.finish_reason:
                        finish = choice.finish_reason
                    calls = ([c.model_dump(exclude_none=True) for c in delta.tool_calls]
                             if delta and delta.tool_calls else None)
                    if delta and (delta.content or calls):
                        text.append(delta.content or "")
                        yield ChatDelta(content=delta.content, tool_calls=calls,
                                        model=seen_model)
        except openai.APIError as exc:
            raise EngineError("The model upstream broke off the stream.") from exc
        finally:
            upstream.close()
        yield ChatDelta(
            finish_reason=finish, model=seen_model,
            prompt_tokens=usage.prompt_tokens if usage else self._local.prompt_tokens(messages),
            completion_tokens=(usage.completion_tokens if usage
                               else self.count_tokens("".join(text))))

    def embed(self, texts: list[str]) -> EmbedResult:
        model = getattr(settings, "LLM_EMBEDDING_MODEL", "")
        if not model:
            return self._local.embed(texts)
        answer = _call(lambda: _client().embeddings.create(model=model, input=texts))
        vectors = [item.embedding for item in sorted(answer.data, key=lambda d: d.index)]
        tokens = answer.usage.prompt_tokens if answer.usage else sum(
            self.count_tokens(t) for t in texts)
        return EmbedResult(vectors=vectors, model=answer.model or model, prompt_tokens=tokens)
