"""Fixtures of the AI engine tests: conversations with messages, and a fake OpenAI-compatible
upstream served over real HTTP in this process, recording what it received."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from conversations.models import Conversation
from messaging.models import Message
from platform_core.tenancy.context import tenant_context

CHAT = "/api/v1/ai/chat/completions"
EMBEDDINGS = "/api/v1/ai/embeddings"


def conversation_with(tenant, turns: list[tuple[str, str]], channel: str = "sms") -> str:
    """A conversation of `tenant` with messages `(inbound|outbound, text)`, oldest first."""
    with tenant_context(tenant.org):
        conversation = Conversation.objects.create(organization=tenant.org,
                                                   contact_id="cnt_test", channel=channel)
        for i, (direction, body) in enumerate(turns):
            Message.objects.create(
                organization=tenant.org, channel=channel, direction=direction, body=body,
                to="+14155550123", conversation_id=conversation.pk, status="delivered"
                if direction == "outbound" else "received",
                created_at=conversation.created_at.replace(microsecond=i))
    return conversation.pk


@dataclass
class FakeUpstream:
    """An OpenAI-compatible server: answers scripted replies, records each request."""

    base_url: str = ""
    received: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    # Scripted answers, used in order; the last one repeats. Each is (status, body dict) or
    # ("stream", [chunk dicts]).
    script: list[tuple[Any, Any]] = field(default_factory=list)

    def reply(self, content: str | None = "Hello from upstream", *, tool_calls=None,
              model: str = "gpt-4o-mini", prompt_tokens: int = 12,
              completion_tokens: int = 5) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if tool_calls:
            message["tool_calls"] = tool_calls
        return {"id": "chatcmpl-up", "object": "chat.completion", "created": int(time.time()),
                "model": model, "choices": [{"index": 0, "message": message,
                                             "finish_reason": "tool_calls" if tool_calls
                                             else "stop"}],
                "usage": {"prompt_tokens": prompt_tokens,
                          "completion_tokens": completion_tokens,
                          "total_tokens": prompt_tokens + completion_tokens}}

    def next_answer(self) -> tuple[Any, Any]:
        if not self.script:
            return 200, self.reply()
        return self.script.pop(0) if len(self.script) > 1 else self.script[0]


def _handler(upstream: FakeUpstream):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # quiet
            return

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            upstream.received.append({"path": self.path, **body})
            upstream.headers.append({k.lower(): v for k, v in self.headers.items()})
            status, answer = upstream.next_answer()
            if self.path.endswith("/embeddings") and status == 200 and answer is None:
                inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                answer = {"object": "list", "model": body["model"], "data": [
                    {"object": "embedding", "index": i, "embedding": [0.1 * (i + 1)] * 8}
                    for i in range(len(inputs))],
                    "usage": {"prompt_tokens": 7, "total_tokens": 7}}
            if status == "stream":
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                for chunk in answer:
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True
                return
            payload = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            if status == 429:
                self.send_header("Retry-After", "0")
            self.end_headers()
            self.wfile.write(payload)

    return Handler


@pytest.fixture
def upstream(settings):
    """A running fake upstream; the live engine is configured to use it."""
    fake = FakeUpstream()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    settings.LLM_BASE_URL = fake.base_url
    settings.LLM_API_KEY = "sk-upstream-test"
    settings.LLM_MODEL = "gpt-4o-mini"
    settings.LLM_MAX_RETRIES = 2
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def live_tenant(tenant_factory):
    """A live-mode organization (not sandbox): the live engine answers when configured."""
    return tenant_factory(sandbox=False)
