"""Email over SMTP through Django's email framework.

The message is an `EmailMultiAlternatives` (an HTML body also goes as a text/html
alternative, with a plain-text part derived from it) sent on a per-call connection from
`get_connection(...)`:

- with the organization's `smtp` provider account: config `host`, `port` (587),
  `use_tls` (STARTTLS; default on port 587), `use_ssl` (default on port 465), `from`,
  `timeout`; credentials `username` and `password`. The organization chose the host, so
  it is checked like any outbound target: it must resolve to public addresses (unless
  ALLOW_PRIVATE_WEBHOOK_TARGETS), and the connection is made to the checked address
  while STARTTLS / TLS verify the certificate for the host name (no DNS rebinding to an
  internal service).
- with no account, the deployment's relay from `EMAIL_URL` (`smtp://`, `smtp+tls://`,
  `smtps://`); it is the operator's own server, so private addresses are fine there.

The provider message id is the `Message-ID` header. A refusal keeps the server's reply
code and text (e.g. 550 "mailbox unavailable") as error_code / error_message; a 4xx reply,
a connection failure or a timeout is transient (retried by the send task) and counts
against the circuit breaker of (smtp, host).
"""

from __future__ import annotations

import smtplib
import socket
from typing import Any

import environ
from django.conf import settings
from django.core.mail import EmailMultiAlternatives, get_connection
from django.core.mail.backends.smtp import EmailBackend
from django.core.mail.message import make_msgid
from django.utils.html import strip_tags

from messaging.providers.base import ProviderError, SendResult
from platform_core.net import provider_client, ssrf

from . import common

NAME = "smtp"
DEFAULT_PORT = 587
BACKEND = "messaging.providers.adapters.smtp.PinnedEmailBackend"
DEFAULT_TIMEOUT = 15


def _checked_address(host: str, port: int) -> str:
    try:
        addresses = ssrf.check_url(f"smtp://{host}:{port}", schemes=("smtp",))
    except ssrf.UnsafeTarget as exc:
        raise _UnsafeSMTPTarget(str(exc)) from exc
    return addresses[0]


class _UnsafeSMTPTarget(OSError):
    pass


class _PinnedSMTP(smtplib.SMTP):
    """Connects to a checked address of the host; STARTTLS still verifies the host name."""

    def _get_socket(self, host, port, timeout):
        address = _checked_address(host, port)
        return socket.create_connection((address, port), timeout, self.source_address)


class _PinnedSMTPSSL(smtplib.SMTP_SSL):
    def _get_socket(self, host, port, timeout):
        address = _checked_address(host, port)
        sock = socket.create_connection((address, port), timeout, self.source_address)
        return self.context.wrap_socket(sock, server_hostname=self._host)


class PinnedEmailBackend(EmailBackend):
    """Django's SMTP backend, connecting only to checked public addresses."""

    @property
    def connection_class(self):
        return _PinnedSMTPSSL if self.use_ssl else _PinnedSMTP


def _flag(value: Any, default: bool) -> bool:
    if value in (None, ""):
        return default
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def connection_params(account) -> dict[str, Any]:
    """get_connection() keyword arguments for the account, or for EMAIL_URL (account None)."""
    if account is None:
        if not settings.EMAIL_URL:
            raise ProviderError("No SMTP server: EMAIL_URL is not set.", retryable=False,
                                code="PROVIDER_NOT_WIRED")
        conf = environ.Env.email_url_config(settings.EMAIL_URL)
        ssl = bool(conf.get("EMAIL_USE_SSL"))
        return {
            "backend": "django.core.mail.backends.smtp.EmailBackend",
            "host": conf.get("EMAIL_HOST") or "localhost",
            "port": conf.get("EMAIL_PORT") or (465 if ssl else 25),
            "username": conf.get("EMAIL_HOST_USER") or "",
            "password": conf.get("EMAIL_HOST_PASSWORD") or "",
            "use_tls": bool(conf.get("EMAIL_USE_TLS")) and not ssl,
            "use_ssl": ssl,
            "timeout": DEFAULT_TIMEOUT,
        }
    host = common.setting(account, "host", provider=NAME)
    port = int(account.setting("port") or DEFAULT_PORT)
    use_ssl = _flag(account.setting("use_ssl"), port == 465)
    use_tls = _flag(account.setting("use_tls"), port == 587) and not use_ssl
    return {
        "backend": BACKEND,
        "host": str(host),
        "port": port,
        "username": str(account.setting("username") or ""),
        "password": str(account.credentials.get("password") or ""),
        "use_tls": use_tls,
        "use_ssl": use_ssl,
        "timeout": int(account.setting("timeout") or DEFAULT_TIMEOUT),
    }


