"""Metered model calls: the budget is checked before the engine is called, the usage row
written after. Everything that calls a model goes through here (API views, task helpers,
the knowledge and agents apps)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from platform_core.errors import APIError
from platform_core.tenancy.models import Organization

from ..usage import metering
from . import minilm
from .base import ChatDelta, ChatResult, EmbedResult, EngineError

DEFAULT_COMPLETION_ESTIMATE = 256  # tokens assumed for the budget check without max_tokens


@dataclass(frozen=True)
class Attribution:
    """Who the call is for, on its usage row."""

    feature: str
    agent_id: str = ""
    conversation_id: str = ""
    channel: str = ""


def _engine(organization: Organization):
    from . import get_engine

    return get_engine(organization)


def _upstream_error(exc: EngineError) -> APIError:
    if exc.status in (429, None) or (exc.status or 0) >= 500:
        from platform_core.net.provider_client import ProviderUnavailable

        return ProviderUnavailable("llm", "", str(exc), reason="upstream",
                                   retry_after=exc.retry_after)
    return APIError("AI_UPSTREAM_ERROR", str(exc), details={"upstream_status": exc.status})


def _prompt_estimate(engine, messages: list[dict[str, Any]]) -> int:
    total = 0
    for message in messages:
        content = message.get("content")
        total += engine.count_tokens(content if isinstance(content, str) else str(content or ""))
        total += 3
    return total


def complete(organization: Organization, messages: list[dict[str, Any]], *,
             feature: str, model: str | None = None, temperature: float | None = None,
             max_tokens: int | None = None, tools: list[dict[str, Any]] | None = None,
             response_format: dict[str, Any] | None = None, agent_id: str = "",
             conversation_id: str = "", channel: str = "") -> ChatResult:
    """A chat completion, metered. Raises APIError (402 AI_BUDGET_EXCEEDED, 503
    PROVIDER_UNAVAILABLE, 502 AI_UPSTREAM_ERROR)."""
    engine = _engine(organization)
    chosen = model if engine.name == "live" and model else engine.default_model()
    meter = metering.start(
        organization, feature=feature, engine=engine.name, model=chosen,
        estimate_prompt_tokens=_prompt_estimate(engine, messages),
        estimate_completion_tokens=max_tokens or DEFAULT_COMPLETION_ESTIMATE,
        agent_id=agent_id, conversation_id=conversation_id, channel=channel)
    try:
        result = engine.chat(messages, model=chosen, temperature=temperature,
                             max_tokens=max_tokens, tools=tools,
                             response_format=response_format)
    except EngineError as exc:
        raise _upstream_error(exc) from exc
    result.usage_record = meter.record(model=result.model, prompt_tokens=result.prompt_tokens,
                                       completion_tokens=result.completion_tokens)
    return result


def complete_stream(organization: Organization, messages: list[dict[str, Any]], *,
                    feature: str, model: str | None = None, temperature: float | None = None,
                    max_tokens: int | None = None, tools: list[dict[str, Any]] | None = None,
                    response_format: dict[str, Any] | None = None, agent_id: str = "",
                    conversation_id: str = "", channel: str = "") -> Iterator[ChatDelta]:
    """A streamed completion. The budget check and the upstream call happen before this
    returns (so their errors are answered as errors, not inside a started stream); the
    usage row is written when the last delta is read."""
    engine = _engine(organization)
    chosen = model if engine.name == "live" and model else engine.default_model()
    meter = metering.start(
        organization, feature=feature, engine=engine.name, model=chosen,
        estimate_prompt_tokens=_prompt_estimate(engine, messages),
        estimate_completion_tokens=max_tokens or DEFAULT_COMPLETION_ESTIMATE,
        agent_id=agent_id, conversation_id=conversation_id, channel=channel)
    try:
        deltas = engine.chat(messages, model=chosen, temperature=temperature,
                             max_tokens=max_tokens, tools=tools,
                             response_format=response_format, stream=True)
    except EngineError as exc:
        raise _upstream_error(exc) from exc

    def metered() -> Iterator[ChatDelta]:
        for delta in deltas:
            if delta.finish_reason is not None:
                meter.record(model=delta.model or chosen,
                             prompt_tokens=delta.prompt_tokens or 0,
                             completion_tokens=delta.completion_tokens or 0)
            yield delta

    return metered()


def embed(organization: Organization, texts: list[str], *, feature: str = "embeddings",
          agent_id: str = "", conversation_id: str = "", channel: str = "") -> EmbedResult:
    """Embeddings of `texts`, one vector per text in order, metered."""
    engine = _engine(organization)
    estimate = sum(engine.count_tokens(t) + 2 for t in texts)
    meter = metering.start(organization, feature=feature, engine=engine.name,
                           model=minilm.MODEL_NAME, estimate_prompt_tokens=estimate,
                           agent_id=agent_id, conversation_id=conversation_id,
                           channel=channel)
    try:
        result = engine.embed(list(texts))
    except EngineError as exc:
        raise _upstream_error(exc) from exc
    if result.model == minilm.MODEL_NAME:
        meter.engine = "local"  # a live engine without LLM_EMBEDDING_MODEL embeds locally
    result.usage_record = meter.record(model=result.model, prompt_tokens=result.prompt_tokens,
                                       completion_tokens=0)
    return result
