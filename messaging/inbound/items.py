"""What a provider webhook carries, once parsed: inbound messages and delivery receipts."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class InboundItem:
    """A message an end user sent to one of the organization's addresses."""

    channel: str
    from_: str
    to: str
    body: str
    provider: str
    provider_message_id: str | None = None
    media_urls: list[str] = field(default_factory=list)
    received_at: datetime | None = None
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ReceiptItem:
    """A provider's status report about a message the organization sent."""

    provider: str
    provider_message_id: str
    status: str  # one of the platform's message statuses
    error_code: str | None = None
    error_message: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)
