"""Test mode's WhatsApp: the double of Meta's Graph API (0-conventions.md section 6).

It makes no outside call. The state Meta would hold is the organization's own records
(connections, profile, catalogs, flows, calls); the double mints ids shaped like Meta's
(digit strings, `wacid.` call ids) and answers what Meta answers:

- `connect`: any code is accepted except `invalid-code` (Meta's error 100 / subcode
  36007, "code expired": 422 WHATSAPP_REQUEST_REJECTED) and `revoked-code` (error 190:
  409 WHATSAPP_TOKEN_EXPIRED). The WABA holds two numbers, derived from its id, so the
  same WABA always gives the same numbers.
- business profile: an update is "in review" for WHATSAPP_SANDBOX_REVIEW_SECONDS
  (default 60) and then applied.
- call permissions: a user who wrote to the business on WhatsApp in the last 7 days has
  granted a temporary permission (until 7 days after that message); otherwise
  `no_permission`.
- calls to `+15005550011` (the sandbox number unreachable on rich channels) are refused
  as Meta refuses a user without WhatsApp (138006: 422 WHATSAPP_REQUEST_REJECTED).
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from typing import Any

from django.db.models import Count
from django.utils import timezone

from platform_core.errors import APIError

UNREACHABLE = "+15005550011"


def meta_id(length: int = 15) -> str:
    return str(secrets.randbelow(9 * 10 ** (length - 1)) + 10 ** (length - 1))


def _rejected(code: int, message: str, subcode: int | None = None) -> APIError:
    return APIError("WHATSAPP_REQUEST_REJECTED", f"Meta rejected the request: {message}",
                    details={"provider_status": 400, "provider_code": code,
                             "provider_subcode": subcode, "provider_message": message,
                             "fbtrace_id": None})


class SandboxGateway:
    live = False

    def __init__(self, organization) -> None:
        self.organization = organization

    def exchange_code(self, code: str) -> str:
        if code == "invalid-code":
            raise _rejected(100, "This authorization code has expired.", 36007)
        if code == "revoked-code":
            raise APIError("WHATSAPP_TOKEN_EXPIRED", details={"provider_code": 190})
        return "SBXTOKEN" + secrets.token_hex(20)

    def phone_numbers(self, waba_id: str) -> list[dict[str, Any]]:
        seed = int(hashlib.sha256(waba_id.encode()).hexdigest(), 16)
        rows = []
        for i in (1, 2):
            rows.append({"id": str(10 ** 14 + (seed + i) % (9 * 10 ** 14)),
                         "display_phone_number": f"+1 555-{seed % 1000:03d}-{i:04d}",
                         "verified_name": "Sandbox Business", "quality_rating": "GREEN"})
        return rows

    def subscribe_app(self, waba_id: str) -> None:
        return None

    def unsubscribe_app(self, waba_id: str) -> None:
        return None

    def deregister(self, phone_number_id: str) -> None:
        return None

    def get_profile(self, phone_number_id: str) -> dict[str, Any]:
        return {}  # the stored profile is the double's state (services.profile)

    def update_profile(self, phone_number_id: str, fields: dict[str, Any]) -> None:
        return None

    def list_catalogs(self, business_id: str) -> list[dict[str, Any]]:
        from ..models import Catalog

        rows = (Catalog.objects.for_organization(self.organization)
                .filter(business_id=business_id).annotate(n=Count("products")).order_by("id"))
        return [{"id": c.meta_catalog_id, "name": c.name, "vertical": c.vertical,
                 "product_count": c.n} for c in rows]

    def create_catalog(self, business_id: str, name: str, vertical: str) -> str:
        return meta_id()

    def delete_catalog(self, catalog_id: str) -> None:
        return None

    def create_product(self, catalog_id: str, fields: dict[str, Any]) -> str:
        return meta_id(16)

    def update_product(self, product_id: str, fields: dict[str, Any]) -> None:
        return None

    def delete_product(self, product_id: str) -> None:
        return None

    def calling_settings(self, phone_number_id: str) -> dict[str, Any]:
        from ..models import Connection

        connection = (Connection.objects.for_organization(self.organization)
                      .filter(phone_number_id=phone_number_id).first())
        enabled = bool(connection and connection.calling_enabled)
        return {"status": "ENABLED" if enabled else "DISABLED",
                "call_icon_visibility": "DEFAULT", "callback_permission_status": "ENABLED"}

    def set_calling(self, phone_number_id: str, enabled: bool) -> None:
        return None

    def subscribe_calls(self, callback_url: str, verify_token: str) -> None:
        return None

    def call_permissions(self, phone_number_id: str, user: str) -> dict[str, Any]:
        from messaging.models import Message

        since = timezone.now() - timedelta(days=7)
        last = (Message.objects.for_organization(self.organization)
                .filter(channel="whatsapp", direction="inbound", from_address=user,
                        created_at__gte=since).order_by("-created_at")
                .values_list("created_at", flat=True).first())
        if last is None:
            permission = {"status": "no_permission"}
        else:
            permission = {"status": "temporary",
                          "expiration_time": int((last + timedelta(days=7)).timestamp())}
        granted = last is not None
        return {"permission": permission, "actions": [
            {"action_name": "send_call_permission_request", "can_perform_action": not granted},
            {"action_name": "start_call", "can_perform_action": granted}]}

    def start_call(self, phone_number_id: str, to: str, session: dict | None) -> str:
        if to == UNREACHABLE:
            raise _rejected(138006, "Recipient cannot be called on WhatsApp.")
        return "wacid.SBX" + secrets.token_hex(16)

    def call_action(self, phone_number_id: str, call_id: str, action: str,
                    session: dict | None) -> None:
        return None

    def block_users(self, phone_number_id: str, users: list[str]) -> None:
        return None

    def unblock_users(self, phone_number_id: str, users: list[str]) -> None:
        return None

    def create_flow(self, waba_id: str, name: str, categories: list[str]) -> str:
        return meta_id()

    def upload_flow_json(self, flow_id: str, definition: dict[str, Any]) -> list[dict]:
        return []  # our validator (flowjson.py) already refused what Meta refuses

    def publish_flow(self, flow_id: str) -> None:
        return None

    def delete_flow(self, flow_id: str) -> None:
        return None
