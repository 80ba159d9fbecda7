"""`webhook` deployments: the customer's own system answers.

Each turn is POSTed to the deployment's `webhook_url` through the hardened client (SSRF
checks at call time, a timeout), signed like webhook deliveries with the organization's
callback secret (`X-Service-Signature`, Standard Webhooks headers). A 2xx JSON answer
`{"reply": "..."}` is sent to the customer through messaging; `{"handoff": true}` (or a
`reason_category`) hands the thread to a person; a failure or no reply hands off as
`tool_failed`. The turn is metered (no model tokens: engine `webhook`).
"""

from __future__ import annotations

import json
import time
from typing import Any

from platform_core.ids import new_id

from ..agent_models import Agent
from ..usage import metering
from .tools import ToolFailed
from .turn import TurnResult, _reply, handoff

TIMEOUT_SECONDS = 10
THREAD_TURNS = 10
_REASONS = ("cant_understand", "policy_block", "customer_request", "tool_failed",
            "escalation_threshold", "manual")


def _payload(organization, conversation, agent: Agent, message, turn_id: str) -> bytes:
    from messaging.models import Message

    rows = list(Message.objects.for_organization(organization)
                .filter(conversation_id=conversation.pk, created_at__lte=message.created_at)
                .order_by("-created_at", "-id")
                .values("id", "direction", "body", "created_at")[:THREAD_TURNS])
    thread = [{"id": r["id"], "role": "user" if r["direction"] == "inbound" else "assistant",
               "text": r["body"], "at": r["created_at"].isoformat()} for r in reversed(rows)]
    return json.dumps({
        "type": "agent.turn", "id": turn_id, "agent_id": agent.pk,
        "conversation_id": conversation.pk, "channel": conversation.channel,
        "contact_id": conversation.contact_id,
        "message": {"id": message.pk, "text": message.body, "from": message.from_address,
                    "to": message.to},
        "thread": thread}).encode()


def post_turn(organization, url: str, body: bytes, turn_id: str) -> Any:
    from messaging.callback_secret import callback_secret_get
    from platform_core.net import http
    from platform_core.webhooks.signing import signature_headers

    headers = {"Content-Type": "application/json",
               **signature_headers(secret=callback_secret_get(organization).secret,
                                   event_id=turn_id, timestamp=int(time.time()), body=body)}
    try:
        response = http.post(url, content=body, headers=headers, timeout=TIMEOUT_SECONDS)
    except http.OutboundError as exc:
        raise ToolFailed(f"webhook deployment: {exc}") from exc
    if not 200 <= response.status_code < 300:
        raise ToolFailed(f"webhook deployment answered HTTP {response.status_code}")
    try:
        return json.loads(response.body or b"null")
    except ValueError as exc:
        raise ToolFailed("webhook deployment answered no JSON") from exc


def run(organization, conversation, agent: Agent, message) -> TurnResult:
    url = (agent.config.get("deployment") or {}).get("webhook_url")
    if not url:
        raise ToolFailed("webhook deployment without a URL")
    # Metered like a model call (budget first): the insights count delegated turns too.
    meter = metering.start(organization, feature="agent.webhook", engine="webhook",
                           model="webhook", estimate_prompt_tokens=0,
                           agent_id=agent.pk, conversation_id=conversation.pk,
                           channel=conversation.channel)
    turn_id = new_id("atn")
    answer = post_turn(organization, url, _payload(organization, conversation, agent, message,
                                                   turn_id), turn_id)
    meter.record(model="webhook", prompt_tokens=0, completion_tokens=0)
    answer = answer if isinstance(answer, dict) else {}
    if answer.get("handoff") or answer.get("reason_category"):
        reason = answer.get("reason_category")
        return handoff(organization, conversation, agent.pk,
                       reason if reason in _REASONS else "manual", agent=agent,
                       detail={"why": "webhook_handoff"})
    reply = answer.get("reply")
    if not isinstance(reply, str) or not reply.strip():
        raise ToolFailed("webhook deployment answered no reply")
    return _reply(organization, conversation, agent, reply.strip()[:4000], [], [], 0, None)
