"""OpenAI-compatible operations: `/ai/chat/completions` and `/ai/embeddings`.

They answer OpenAI's own objects at the top level plus the platform's `meta` (with the
engine and the call's cost), so the official clients work unmodified with
`base_url=<host>/api/v1/ai`; errors keep the platform's error envelope, and a malformed
body is 400 (Document 3, 4.2). `stream: true` answers OpenAI-style server-sent chunks
ending `data: [DONE]`.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import orjson
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers as drf_serializers
from rest_framework.response import Response

from agents.engine import EngineError, calls, get_engine
from platform_core.api.envelope import error_body, meta_for
from platform_core.api.serialization import validated_input
from platform_core.errors import APIError
from platform_core.ids import ulid

from . import serializers as s
from .base import AIView, bad_request


def _completion_id() -> str:
    return f"chatcmpl-{ulid()}"


def _base64(vector: list[float]) -> str:
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode()


def _raw(data: dict[str, Any]) -> Response:
    response = Response(data)
    response.enveloped = True  # the object is the body itself (conventions 10)
    return response


class ChatCompletionsView(AIView):
    # A completion creates nothing and a stream cannot be replayed: no idempotency record.
    idempotent_posts = False

    @extend_schema(
        request=s.ChatCompletionRequestSerializer,
        responses={(200, "application/json"): s.ChatCompletionSerializer,
                   (200, "text/event-stream"): OpenApiResponse(
                       response=OpenApiTypes.STR,
                       description="With `stream: true`: `data: {chat.completion.chunk}` "
                                   "events, then `data: [DONE]`."),
                   400: OpenApiResponse(description="Malformed body (error envelope).")},
        extensions={"x-raw-body": True},
        description="OpenAI-compatible chat completion: the chat.completion object plus "
                    "`meta`. `stream: true` answers `text/event-stream` chunks "
                    "(chat.completion.chunk) ending `data: [DONE]`; with "
                    "`stream_options.include_usage` a last chunk carries `usage`. `tools` "
                    "and `response_format` pass through to a live upstream; the local engine "
                    "answers `model: local` (see docs/ai-engine.md).")
    def post(self, request):
        try:
            body = dict(validated_input(s.ChatCompletionRequestSerializer,
                                        request.data).validated_data)
        except drf_serializers.ValidationError as exc:
            raise bad_request(exc) from None
        messages = [{k: v for k, v in m.items()} for m in body["messages"]]
        tools = [dict(t) for t in body["tools"]] if body.get("tools") else None
        options = {"model": body.get("model"), "temperature": body.get("temperature"),
                   "max_tokens": body.get("max_tokens"), "tools": tools,
                   "response_format": (dict(body["response_format"])
                                       if body.get("response_format") else None)}
        engine = get_engine(self.organization).name
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            deltas = calls.complete_stream(self.organization, messages,
                                           feature="chat.completions", **options)
            return self._stream(deltas, include_usage, request)
        result = calls.complete(self.organization, messages, feature="chat.completions",
                                **options)
        message: dict[str, Any] = {"role": "assistant", "content": result.content}
        if result.tool_calls:
            message["tool_calls"] = result.tool_calls
        return _raw({
            "id": _completion_id(), "object": "chat.completion", "created": int(time.time()),
            "model": result.model, "system_fingerprint": None,
            "choices": [{"index": 0, "message": message, "finish_reason": result.finish_reason,
                         "logprobs": None}],
            "usage": {"prompt_tokens": result.prompt_tokens,
                      "completion_tokens": result.completion_tokens,
                      "total_tokens": result.total_tokens},
            "meta": meta_for(request, engine=engine,
                             cost_cents=result.usage_record.cost_cents),
        })

    def _stream(self, deltas: Iterator, include_usage: bool, request) -> StreamingHttpResponse:
        completion_id, created = _completion_id(), int(time.time())

        def chunk(model: str, choices: list, **extra: Any) -> bytes:
            body = {"id": completion_id, "object": "chat.completion.chunk",
                    "created": created, "model": model, "choices": choices, **extra}
            return b"data: " + orjson.dumps(body) + b"\n\n"

        def events() -> Iterator[bytes]:
            first = True
            try:
                for delta in deltas:
                    model = delta.model or "local"
                    if delta.finish_reason is None:
                        piece: dict[str, Any] = {}
                        if first:
                            piece["role"] = "assistant"
                            first = False
                        if delta.content is not None:
                            piece["content"] = delta.content
                        if delta.tool_calls:
                            piece["tool_calls"] = delta.tool_calls
                        yield chunk(model, [{"index": 0, "delta": piece,
                                             "finish_reason": None}])
                        continue
                    yield chunk(model, [{"index": 0, "delta": {},
                                         "finish_reason": delta.finish_reason}])
                    if include_usage:
                        prompt, completion = delta.prompt_tokens or 0, delta.completion_tokens or 0
                        yield chunk(model, [], usage={
                            "prompt_tokens": prompt, "completion_tokens": completion,
                            "total_tokens": prompt + completion})
            except (EngineError, APIError) as exc:
                error = exc if isinstance(exc, APIError) else APIError(
                    "AI_UPSTREAM_ERROR", str(exc), details={"upstream_status": exc.status})
                body = error_body(request, error.code, error.message, details=error.details)
                yield b"data: " + orjson.dumps(body) + b"\n\n"
            yield b"data: [DONE]\n\n"

        response = StreamingHttpResponse(events(), content_type="text/event-stream")
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"
        return response


class EmbeddingsView(AIView):
    idempotent_posts = False  # reading vectors creates nothing

    @extend_schema(
        request=s.EmbeddingsRequestSerializer,
        responses={200: s.EmbeddingsSerializer,
                   400: OpenApiResponse(description="Malformed body (error envelope).")},
        extensions={"x-raw-body": True},
        description="OpenAI-compatible embeddings: `input` one string or up to 96 strings "
                    "of 1-10,000 characters; one vector per input in order. The local "
                    "engine's vectors are all-MiniLM-L6-v2 (384 dimensions, unit length: "
                    "cosine = dot product); inputs past 256 tokens are truncated.")
    def post(self, request):
        try:
            body = validated_input(s.EmbeddingsRequestSerializer, request.data).validated_data
        except drf_serializers.ValidationError as exc:
            raise bad_request(exc) from None
        texts = body["input"]
        result = calls.embed(self.organization, texts, feature="embeddings")
        encode = _base64 if body.get("encoding_format") == "base64" else (lambda v: v)
        return _raw({
            "object": "list",
            "data": [{"object": "embedding", "embedding": encode(vector), "index": i}
                     for i, vector in enumerate(result.vectors)],
            "model": result.model,
            "usage": {"prompt_tokens": result.prompt_tokens,
                      "total_tokens": result.prompt_tokens},
            "meta": meta_for(request, engine=result.usage_record.engine,
                             cost_cents=result.usage_record.cost_cents),
        })
