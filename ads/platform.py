"""The ad platform adapter: Meta's Marketing and Conversions APIs (live) and the sandbox.

    platform = platform_for(organization)
    platform.account(token=..., ad_account_id="123") -> {"name", "currency", "account_status"}

Test mode (`organization.sandbox`) uses `SandboxAds`, which never calls out. Its documented
behaviour: the access token `sandbox-invalid` and the OAuth code `sandbox-denied` are
refused (422 AD_PLATFORM_ERROR); the account's currency is the organization's; a lead id
starting with `fail` cannot be fetched, one starting with `nocontact` has neither email
nor phone, any other lead id answers `lead-<id>@example.com` and `+1415555` + the last
four digits of its id; every customer-list member "is received".

Live mode calls the Graph API (`ADS_GRAPH_BASE_URL`, default
`https://graph.facebook.com/v20.0`) through platform_core/net/provider_client. The OAuth
exchange needs the app's `ADS_APP_ID` and `ADS_APP_SECRET` (503 SERVICE_UNAVAILABLE
without them); a token connection needs nothing but the token.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from typing import Any
from urllib.parse import urlencode

from django.conf import settings

from platform_core.errors import APIError
from platform_core.net import provider_client

PROVIDER = "meta_ads"
BATCH = 10_000  # Meta's customer-list rows per request


def _setting(name: str, default: str = "") -> str:
    value = getattr(settings, name, None) or os.environ.get(name)
    return str(value) if value else default


class FetchFailed(Exception):
    pass


def platform_error(message: str, details: dict | None = None) -> APIError:
    return APIError("AD_PLATFORM_ERROR", message[:300], details=details or {})


class SandboxAds:
    name = "sandbox"

    def __init__(self, organization) -> None:
        self.currency = organization.currency or "USD"

    @staticmethod
    def _id(*parts: str) -> str:
        return str(int(hashlib.sha256("|".join(parts).encode()).hexdigest()[:12], 16))

    def exchange_code(self, *, code: str, redirect_uri: str) -> str:
        if code == "sandbox-denied":
            raise platform_error("The sandbox refused the OAuth code.")
        return "sbx-token-" + hashlib.sha256(code.encode()).hexdigest()[:16]

    def account(self, *, token: str, ad_account_id: str) -> dict[str, Any]:
        if token == "sandbox-invalid":  # noqa: S105 - a documented test value
            raise platform_error("Invalid OAuth access token (sandbox).", {"code": 190})
        return {"name": f"Sandbox account {ad_account_id}", "currency": self.currency,
                "account_status": "ACTIVE"}

    def create_campaign(self, *, token, ad_account_id, name, channel, daily_budget) -> str:
        return self._id(ad_account_id, name, str(daily_budget), os.urandom(4).hex())

    def update_campaign(self, *, token, external_id, fields) -> None:
        return None

    def delete_campaign(self, *, token, external_id) -> None:
        return None

    def send_events(self, *, token, dataset_id, events, test_event_code=None) -> dict:
        return {"events_received": len(events), "fbtrace_id": "sandbox"}

    def fetch_lead(self, *, token, leadgen_id) -> list[dict]:
        if leadgen_id.startswith("fail"):
            raise FetchFailed(leadgen_id)
        if leadgen_id.startswith("nocontact"):
            return [{"name": "full_name", "values": ["No Contact"]}]
        digits = (re.sub(r"\D", "", leadgen_id) or "0")[-4:].rjust(4, "0")
        return [{"name": "email", "values": [f"lead-{leadgen_id}@example.com"]},
                {"name": "phone_number", "values": [f"+1415555{digits}"]},
                {"name": "full_name", "values": [f"Lead {leadgen_id}"]}]

    def create_audience(self, *, token, ad_account_id, name) -> str:
        return self._id(ad_account_id, "audience", name, os.urandom(4).hex())

    def audience_users(self, *, token, audience_id, rows, mode) -> int:
        return len(rows)

    def delete_audience(self, *, token, audience_id) -> None:
        return None


class MetaAds:
    name = "meta"

    def __init__(self) -> None:
        self.base = _setting("ADS_GRAPH_BASE_URL", "https://graph.facebook.com/v20.0").rstrip(
            "/")

    def _call(self, method: str, path: str, *, token: str | None = None,
              params: dict | None = None, json_body: dict | None = None) -> Any:
        url = f"{self.base}/{path.lstrip('/')}"
        if params:
            url += "?" + urlencode(params)
        headers = {"Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        content = b""
        if json_body is not None:
            headers["Content-Type"] = "application/json"
            content = json.dumps(json_body).encode()
        answer = provider_client.request(PROVIDER, method, url, content=content,
                                         headers=headers)
        body = answer.json()
        if not answer.ok:
            error = body.get("error", {}) if isinstance(body, dict) else {}
            raise platform_error(str(error.get("message") or f"HTTP {answer.status_code}"),
                                 {"status": answer.status_code, "code": error.get("code"),
                                  "fbtrace_id": error.get("fbtrace_id")})
        return body if body is not None else {}

    def exchange_code(self, *, code: str, redirect_uri: str) -> str:
        app_id, secret = _setting("ADS_APP_ID"), _setting("ADS_APP_SECRET")
        if not (app_id and secret):
            raise APIError("SERVICE_UNAVAILABLE", "The OAuth exchange needs ADS_APP_ID and "
                           "ADS_APP_SECRET on this deployment.", details={"feature": "ads"})
        body = self._call("GET", "oauth/access_token", params={
            "client_id": app_id, "client_secret": secret, "redirect_uri": redirect_uri,
            "code": code})
        token = body.get("access_token")
        if not token:
            raise platform_error("The OAuth exchange answered no access token.")
        return str(token)

    def account(self, *, token: str, ad_account_id: str) -> dict[str, Any]:
        body = self._call("GET", f"act_{ad_account_id}", token=token,
                          params={"fields": "name,currency,account_status"})
        status = body.get("account_status")
        return {"name": str(body.get("name", "")), "currency": str(body.get("currency", "")),
                "account_status": "ACTIVE" if status == 1 else str(status or "")}

    def create_campaign(self, *, token, ad_account_id, name, channel, daily_budget) -> str:
        body = self._call("POST", f"act_{ad_account_id}/campaigns", token=token, json_body={
            "name": name, "objective": "OUTCOME_ENGAGEMENT", "status": "PAUSED",
            "special_ad_categories": [], "daily_budget": daily_budget,
            "bid_strategy": "LOWEST_COST_WITHOUT_CAP",
            "promoted_object": {"messaging_channel": channel.upper()}})
        return str(body["id"])

    def update_campaign(self, *, token, external_id, fields) -> None:
        payload = {k: v for k, v in fields.items() if v is not None}
        if "status" in payload:
            payload["status"] = payload["status"].upper()
        self._call("POST", external_id, token=token, json_body=payload)

    def delete_campaign(self, *, token, external_id) -> None:
        self._call("DELETE", external_id, token=token)

    def send_events(self, *, token, dataset_id, events, test_event_code=None) -> dict:
        payload: dict[str, Any] = {"data": events}
        if test_event_code:
            payload["test_event_code"] = test_event_code
        return self._call("POST", f"{dataset_id}/events", token=token, json_body=payload)

    def fetch_lead(self, *, token, leadgen_id) -> list[dict]:
        try:
            body = self._call("GET", leadgen_id, token=token,
                              params={"fields": "field_data,created_time,form_id"})
        except APIError as exc:
            raise FetchFailed(leadgen_id) from exc
        return list(body.get("field_data") or [])

    def create_audience(self, *, token, ad_account_id, name) -> str:
        body = self._call("POST", f"act_{ad_account_id}/customaudiences", token=token,
                          json_body={"name": name, "subtype": "CUSTOM",
                                     "customer_file_source": "USER_PROVIDED_ONLY"})
        return str(body["id"])

    def audience_users(self, *, token, audience_id, rows, mode) -> int:
        received = 0
        for start in range(0, len(rows), BATCH):
            body = self._call("DELETE" if mode == "remove" else "POST", f"{audience_id}/users",
                              token=token, json_body={"payload": {
                                  "schema": ["EMAIL_SHA256", "PHONE_SHA256"],
                                  "data": rows[start:start + BATCH]}})
            received += int(body.get("num_received") or 0)
        return received

    def delete_audience(self, *, token, audience_id) -> None:
        self._call("DELETE", audience_id, token=token)


def platform_for(organization):
    return SandboxAds(organization) if organization.sandbox else MetaAds()
