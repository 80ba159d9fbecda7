"""Reads of AI agents that other screens need."""

from __future__ import annotations

from .agent_models import Agent


def agent_names(organization, ids) -> dict[str, str]:
    """`{agent_id: name}` in one query; a deleted agent is simply absent."""
    ids = {i for i in ids if i}
    if not ids:
        return {}
    return dict(Agent.objects.for_organization(organization).filter(pk__in=ids)
                .values_list("id", "name"))
