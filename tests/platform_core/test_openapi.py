"""The OpenAPI schema generates without warnings and documents the envelope and security."""

from __future__ import annotations

import yaml
from django.core.management import call_command


def test_schema_generates_without_warnings(tmp_path):
    out = tmp_path / "schema.yaml"
    call_command("spectacular", "--file", str(out), "--fail-on-warn", "--validate")
    schema = yaml.safe_load(out.read_text())
    schemes = schema["components"]["securitySchemes"]
    assert schemes["ApiKeyAuth"] == {"type": "apiKey", "in": "header", "name": "X-API-Key"}
    assert schemes["BearerAuth"]["scheme"] == "bearer"
    ok = schema["paths"]["/api/v1/organization"]["get"]["responses"]["200"]
    body = ok["content"]["application/json"]["schema"]
    assert set(body["properties"]) == {"data", "meta"}


def test_schema_and_docs_are_served(anon):
    assert anon.get("/api/v1/schema").status_code == 200
    response = anon.get("/api/docs")
    assert response.status_code == 200
    assert b"swagger" in response.content.lower()
