"""OpenAPI: the envelope around every documented body, and the security schemes."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension

_META = {
    "type": "object",
    "properties": {
        "request_id": {"type": "string"},
        "timestamp": {"type": "string", "format": "date-time"},
        "pagination": {
            "type": "object",
            "properties": {
                "cursor": {"type": "string", "nullable": True},
                "has_more": {"type": "boolean"},
                "total": {"type": "integer"},
            },
        },
    },
    "required": ["request_id", "timestamp"],
}
_ERROR = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "status": {"type": "integer"},
                "details": {"type": "object"},
            },
            "required": ["code", "message", "status"],
        },
        "meta": {
            "type": "object",
            "properties": {
                "request_id": {"type": "string"},
                "timestamp": {"type": "string", "format": "date-time"},
                "docs_url": {"type": "string"},
            },
        },
    },
}


class PlatformAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "platform_core.api.authentication.PlatformAuthentication"
    name = ["ApiKeyAuth", "BearerAuth"]

    def get_security_definition(self, auto_schema):
        return [
            {"type": "apiKey", "in": "header", "name": "X-API-Key"},
            {
                "type": "http",
                "scheme": "bearer",
                "description": "A session JWT, or an API key where custom headers are blocked.",
            },
        ]


def wrap_in_envelope(result, generator, request, public):
    """Postprocessing hook: JSON bodies appear inside `{data, meta}`; errors as `{error, meta}`."""
    components = result.setdefault("components", {}).setdefault("schemas", {})
    components["Meta"] = _META
    components["ErrorEnvelope"] = _ERROR
    for path_item in result.get("paths", {}).values():
        for operation in path_item.values():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            # OpenAI-compatible operations answer the provider's object itself (plus meta).
            raw = operation.pop("x-raw-body", False)
            for code, response in list(operation["responses"].items()) if not raw else []:
                content = response.get("content", {})
                body = content.get("application/json")
                if body and str(code).startswith("2") and "schema" in body:
                    body["schema"] = {
                        "type": "object",
                        "properties": {
                            "data": body["schema"],
                            "meta": {"$ref": "#/components/schemas/Meta"},
                        },
                        "required": ["data", "meta"],
                    }
            operation["responses"].setdefault(
                "default",
                {
                    "description": "Error envelope",
                    "content": {
                        "application/json": {
                            "schema": {"$ref": "#/components/schemas/ErrorEnvelope"}
                        }
                    },
                },
            )
    return result
