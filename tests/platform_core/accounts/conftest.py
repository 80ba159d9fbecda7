"""Account-security fixtures: a real SMTP server (aiosmtpd) and helpers to read its mail."""

from __future__ import annotations

import email
import email.policy
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

import pytest
from aiosmtpd.controller import Controller
from django.test import override_settings
from rest_framework.test import APIClient

from platform_core.identity import services
from platform_core.identity.models import KeyMode, KeyType, User
from platform_core.identity.principal import Principal
from platform_core.tenancy.context import tenant_context

PASSWORD = "Member-Horse-5-battery"
NEW_PASSWORD = "Violet-Lantern-38-orbit"
PUBLIC = "https://app.example.test"


@dataclass
class Mail:
    to: list[str]
    subject: str
    text: str
    html: str

    def link(self, path_part: str) -> str:
        """The first link in the text body containing `path_part`; the HTML has it too."""
        for url in re.findall(r"https?://\S+", self.text):
            if path_part in url:
                assert url.replace("&", "&amp;") in self.html or url in self.html
                return url
        raise AssertionError(f"no link with {path_part!r} in {self.text!r}")

    def token(self, path_part: str) -> str:
        return parse_qs(urlsplit(self.link(path_part)).query)["token"][0]


@dataclass
class MailHandler:
    messages: list[Mail] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 (aiosmtpd's name)
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        text = message.get_body(preferencelist=("plain",))
        html = message.get_body(preferencelist=("html",))
        with self.lock:
            self.messages.append(Mail(
                to=list(envelope.rcpt_tos),
                subject=str(message["Subject"]),
                text=text.get_content() if text else "",
                html=html.get_content() if html else "",
            ))
        return "250 Message accepted for delivery"

    def to(self, address: str) -> list[Mail]:
        with self.lock:
            return [m for m in self.messages if address in m.to]

    def wait_for(self, address: str, count: int = 1, timeout: float = 5.0) -> list[Mail]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.to(address)
            if len(found) >= count:
                return found
            time.sleep(0.02)
        raise AssertionError(f"expected {count} mail(s) to {address}, got {self.to(address)}")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def smtp():
    """A real SMTP server on a free loopback port; Django sends through it."""
    handler = MailHandler()
    controller = Controller(handler, hostname="127.0.0.1", port=_free_port())
    controller.start()
    try:
        with override_settings(
            EMAIL_BACKEND="django.core.mail.backends.smtp.EmailBackend",
            EMAIL_HOST="127.0.0.1",
            EMAIL_PORT=controller.port,
            EMAIL_USE_TLS=False,
            EMAIL_USE_SSL=False,
            EMAIL_HOST_USER="",
            EMAIL_HOST_PASSWORD="",
            EMAIL_TIMEOUT=5,
            PUBLIC_BASE_URL=PUBLIC,
            DEFAULT_FROM_EMAIL="security@example.test",
        ):
            yield handler
    finally:
        controller.stop()


def add_member(tenant, role: str = "developer", *, email: str | None = None,
               password: str = PASSWORD, org=None) -> User:
    org = org or tenant.org
    owner = Principal(kind="session", organization=org, role="owner", user_id=tenant.owner.pk)
    with tenant_context(org):
        membership = services.user_invite(
            principal=owner, email=email or f"{role}-{User.objects.count()}@example.com",
            name=role.title(), role=role, password=password,
        )
    return membership.user


def make_key(org, *, created_by: User | None, scopes=("*",)) -> str:
    _key, raw = services.api_key_create(
        organization=org, name="k", key_type=KeyType.SECRET,
        mode=KeyMode.TEST if org.sandbox else KeyMode.LIVE, scopes=list(scopes),
        created_by_id=created_by.pk if created_by else None,
    )
    return raw


def key_client(raw: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=raw)
    return client


def bearer(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def login(email: str, password: str, organization: str | None = None):
    body = {"email": email, "password": password}
    if organization:
        body["organization"] = organization
    return APIClient().post("/api/v1/auth/login", body, format="json")


def assert_error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    body = response.json()
    assert body["error"]["code"] == code, body
    assert body["error"]["status"] == status
    assert body["meta"]["request_id"]
    return body


def without_volatile(body: dict) -> dict:
    """The error body minus what differs per request (request id and timestamp)."""
    meta = {k: v for k, v in body["meta"].items() if k not in ("request_id", "timestamp")}
    return {"error": body["error"], "meta": meta}


@pytest.fixture
def member(tenant) -> User:
    return add_member(tenant, "developer", email="dev@example.com")
