"""The sandbox double: every channel's provider in test mode (0-conventions.md section 6).

It never contacts anything outside the process. It walks the lifecycle a live provider
does and, because the transitions go through the same `message_apply_status`, emits the
same events:

- `send` answers `sent` with a sandbox provider id (`SBX...`). The carrier's delivery
  receipt is timed work: it is due `MESSAGING_SANDBOX_RECEIPT_DELAY_SECONDS` (default 1 s)
  after `sent_at` and the timed drain (messaging/timed.py) moves the due ones to
  `delivered` in batches, as a provider's status webhook would; with no delay the send
  batch applies it at once (messaging/sending/drain.py). `receipt_expected` says which
  messages get one.
- Magic recipients (Twilio's test-credential convention):
    `+15005550009`  fails at once: status `failed`, `error_code` "30003"
                    ("Unreachable destination handset").
    `+15005550010`  is sent but no delivery receipt ever arrives (stays `sent`): the way to
                    exercise `fallback_after_seconds` in test mode.
    `+15005550011`  is not reachable on RCS, WhatsApp, Viber or Telegram (fails at once,
                    `error_code` "63003", "Channel could not find the recipient"); SMS,
                    MMS, voice and flash calls reach it normally: the way to exercise a
                    fallback chain on failure.
    `+15005550012`  gets no delivery receipt on RCS, WhatsApp, Viber or Telegram (stays
                    `sent`); other channels deliver normally: a fallback chain after a
                    receipt timeout.
- Flash calls come from `DEFAULT_FLASHCALL_PREFIX` followed by the code; Viber and
  Telegram from `DEFAULT_CHAT_SENDER`.
  For email the first two behaviors answer to `fail@sandbox.test` and
  `noreceipt@sandbox.test`.
"""

from __future__ import annotations

import secrets

from django.conf import settings

from .base import SendResult

FAIL_RECIPIENTS = frozenset({"+15005550009", "fail@sandbox.test"})
NO_RECEIPT_RECIPIENTS = frozenset({"+15005550010", "noreceipt@sandbox.test"})
FAIL_ERROR_CODE = "30003"
FAIL_ERROR_MESSAGE = "Unreachable destination handset"
# Reachable by SMS only: rich channels fail / never receipt.
RICH_CHANNELS = frozenset({"rcs", "whatsapp", "viber", "telegram"})
RICH_FAIL_RECIPIENTS = frozenset({"+15005550011"})
RICH_NO_RECEIPT_RECIPIENTS = frozenset({"+15005550012"})
RICH_FAIL_ERROR_CODE = "63003"
RICH_FAIL_ERROR_MESSAGE = "Channel could not find the recipient"
# The sender used in test mode when a send names none and no pool gives one.
DEFAULT_PHONE_SENDER = "+15005550006"
DEFAULT_EMAIL_SENDER = "sandbox@sandbox.test"
DEFAULT_RCS_SENDER = "sandbox_agent"
DEFAULT_CHAT_SENDER = "SandboxService"  # a Viber service id / Telegram sender
# Flash calls in test mode come from this range: the caller id is it plus the code.
DEFAULT_FLASHCALL_PREFIX = "+4420700"


def receipt_delay_seconds() -> float:
    return float(getattr(settings, "MESSAGING_SANDBOX_RECEIPT_DELAY_SECONDS", 1.0))


def default_sender(channel: str) -> str:
    if channel == "email":
        return DEFAULT_EMAIL_SENDER
    if channel == "rcs":
        return DEFAULT_RCS_SENDER
    if channel in ("viber", "telegram"):
        return DEFAULT_CHAT_SENDER
    if channel == "flashcall":
        return DEFAULT_FLASHCALL_PREFIX
    return DEFAULT_PHONE_SENDER


class SandboxProvider:
    name = "sandbox"
    channels = frozenset({"sms", "mms", "whatsapp", "rcs", "email", "voice", "viber",
                          "telegram", "flashcall"})

    def send(self, message, account) -> SendResult:
        provider_id = "SBX" + secrets.token_hex(16)
        if message.to in FAIL_RECIPIENTS:
            return SendResult(provider_message_id=provider_id, status="failed",
                              error_code=FAIL_ERROR_CODE, error_message=FAIL_ERROR_MESSAGE)
        if message.channel in RICH_CHANNELS and message.to in RICH_FAIL_RECIPIENTS:
            return SendResult(provider_message_id=provider_id, status="failed",
                              error_code=RICH_FAIL_ERROR_CODE,
                              error_message=RICH_FAIL_ERROR_MESSAGE)
        return SendResult(provider_message_id=provider_id, status="sent")

    @staticmethod
    def receipt_expected(message) -> bool:
        """Whether the carrier double sends `message` (sent) a delivery receipt."""
        if message.to in NO_RECEIPT_RECIPIENTS:
            return False
        return not (message.channel in RICH_CHANNELS
                    and message.to in RICH_NO_RECEIPT_RECIPIENTS)
