"""Email over SMTP through Django's email framework, received by a real aiosmtpd server."""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from email import message_from_bytes, policy

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

from messaging.models import Message
from messaging.providers.adapters.smtp import SMTPProvider
from messaging.providers.base import ProviderError
from platform_core.net.provider_client import CircuitBreaker

pytestmark = pytest.mark.django_db

USER, PASSWORD = "mailer", "smtp-password-secret"
REFUSED = "nobody@example.com"
LATER = "busy@example.com"


@dataclass
class Mailbox:
    received: list = field(default_factory=list)
    logins: list = field(default_factory=list)

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):  # noqa: N802
        if address == REFUSED:
            return "550 5.1.1 <nobody@example.com>: Recipient address rejected: User unknown"
        if address == LATER:
            return "451 4.7.1 Greylisted, try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):  # noqa: N802
        self.received.append((envelope.mail_from, list(envelope.rcpt_tos),
                              message_from_bytes(envelope.original_content,
                                                 policy=policy.default)))
        return "250 2.0.0 Ok: queued"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def smtp_server(fast_retries):
    mailbox = Mailbox()

    def authenticator(server, session, envelope, mechanism, auth_data):
        ok = (auth_data.login, auth_data.password) == (USER.encode(), PASSWORD.encode())
        mailbox.logins.append((mechanism, auth_data.login.decode(), ok))
        return AuthResult(success=ok, handled=False)

    controller = Controller(mailbox, hostname="127.0.0.1", port=_free_port(),
                            authenticator=authenticator, auth_require_tls=False)
    controller.start()
    controller.mailbox = mailbox
    yield controller
    controller.stop()


@pytest.fixture
def smtp_account(live_tenant, smtp_server, put_account, account_row):
    put_account(live_tenant, "email", {
        "provider": "smtp",
        "config": {"host": "127.0.0.1", "port": smtp_server.port, "use_tls": False,
                   "username": USER, "from": "Acme <hello@acme.example>"},
        "credentials": {"password": PASSWORD},
    })
    return account_row(live_tenant, "email")


def _email(tenant, to="ada@example.com", **fields) -> Message:
    fields.setdefault("subject", "Your receipt")
    fields.setdefault("body", "Thanks for your order.")
    return Message(organization=tenant.org, channel="email", to=to, **fields)


def test_sends_through_the_accounts_server_with_login(live_tenant, smtp_server, smtp_account):
    message = _email(live_tenant)
    result = SMTPProvider().send(message, smtp_account)
    assert result.status == "sent"
    ((mail_from, rcpt_tos, received),) = smtp_server.mailbox.received
    assert mail_from == "hello@acme.example"
    assert rcpt_tos == ["ada@example.com"]
    assert received["Subject"] == "Your receipt"
    assert received["From"] == "Acme <hello@acme.example>"
    assert received["To"] == "ada@example.com"
    assert received["Message-ID"] == result.provider_message_id
    assert result.provider_message_id.endswith("@acme.example>")
    assert received["X-Engage-Message-Id"] == message.pk
    assert received.get_content().strip() == "Thanks for your order."
    assert smtp_server.mailbox.logins == [(smtp_server.mailbox.logins[0][0], USER, True)]


def test_html_body_goes_as_an_alternative(live_tenant, smtp_server, smtp_account):
    SMTPProvider().send(_email(live_tenant, body="<p>Hello <b>Ada</b></p>"), smtp_account)
    received = smtp_server.mailbox.received[0][2]
    assert received.get_content_type() == "multipart/alternative"
    plain = received.get_body(("plain",)).get_content()
    html = received.get_body(("html",)).get_content()
    assert plain.strip() == "Hello Ada"
    assert "<b>Ada</b>" in html


def test_refused_recipient_keeps_the_reply_code_and_text(live_tenant, smtp_server, smtp_account):
    result = SMTPProvider().send(_email(live_tenant, to=REFUSED), smtp_account)
    assert (result.status, result.error_code) == ("failed", "550")
    assert "User unknown" in result.error_message
    assert smtp_server.mailbox.received == []


def test_temporary_refusal_is_retryable(live_tenant, smtp_server, smtp_account):
    with pytest.raises(ProviderError) as caught:
        SMTPProvider().send(_email(live_tenant, to=LATER), smtp_account)
    assert caught.value.retryable
    assert caught.value.code == "451"


def test_wrong_password_fails_the_send(live_tenant, smtp_server, smtp_account):
    smtp_account.credentials = {"password": "wrong"}
    result = SMTPProvider().send(_email(live_tenant), smtp_account)
    assert (result.status, result.error_code) == ("failed", "535")
    assert smtp_server.mailbox.received == []


def test_unreachable_server_is_retryable_and_trips_the_breaker(live_tenant, smtp_account):
    port = _free_port()
    smtp_account.config = {**smtp_account.config, "port": port}
    for _ in range(3):  # PROVIDER_BREAKER_THRESHOLD in these tests
        with pytest.raises(ProviderError) as caught:
            SMTPProvider().send(_email(live_tenant), smtp_account)
        assert caught.value.retryable
    assert CircuitBreaker("smtp", f"127.0.0.1:{port}").state() == "open"
    with pytest.raises(ProviderError) as caught:
        SMTPProvider().send(_email(live_tenant), smtp_account)
    assert "paused" in str(caught.value)


def test_private_host_is_refused_at_send_time(live_tenant, smtp_server, smtp_account, settings):
    # Saved while private targets were allowed; refused once they are not (no SSRF via SMTP).
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = False
    with pytest.raises(ProviderError) as caught:
        SMTPProvider().send(_email(live_tenant), smtp_account)
    assert (caught.value.retryable, caught.value.code) == (False, "PROVIDER_TARGET_REFUSED")
    assert smtp_server.mailbox.received == []


def test_email_url_serves_organizations_without_an_account(live_tenant, smtp_server, settings):
    settings.EMAIL_URL = f"smtp://127.0.0.1:{smtp_server.port}"
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = False  # the operator's relay may be private
    settings.DEFAULT_FROM_EMAIL = "platform@engage.example"
    result = SMTPProvider().send(_email(live_tenant), None)
    assert result.status == "sent"
    mail_from, rcpt_tos, received = smtp_server.mailbox.received[0]
    assert mail_from == "platform@engage.example"
    assert rcpt_tos == ["ada@example.com"]


def test_no_account_and_no_email_url_is_not_wired(live_tenant, settings):
    settings.EMAIL_URL = ""
    with pytest.raises(ProviderError) as caught:
        SMTPProvider().send(_email(live_tenant), None)
    assert (caught.value.retryable, caught.value.code) == (False, "PROVIDER_NOT_WIRED")
