"""JSON renderer that wraps every DRF response in the envelope."""

from __future__ import annotations

import datetime
import decimal
import uuid
from typing import Any

import orjson
from rest_framework.renderers import BaseRenderer

from platform_core.api.envelope import meta_for


def _default(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, uuid.UUID | datetime.timedelta):
        return str(value)
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"not JSON serializable: {type(value)!r}")


def dumps(value: Any) -> bytes:
    return orjson.dumps(value, default=_default, option=orjson.OPT_NON_STR_KEYS)


class EnvelopeJSONRenderer(BaseRenderer):
    media_type = "application/json"
    format = "json"
    charset = None

    def render(self, data: Any, accepted_media_type=None, renderer_context=None) -> bytes:
        renderer_context = renderer_context or {}
        response = renderer_context.get("response")
        request = renderer_context.get("request")
        if response is not None and response.status_code == 204:
            return b""
        if response is not None and getattr(response, "enveloped", False):
            # Already a full envelope (errors, replayed idempotent answers).
            return dumps(data)
        extra = getattr(response, "envelope_meta", None) or {}
        body = {"data": data, "meta": meta_for(request, **extra)}
        return dumps(body)
