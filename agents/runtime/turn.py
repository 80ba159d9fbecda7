"""One agent turn: the answer to one inbound message of an AI-led conversation.

In order: the thread must still be AI-led and open (a human holding it silences the
agent); the content filter on the message (`policy_block`); the customer asking for a
person (`customer_request`); the unresolved-turn limit (`escalation_threshold`); then a
`webhook` deployment delegates the turn (delegate.py), any other answers with the model:
system prompt + the organization's knowledge (retrieval, numbered sources) + the recent
thread, PII redacted when `pii_redaction`; tool calls validated, executed and fed back for
at most `max_tool_steps` rounds (a failing tool: `tool_failed`); a grounded answer below
`min_confidence` hands off (`cant_understand`); the content filter on the answer; the
reply goes through messaging (`conversations.replies.conversation_reply`) with its
citations. Every model call is metered with the agent, conversation and channel; the AI
cap reached hands the thread off instead of dropping it.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from django.db import connection

from platform_core.errors import APIError
from platform_core.identity.principal import Principal

from ..agent_models import Agent, AgentStatus, DeployChannel
from . import safety, state, tools

logger = logging.getLogger("agents.runtime")

DEFAULTS = {"min_confidence": 0.3, "max_unresolved_turns": 5, "max_tool_steps": 4,
            "message": "Let me connect you with a member of our team."}
THREAD_TURNS = 10
RETRIEVAL_LIMIT = 4
CONTEXT_SOURCES = 3
FEATURE = "agent.reply"
_MARKER = re.compile(r"\[(\d{1,2})\]")


@dataclass
class TurnResult:
    outcome: str  # replied, handoff, skipped
    reason: str = ""
    message_id: str | None = None
    citations: list[dict[str, Any]] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)


def settings_of(agent: Agent | None) -> dict[str, Any]:
    configured = ((agent.config if agent else {}) or {}).get("handoff") or {}
    return {**DEFAULTS, **{k: v for k, v in configured.items() if v is not None}}


def principal_of(organization, agent_id: str) -> Principal:
    """The agent acting on the thread: activity rows and sends name it (`agent`, id)."""
    return Principal(kind="agent", organization=organization, role="developer",
                     key_id=agent_id)


def handoff(organization, conversation, agent_id: str, reason: str, *,
            agent: Agent | None = None, detail: dict[str, Any] | None = None) -> TurnResult:
    """The conversations app's handoff with `reason`; the customer is told a person
    takes over. A thread a human took meanwhile is left alone."""
    from conversations.activity import record
    from conversations.handoff import handoff_request
    from conversations.replies import conversation_reply

    principal = principal_of(organization, agent_id)
    try:
        conversation = handoff_request(principal=principal, conversation_id=conversation.pk,
                                       target_queue=None, reason_category=reason)
    except APIError as exc:
        logger.info("handoff of %s not made: %s", conversation.pk, exc)
        return TurnResult("skipped", reason="not_ai_led")
    notice = settings_of(agent)["message"]
    message_id = None
    if notice:
        try:
            message_id = conversation_reply(principal=principal,
                                            conversation_id=conversation.pk, body=notice).pk
        except APIError as exc:  # no address on the channel, outside the window...
            logger.info("handoff notice to %s not sent: %s", conversation.pk, exc)
    record(conversation, "agent_turn", principal=principal, event="conversation.updated",
           data={"outcome": "handoff", "reason_category": reason, "detail": detail or {},
                 "message_id": message_id})
    return TurnResult("handoff", reason=reason, message_id=message_id, detail=detail or {})


def run_turn(organization, conversation_id: str, message_id: str) -> TurnResult:
    from conversations.models import Conversation
    from messaging.models import Message

    conversation = (Conversation.objects.for_organization(organization)
                    .select_related("organization").filter(pk=conversation_id).first())
    message = Message.objects.for_organization(organization).filter(pk=message_id).first()
    if conversation is None or message is None:
        return TurnResult("skipped", reason="gone")
    if conversation.status != "open" or not conversation.ai_led or not conversation.ai_agent_id:
        return TurnResult("skipped", reason="not_ai_led")  # a human holds the thread
    agent_id = conversation.ai_agent_id
    agent = Agent.objects.for_organization(organization).filter(pk=agent_id).first()
    if agent is None or agent.status != AgentStatus.ACTIVE:
        return handoff(organization, conversation, agent_id, "manual",
                       detail={"why": "agent_unavailable"})
    text = message.body or ""
    config = settings_of(agent)
    guard = agent.safety_config or {}
    if guard.get("content_filter") and safety.blocked(text):
        return handoff(organization, conversation, agent_id, "policy_block", agent=agent,
                       detail={"why": "content_filter_input"})
    if safety.asks_for_human(text):
        return handoff(organization, conversation, agent_id, "customer_request", agent=agent)
    if safety.says_solved(text):
        state.reset_unresolved(organization, conversation.pk)
    elif state.unresolved_turns(organization, conversation.pk) >= config[
            "max_unresolved_turns"]:
        return handoff(organization, conversation, agent_id, "escalation_threshold",
                       agent=agent, detail={"unresolved_turns": config["max_unresolved_turns"]})
    try:
        if agent.deploy_channel == DeployChannel.WEBHOOK:
            from . import delegate

            return delegate.run(organization, conversation, agent, message)
        return _answer(organization, conversation, agent, message, config)
    except tools.ToolFailed as exc:
        return handoff(organization, conversation, agent_id, "tool_failed", agent=agent,
                       detail={"error": str(exc)[:300]})
    except APIError as exc:
        # The AI cap (402) or the model upstream down: a person takes over, nothing dropped.
        reason = "policy_block" if exc.code == "AI_BUDGET_EXCEEDED" else "cant_understand"
        return handoff(organization, conversation, agent_id, reason, agent=agent,
                       detail={"error": exc.code})
    except Exception:  # a bug must not leave the customer unanswered: a person takes over
        logger.exception("agent turn failed on %s", conversation.pk)
        return handoff(organization, conversation, agent_id, "cant_understand", agent=agent,
                       detail={"error": "internal"})


# --- The model path ---------------------------------------------------------------------


def _retrieve(organization, agent: Agent, query: str) -> list:
    from knowledge import retrieval

    bases = (agent.config or {}).get("knowledge_base_ids")
    # The embedded SQLite default has no PostgreSQL full text: the vector list alone.
    mode = "hybrid" if connection.vendor == "postgresql" else "vector"
    try:
        return retrieval.retrieve(organization, query, knowledge_base_ids=bases,
                                  limit=RETRIEVAL_LIMIT, feature="agent.retrieval", mode=mode)
    except APIError:
        raise
    except Exception:  # retrieval is best effort: answer (or hand off) without it
        logger.exception("retrieval failed for agent %s", agent.pk)
        return []


def _thread(organization, conversation, message, redact: bool) -> list[dict[str, str]]:
    from messaging.models import Message

    rows = list(Message.objects.for_organization(organization)
                .filter(conversation_id=conversation.pk, created_at__lte=message.created_at)
                .exclude(body="").order_by("-created_at", "-id")
                .values_list("direction", "body")[:THREAD_TURNS])
    turns = []
    for direction, body in reversed(rows):
        content = safety.redact(body) if redact else body
        turns.append({"role": "user" if direction == "inbound" else "assistant",
                      "content": content})
    if not turns or turns[-1]["role"] != "user":  # the message itself ends the thread
        body = message.body or ""
        turns.append({"role": "user", "content": safety.redact(body) if redact else body})
    return turns


def _system(agent: Agent, hits: list) -> str:
    parts = [agent.system_prompt.strip()] if agent.system_prompt.strip() else []
    if hits:
        parts.append("Answer from these sources when they apply; numbered sources are "
                     "cited like [1].")
        parts.extend(f"[{i}] {hit.text.strip()}" for i, hit in enumerate(hits, start=1))
    return "\n".join(parts) or "You are a helpful customer service assistant."


def _tool_message(calls: list[tools.PlannedCall], content: str | None) -> dict[str, Any]:
    return {"role": "assistant", "content": content or "",
            "tool_calls": [{"id": c.id, "type": "function",
                            "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                           for c in calls]}


def citations_for(answer: str, hits: list) -> tuple[str, list[dict[str, Any]]]:
    """(the answer without `[n]` markers, the cited documents): the markers the model
    wrote, else the source whose text holds the answer (what the local engine quotes)."""
    cited = []
    for number in _MARKER.findall(answer):
        index = int(number) - 1
        if 0 <= index < len(hits) and hits[index] not in cited:
            cited.append(hits[index])
    clean = re.sub(r"\s*\[\d{1,2}\]", "", answer).strip()
    if not cited and clean:
        cited = [h for h in hits if clean.rstrip(".") in h.text][:1]
    seen, documents = set(), []
    for hit in cited:
        if hit.document_id not in seen:
            seen.add(hit.document_id)
            documents.append({"document_id": hit.document_id, "name": hit.document_name,
                              "knowledge_base_id": hit.knowledge_base_id,
                              "chunk_id": hit.chunk_id, "similarity": hit.similarity})
    return clean, documents


def _answer(organization, conversation, agent: Agent, message, config: dict[str, Any]
            ) -> TurnResult:
    from agents import engine

    redact = bool((agent.safety_config or {}).get("pii_redaction"))
    text = message.body or ""
    query = safety.redact(text) if redact else text
    hits = _retrieve(organization, agent, query)
    # Only sources relevant enough go in the prompt: less noise and fewer tokens for a live
    # model, fewer sentences for the local engine to embed.
    sources = [h for h in hits if h.similarity >= config["min_confidence"]][:CONTEXT_SOURCES]
    messages = [{"role": "system", "content": _system(agent, sources)},
                *_thread(organization, conversation, message, redact)]
    local = engine.get_engine(organization).name == "local"
    offered = tools.openai_tools(agent.tools) if agent.tools else None
    by_name = {t["name"]: t for t in agent.tools or []}
    used: list[dict[str, Any]] = []
    tokens, answer = 0, None
    attribution = {"agent_id": agent.pk, "conversation_id": conversation.pk,
                   "channel": conversation.channel}
    try:
        for step in range(config["max_tool_steps"]):
            result = engine.complete(organization, messages, feature=FEATURE, model=agent.model,
                                     tools=offered, **attribution)
            tokens += result.total_tokens
            calls = [tools.parse_call(c) for c in result.tool_calls or []]
            if not calls and local and step == 0 and agent.tools:
                calls = tools.local_plan(agent.tools, query)
            if not calls:
                answer = result.content or ""
                break
            messages.append(_tool_message(calls, result.content))
            last = None
            for call in calls:
                tool = by_name.get(call.name)
                errors = (["unknown tool"] if tool is None
                          else tools.argument_errors(tool, call.arguments))
                if errors:  # told to the model, which may correct itself next round
                    content: Any = {"error": "invalid arguments", "issues": errors}
                else:
                    content = tools.call_tool(organization, agent, tool, call.arguments,
                                              conversation_id=conversation.pk)
                    used.append({"name": call.name, "arguments": call.arguments})
                    last = (call.name, content)
                messages.append({"role": "tool", "tool_call_id": call.id,
                                 "content": json.dumps(content)[:20_000]})
            if local and last is not None:  # the local engine cannot phrase a tool result
                answer = tools.render_result(*last)
                break
    finally:
        state.add_tokens(organization, agent.pk, tokens)
    if answer is None:
        return handoff(organization, conversation, agent.pk, "cant_understand", agent=agent,
                       detail={"why": "tool_steps_exhausted", "tool_calls": used})
    confidence = max((h.similarity for h in hits), default=None)
    grounded = bool(hits) or bool((agent.config or {}).get("knowledge_base_ids"))
    if not used and grounded and (confidence or 0.0) < config["min_confidence"]:
        return handoff(organization, conversation, agent.pk, "cant_understand", agent=agent,
                       detail={"why": "low_confidence", "confidence": confidence})
    if (agent.safety_config or {}).get("content_filter") and safety.blocked(answer):
        return handoff(organization, conversation, agent.pk, "policy_block", agent=agent,
                       detail={"why": "content_filter_output"})
    answer, cited = citations_for(answer, sources if not used else [])
    if not answer:
        return handoff(organization, conversation, agent.pk, "cant_understand", agent=agent,
                       detail={"why": "empty_answer"})
    return _reply(organization, conversation, agent, answer, cited, used, tokens, confidence)


def _reply(organization, conversation, agent: Agent, answer: str, cited: list[dict],
           used: list[dict], tokens: int, confidence: float | None) -> TurnResult:
    from conversations.activity import record
    from conversations.replies import conversation_reply

    body = answer
    if cited:
        body += f" (Source: {', '.join(c['name'] for c in cited)})"
    principal = principal_of(organization, agent.pk)
    sent = conversation_reply(principal=principal, conversation_id=conversation.pk, body=body)
    state.add_turn(organization, conversation.pk, tokens=tokens)
    conversation.refresh_from_db()
    record(conversation, "agent_turn", principal=principal, event="conversation.updated",
           data={"outcome": "replied", "message_id": sent.pk, "citations": cited,
                 "tool_calls": used, "confidence": confidence, "tokens": tokens})
    return TurnResult("replied", message_id=sent.pk, citations=cited, tool_calls=used)
