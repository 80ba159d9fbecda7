"""The provider interface every channel adapter implements (messaging contract).

A provider sends one `Message` on the channels it serves and answers a `SendResult`:

    class TwilioProvider:
        name = "twilio"
        channels = frozenset({"sms", "mms", "voice"})

        def send(self, message, account) -> SendResult: ...

`send` is called by a send batch (messaging/sending/drain.py) outside any transaction,
from a bounded thread pool for live providers (so it must be thread-safe: the adapters are
stateless and call the hardened `platform_core.net.provider_client`), with the message as
stored and the organization's `ProviderAccount` for the channel (None for the sandbox
double and for deployment-wide accounts such as SMTP from `EMAIL_URL`). The batch applies
the results together (messaging/status.py):

- `status="queued"`: the provider accepted it and will report progress later (receipts
  arrive through the inbound status webhooks, which call `message_apply_status`).
- `status="sent"`: handed to the carrier / recipient server.
- `status="failed"`: refused for good; `error_code` / `error_message` are the provider's
  raw code and text (they reach the `message.failed` event, Document 1, 2.3).

A provider may also define `after_send(message, result)`: the batch calls it once the
result is committed.

A transient failure (timeout, 429/5xx after the client's own retries, open circuit)
raises `ProviderError(retryable=True)`: the message is tried again later with backoff
(`retry_at`, timed work) and fails when its retries are exhausted. `ProviderError(retryable=False)` fails the
message at once with the error's code and text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from messaging.models import Message

SEND_STATUSES = frozenset({"queued", "sent", "failed"})


@dataclass
class SendResult:
    provider_message_id: str | None
    status: str  # "queued" | "sent" | "failed"
    error_code: str | None = None
    error_message: str | None = None

    def __post_init__(self) -> None:
        if self.status not in SEND_STATUSES:
            raise ValueError(f"a send result status is one of {sorted(SEND_STATUSES)}")


class ProviderError(Exception):
    """A send that did not reach a decision. Retryable ones are tried again later."""

    def __init__(self, message: str, *, retryable: bool = True, code: str | None = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.code = code


@runtime_checkable
class Provider(Protocol):
    name: str
    channels: frozenset[str]

    def send(self, message: Message, account) -> SendResult:  # account: ProviderAccount | None
        ...
