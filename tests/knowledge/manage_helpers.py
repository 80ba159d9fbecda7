"""Helpers of the knowledge management tests: sandbox connectors whose pages the tests
set (`config.sandbox_pages`), synced through the HTTP API with the eager tasks run."""

from __future__ import annotations

from knowledge.models import Chunk
from platform_core.tenancy.context import tenant_context

from .helpers import KB

NOTION_CREDENTIALS = {"token": "secret_notion_token_123"}


def create_connector(client, kb: str, pages: list[dict] | None = None, **body) -> dict:
    payload = {"type": "notion", "credentials": NOTION_CREDENTIALS, **body}
    if pages is not None:
        payload["config"] = {**payload.get("config", {}), "sandbox_pages": pages}
    response = client.post(f"{KB}/{kb}/connectors", payload, format="json")
    assert response.status_code == 201, response.content
    return response.json()["data"]


def set_pages(client, kb: str, connector: str, pages: list[dict]) -> None:
    response = client.patch(f"{KB}/{kb}/connectors/{connector}",
                            {"config": {"sandbox_pages": pages}}, format="json")
    assert response.status_code == 200, response.content


def sync(client, kb: str, connector: str, capture) -> dict:
    """Sync now; the eager task (and the indexing it queues) runs on commit."""
    with capture(execute=True):
        response = client.post(f"{KB}/{kb}/connectors/{connector}/sync")
    assert response.status_code == 202, response.content
    return connector_state(client, kb, connector)


def connector_state(client, kb: str, connector: str) -> dict:
    response = client.get(f"{KB}/{kb}/connectors")
    assert response.status_code == 200, response.content
    return next(c for c in response.json()["data"] if c["id"] == connector)


def documents(client, kb: str) -> dict[str, dict]:
    """The base's documents by name."""
    response = client.get(f"{KB}/{kb}/documents", {"limit": 200})
    assert response.status_code == 200, response.content
    return {d["name"]: d for d in response.json()["data"]}


def chunk_ids(tenant, document_id: str) -> list[int]:
    with tenant_context(tenant.org):
        return list(Chunk.objects.filter(document_id=document_id).order_by("id")
                    .values_list("id", flat=True))


def page(pid: str, title: str, content: str) -> dict:
    return {"id": pid, "title": title, "content": content}
