"""Bulk actions: one action over up to 200 conversations, each in its own savepoint.

One id failing (unknown, already closed...) never stops the others; its result carries
`ok: false` and the error that the single-conversation verb would have answered.
"""

from __future__ import annotations

from typing import Any

from platform_core.errors import APIError
from platform_core.identity.principal import Principal

from . import assignment, services

MAX_IDS = 200
ACTIONS = ("close", "reopen", "assign", "add_tags", "remove_tags")


def _one(principal: Principal, action: str, conversation_id: str, agent_id, tags):
    if action == "close":
        return services.conversation_close(principal=principal, conversation_id=conversation_id)
    if action == "reopen":
        return services.conversation_reopen(principal=principal,
                                            conversation_id=conversation_id)
    if action == "assign":
        return assignment.conversation_assign(principal=principal,
                                              conversation_id=conversation_id,
                                              agent_id=agent_id)
    if action == "add_tags":
        return services.conversation_change_tags(principal=principal,
                                                 conversation_id=conversation_id, add=tags)
    return services.conversation_change_tags(principal=principal,
                                             conversation_id=conversation_id, remove=tags)


def conversations_bulk(*, principal: Principal, action: str, conversation_ids: list[str],
                       agent_id: str | None = None, tags: list[str] | None = None
                       ) -> dict[str, Any]:
    results = []
    for conversation_id in dict.fromkeys(conversation_ids):
        try:
            conversation = _one(principal, action, conversation_id, agent_id, tags or [])
        except APIError as error:
            results.append({"id": conversation_id, "ok": False,
                            "error": {"code": error.code, "message": error.message}})
        else:
            results.append({"id": conversation_id, "ok": True, "status": conversation.status})
    succeeded = sum(1 for r in results if r["ok"])
    return {"action": action, "total": len(results), "succeeded": succeeded,
            "failed": len(results) - succeeded, "results": results}
