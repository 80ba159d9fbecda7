"""Twilio's REST API: SMS and MMS through Messages, voice (text to speech) and flash calls
through Calls.

    POST {base}/2010-04-01/Accounts/{AccountSid}/Messages.json
        form: To, From (or MessagingServiceSid), Body, MediaUrl (repeated), StatusCallback
    POST {base}/2010-04-01/Accounts/{AccountSid}/Calls.json
        form: To, From, Twiml=<Response><Say>text</Say></Response>, StatusCallback
    flash call: To, From=<flashcall_prefix><code>, Twiml=<Response><Hangup/></Response>,
        Timeout (seconds it rings, config `flashcall_timeout`, default 10): a missed call
        whose caller id ends with the code (the message body). The prefix is a number
        range the account may call from (config `flashcall_prefix`, or the message's from).

HTTP Basic authentication with AccountSid:AuthToken (or an API key SID and secret). The
answer carries `sid` and `status` (`queued`, `accepted`, `scheduled`, `sending`, `sent`,
`failed`...); a refusal carries `code` (Twilio's numeric error code, e.g. 21211) and
`message`, which become the message's error_code / error_message.

Account: config `account_sid` (required), `from` (default sender), optional
`messaging_service_sid`, `voice`, `flashcall_prefix`, `flashcall_timeout` and
`status_callback_url`; credentials `auth_token`, or
`api_key_sid` + `api_key_secret`.
"""

from __future__ import annotations

import base64
from urllib.parse import quote, urlencode
from xml.sax.saxutils import escape, quoteattr

from messaging.providers.base import ProviderError, SendResult

from . import common
from .callbacks import status_callback_url

NAME = "twilio"
DEFAULT_BASE_URL = "https://api.twilio.com"
_QUEUED = frozenset({"queued", "accepted", "scheduled", "initiated", "ringing", "receiving"})
_SENT = frozenset({"sending", "sent", "in-progress", "delivered", "read", "completed"})
_FAILED = frozenset({"failed", "undelivered", "canceled", "busy", "no-answer"})
_CALLS = frozenset({"voice", "flashcall"})
FLASHCALL_TIMEOUT = 10


def basic_auth(account) -> str:
    key_sid = account.credentials.get("api_key_sid")
    if key_sid:
        user, password = key_sid, common.secret(account, "api_key_secret", provider=NAME)
    else:
        user = common.setting(account, "account_sid", provider=NAME)
        password = common.secret(account, "auth_token", provider=NAME)
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return f"Basic {token}"


def say_twiml(text: str, *, voice: str | None = None, language: str | None = None) -> str:
    attributes = ""
    if voice:
        attributes += f" voice={quoteattr(voice)}"
    if language:
        attributes += f" language={quoteattr(language)}"
    return f"<Response><Say{attributes}>{escape(text)}</Say></Response>"


class TwilioProvider:
    name = NAME
    channels = frozenset({"sms", "mms", "voice", "flashcall"})

    def send(self, message, account) -> SendResult:
        account = common.require_account(account, NAME)
        account_sid = common.setting(account, "account_sid", provider=NAME)
        root = common.base_url(account, DEFAULT_BASE_URL)
        resource = "Calls.json" if message.channel in _CALLS else "Messages.json"
        url = f"{root}/2010-04-01/Accounts/{quote(account_sid, safe='')}/{resource}"
        form = self._form(message, account)
        response = common.call(
            NAME, "POST", url, content=urlencode(form, doseq=True).encode(),
            headers={"Authorization": basic_auth(account),
                     "Content-Type": "application/x-www-form-urlencoded",
                     "Accept": "application/json"},
        )
        data = common.as_dict(response.json())
        if not response.ok:
            return common.failed(data.get("code"), data.get("message"), response.status_code)
        sid = data.get("sid")
        status = str(data.get("status") or "queued")
        if status in _FAILED or data.get("error_code"):
            return SendResult(provider_message_id=sid, status="failed",
                              error_code=str(data.get("error_code") or status)[:64],
                              error_message=str(data.get("error_message") or status)[:1000])
        if not sid:
            raise ProviderError("Twilio answered without a sid.", retryable=False,
                                code="PROVIDER_BAD_RESPONSE")
        return SendResult(provider_message_id=sid, status="sent" if status in _SENT else "queued")

    def _form(self, message, account) -> list[tuple[str, str]]:
        if message.channel == "flashcall":
            return self._flashcall_form(message, account)
        form: list[tuple[str, str]] = [("To", message.to)]
        sender = message.from_ or account.setting("from")
        service_sid = account.setting("messaging_service_sid")
        if message.channel != "voice" and not message.from_ and service_sid:
            form.append(("MessagingServiceSid", service_sid))
        elif sender:
            form.append(("From", sender))
        else:
            raise ProviderError("No sender: give `from` or set the account's default `from`.",
                                retryable=False, code=common.MISCONFIGURED)
        if message.channel == "voice":
            form.append(("Twiml", say_twiml(message.body, voice=account.setting("voice"),
                                            language=message.language)))
        else:
            if message.body:
                form.append(("Body", message.body))
            form.extend(("MediaUrl", url) for url in (message.media_urls or []))
        callback = status_callback_url(account, NAME, message)
        if callback:
            form.append(("StatusCallback", callback))
        return form

    def _flashcall_form(self, message, account) -> list[tuple[str, str]]:
        prefix = message.from_ or account.setting("flashcall_prefix")
        if not prefix:
            raise ProviderError("No flash call range: set the account's `flashcall_prefix`.",
                                retryable=False, code=common.MISCONFIGURED)
        try:
            timeout = int(account.setting("flashcall_timeout") or FLASHCALL_TIMEOUT)
        except (TypeError, ValueError):
            timeout = FLASHCALL_TIMEOUT
        form = [("To", message.to), ("From", f"{prefix}{message.body}"),
                ("Twiml", "<Response><Hangup/></Response>"), ("Timeout", str(timeout))]
        callback = status_callback_url(account, NAME, message)
        if callback:
            form.append(("StatusCallback", callback))
        return form
