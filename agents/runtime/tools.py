"""Tool calls of an agent turn: the arguments are validated against the tool's JSON
Schema, the call goes to the tool's `webhook_url` (else the agent's webhook deployment)
through the hardened HTTP client with a timeout, signed like webhooks.

The local engine never calls tools (agents/engine/local.py), so in test mode and on the
embedded default `local_plan` stands in for the model's choice: the tool whose description
is nearest in meaning to the customer's message, when every required argument can be read
from the message (enum values, `pattern`s, numbers, ids).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any

from jsonschema import validators

from platform_core.ids import new_id

LOCAL_TOOL_SIMILARITY = 0.3
DEFAULT_TIMEOUT = 10


class ToolFailed(Exception):
    """The tool could not be called or answered with an error."""


@dataclass
class PlannedCall:
    id: str
    name: str
    arguments: dict[str, Any]


def openai_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": t["name"],
                                              "description": t.get("description") or "",
                                              "parameters": t["parameters"]}} for t in tools]


def argument_errors(tool: dict[str, Any], arguments: Any) -> list[str]:
    """Why `arguments` do not satisfy the tool's schema (empty when they do)."""
    if not isinstance(arguments, dict):
        return ["the arguments must be a JSON object"]
    schema = tool["parameters"]
    validator = validators.validator_for(schema)(schema)
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
            for e in validator.iter_errors(arguments)][:5]


def parse_call(call: dict[str, Any]) -> PlannedCall:
    """An OpenAI `tool_calls` item; undecodable arguments become a non-object (refused)."""
    function = call.get("function") or {}
    raw = function.get("arguments")
    try:
        arguments = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        arguments = raw
    return PlannedCall(id=call.get("id") or new_id("call"), name=function.get("name") or "",
                       arguments=arguments)


def call_tool(organization, agent, tool: dict[str, Any], arguments: dict[str, Any], *,
              conversation_id: str) -> Any:
    """POST the call and answer the tool's JSON result; ToolFailed on any failure."""
    from messaging.callback_secret import callback_secret_get
    from platform_core.net import http
    from platform_core.webhooks.signing import signature_headers

    url = tool.get("webhook_url") or (agent.config.get("deployment") or {}).get("webhook_url")
    if not url:
        raise ToolFailed(f"tool {tool['name']} has no webhook_url to call")
    call_id = new_id("tcl")
    body = json.dumps({"type": "agent.tool_call", "id": call_id, "agent_id": agent.pk,
                       "conversation_id": conversation_id, "tool": tool["name"],
                       "arguments": arguments}).encode()
    headers = {"Content-Type": "application/json",
               **signature_headers(secret=callback_secret_get(organization).secret,
                                   event_id=call_id, timestamp=int(time.time()), body=body)}
    try:
        response = http.post(url, content=body, headers=headers,
                             timeout=float(tool.get("timeout_seconds") or DEFAULT_TIMEOUT))
    except http.OutboundError as exc:
        raise ToolFailed(f"tool {tool['name']}: {exc}") from exc
    if not 200 <= response.status_code < 300:
        raise ToolFailed(f"tool {tool['name']} answered HTTP {response.status_code}")
    try:
        return json.loads(response.body or b"null")
    except ValueError:
        return {"result": response.body.decode("utf-8", "replace")[:2000]}


# --- The local engine's stand-in for the model's tool choice ------------------------------

_NUMBER = re.compile(r"-?\b\d+(?:\.\d+)?\b")
_IDENTIFIER = re.compile(r"\b[A-Za-z]{0,6}[-#]?\d[\w-]*\b")
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
_ID_NAMES = ("id", "number", "code", "reference", "ref", "sku", "order", "ticket", "zip",
             "postcode", "tracking")


def _value(name: str, schema: dict[str, Any], text: str) -> Any:
    kind = schema.get("type")
    if schema.get("enum"):
        for option in schema["enum"]:
            if isinstance(option, str) and re.search(rf"\b{re.escape(option)}\b", text, re.I):
                return option
        return None
    if isinstance(schema.get("pattern"), str):
        try:
            found = re.search(schema["pattern"].lstrip("^").rstrip("$"), text)
        except re.error:
            return None
        return found.group(0) if found else None
    if kind in ("integer", "number"):
        found = _NUMBER.search(text)
        if not found:
            return None
        number = float(found.group(0))
        return int(number) if kind == "integer" and number.is_integer() else (
            number if kind == "number" else None)
    if kind == "string":
        if schema.get("format") == "email" or "email" in name.lower():
            found = _EMAIL.search(text)
            return found.group(0) if found else None
        if any(part in name.lower().split("_") for part in _ID_NAMES):
            found = _IDENTIFIER.search(text)
            return found.group(0) if found else None
    return None


def extract_arguments(schema: dict[str, Any], text: str) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    arguments = {}
    for name, sub in properties.items():
        value = _value(name, sub if isinstance(sub, dict) else {}, text)
        if value is not None:
            arguments[name] = value
    return arguments


def local_plan(tools: list[dict[str, Any]], text: str) -> list[PlannedCall]:
    """At most one call: the nearest tool in meaning whose required arguments are all in
    the message and pass its schema."""
    from ..engine import minilm

    if not tools or not text.strip():
        return []
    labels = [f"{t['name'].replace('_', ' ')}: {t.get('description') or ''}" for t in tools]
    vectors = minilm.encode([text, *labels]).vectors  # one batch for every tool
    scores = vectors[1:] @ vectors[0]
    ranked = sorted(zip((float(s) for s in scores), tools, strict=True),
                    key=lambda pair: -pair[0])
    for score, tool in ranked:
        if score < LOCAL_TOOL_SIMILARITY:
            break
        arguments = extract_arguments(tool["parameters"], text)
        required = tool["parameters"].get("required") or []
        if all(name in arguments for name in required) and not argument_errors(tool,
                                                                                arguments):
            return [PlannedCall(id=new_id("call"), name=tool["name"], arguments=arguments)]
    return []


def render_result(name: str, result: Any) -> str:
    """A tool result as the reply of the local engine (it cannot phrase one itself)."""
    if isinstance(result, dict):
        for key in ("reply", "message", "answer", "text"):
            if isinstance(result.get(key), str) and result[key].strip():
                return result[key].strip()
        parts = [f"{k.replace('_', ' ')}: {v}" for k, v in result.items()
                 if isinstance(v, str | int | float | bool)]
        if parts:
            return "; ".join(parts) + "."
    if isinstance(result, str) and result.strip():
        return result.strip()
    return f"Done ({name.replace('_', ' ')})."
