"""Helpers for the files tests: a private MEDIA_ROOT per test, uploads and signed downloads."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from platform_core.files import services
from platform_core.files.models import StoredFile
from platform_core.identity import services as identity_services
from platform_core.identity.models import KeyMode, KeyType
from platform_core.identity.principal import Principal
from platform_core.tenancy.context import tenant_context

UPLOAD = "/api/v1/files/upload"
FILES = "/api/v1/files"


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    """Every test stores into its own directory (FileSystemStorage follows the setting)."""
    root = tmp_path / "media"
    root.mkdir()
    settings.MEDIA_ROOT = str(root)
    return root


def upload(client, content: bytes = b"hello", *, name: str = "hello.txt",
           content_type: str = "text/plain", purpose: str | None = "mms_attachment",
           query: str = "", **extra):
    body = {}
    if content is not None:
        body["file"] = SimpleUploadedFile(name, content, content_type=content_type)
    if purpose is not None:
        body["purpose"] = purpose
    return client.post(f"{UPLOAD}{query}", body, format="multipart", **extra)


def download(url: str, client: APIClient | None = None):
    """GET a signed URL (the platform's own) without credentials."""
    parts = urlsplit(url)
    return (client or APIClient()).get(f"{parts.path}?{parts.query}")


def body_of(response) -> bytes:
    return b"".join(response.streaming_content)


def make_key(tenant, scopes: list[str]) -> str:
    _key, raw = identity_services.api_key_create(
        organization=tenant.org, name="files test key", key_type=KeyType.SECRET,
        mode=KeyMode.TEST if tenant.org.sandbox else KeyMode.LIVE, scopes=scopes,
    )
    return raw


def stored_file(tenant, content: bytes = b"data", *, name: str = "a.txt",
                purpose: str = "mms_attachment") -> StoredFile:
    """A file stored through the service, as the tenant's `*` key."""
    principal = Principal(kind="api_key", organization=tenant.org, role="admin",
                          scopes=frozenset({"*"}), key_id=tenant.key.pk)
    with tenant_context(tenant.org):
        return services.file_upload(principal=principal, purpose=purpose,
                                    uploaded=SimpleUploadedFile(name, content))


def storage_name_of(tenant, file_id: str) -> str:
    return StoredFile.objects.for_organization(tenant.org).get(pk=file_id).storage_name
