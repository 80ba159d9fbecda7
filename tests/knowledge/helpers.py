"""Helpers of the knowledge tests: a base, documents indexed through the HTTP API."""

from __future__ import annotations

from django.core.files.uploadedfile import SimpleUploadedFile

KB = "/api/v1/knowledge-bases"
SEARCH = "/api/v1/ai/kb/search"
ANSWERS = "/api/v1/ai/kb/answers"


def create_kb(client, name: str = "Help center") -> str:
    response = client.post(KB, {"name": name, "description": "Answers"}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["data"]["id"]


def add_markdown(client, kb: str, name: str, content: str, capture, **extra) -> dict:
    """A markdown document, indexed (the eager task runs when the request commits)."""
    with capture(execute=True):
        response = client.post(f"{KB}/{kb}/documents",
                               {"source_type": "markdown", "name": name, "content": content,
                                **extra}, format="json")
    assert response.status_code == 201, response.content
    return document(client, kb, response.json()["data"]["id"])


def upload(client, kb: str, name: str, data: bytes, capture, **fields):
    with capture(execute=True):
        return client.post(f"{KB}/{kb}/documents",
                           {"file": SimpleUploadedFile(name, data), **fields},
                           format="multipart")


def document(client, kb: str, doc_id: str) -> dict:
    response = client.get(f"{KB}/{kb}/documents")
    assert response.status_code == 200, response.content
    return next(d for d in response.json()["data"] if d["id"] == doc_id)


def search(client, query: str, **body) -> list[dict]:
    response = client.post(SEARCH, {"query": query, **body}, format="json")
    assert response.status_code == 200, response.content
    return response.json()["data"]["results"]