def _looks_like_html(body: str) -> bool:
    text = body.lstrip()
    return text.startswith("<") and "</" in text


def build_email(message, account, connection) -> EmailMultiAlternatives:
    sender = message.from_ or (account.setting("from") if account is not None else None) \
        or settings.DEFAULT_FROM_EMAIL
    domain = sender.rsplit("@", 1)[-1].strip("> ") if "@" in sender else None
    body = message.body or ""
    text = strip_tags(body) if _looks_like_html(body) else body
    email = EmailMultiAlternatives(
        subject=message.subject or "", body=text, from_email=sender, to=[message.to],
        connection=connection,
        headers={"Message-ID": make_msgid(domain=domain), "X-Engage-Message-Id": str(message.pk)},
    )
    if text is not body:
        email.attach_alternative(body, "text/html")
    return email


def _reply(code: Any, text: Any) -> tuple[str, str]:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return str(code), str(text or "")


def _refusal(exc: smtplib.SMTPException) -> tuple[int, str, str] | None:
    """(reply code, code text, reply text) of a server refusal; None if not a refusal."""
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        code, text = next(iter(exc.recipients.values()), (550, "recipient refused"))
        return int(code), *_reply(code, text)
    if isinstance(exc, smtplib.SMTPResponseException):
        return int(exc.smtp_code), *_reply(exc.smtp_code, exc.smtp_error)
    return None


class SMTPProvider:
    name = NAME
    channels = frozenset({"email"})

    def send(self, message, account) -> SendResult:
        params = connection_params(account)
        host = f"{params['host']}:{params['port']}"
        connection = get_connection(fail_silently=False, **params)
        email = build_email(message, account, connection)
        message_id = email.extra_headers["Message-ID"]

        def deliver() -> None:
            with connection:
                connection.send_messages([email])

        try:
            provider_client.guarded(NAME, host, deliver, is_failure=_is_outage)
        except provider_client.ProviderUnavailable as exc:
            raise ProviderError(exc.message, retryable=True, code=common.UNAVAILABLE) from exc
        except _UnsafeSMTPTarget as exc:
            raise ProviderError(f"The SMTP host is not an allowed target: {exc}.",
                                retryable=False, code=common.REFUSED_TARGET) from exc
        except smtplib.SMTPException as exc:
            refusal = _refusal(exc)
            if refusal is None or refusal[0] < 500:
                raise ProviderError(f"The SMTP server did not accept the message now: {exc}.",
                                    retryable=True, code=refusal[1] if refusal else
                                    common.UNAVAILABLE) from exc
            return SendResult(provider_message_id=None, status="failed",
                              error_code=refusal[1][:64], error_message=refusal[2][:1000])
        except OSError as exc:  # refused, unreachable, timed out, TLS failure
            raise ProviderError(f"The SMTP server could not be reached: {exc}.",
                                retryable=True, code=common.UNAVAILABLE) from exc
        return SendResult(provider_message_id=message_id, status="sent")


def _is_outage(exc: Exception) -> bool | None:
    """Transport failures and 4xx/421 replies count against the breaker; 5xx refusals show
    the server up; a refused target says nothing about it."""
    if isinstance(exc, _UnsafeSMTPTarget):
        return None
    if isinstance(exc, smtplib.SMTPException):
        refusal = _refusal(exc)
        return refusal is None or refusal[0] < 500
    return isinstance(exc, OSError)
