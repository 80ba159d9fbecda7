"""Carrier approval of templates in live mode: submission, status reads, edits, deletion.

Test mode never gets here: nothing leaves the platform and the decision arrives through
`POST /api/v1/sandbox/templates/{id}/decision`. In live mode a whatsapp or rcs template is
submitted with the organization's own channel account (`messaging.providers`'
`ProviderAccount`, found through `provider_for`), by the submitter registered for the
account's adapter name:

- `whatsapp_cloud` (built in): the WhatsApp Cloud API template endpoints,
  `POST {base}/{version}/{waba_id}/message_templates` with `name`, `language`,
  `category`, `components` (per-component placeholder numbering and examples),
  `GET {base}/{version}/{template id}?fields=id,name,status,rejected_reason` for the status
  sync, `POST {base}/{version}/{template id}` to edit and
  `DELETE {base}/{version}/{waba_id}/message_templates?name=..&hsm_id=..` to delete.
  `base` is the account's `base_url` (tests) or `https://graph.facebook.com`, `version`
  the account config's `api_version` (default v20.0); the token is
  the account credentials' `access_token`; the WABA id is the template's `waba_id`, else
  the account's `waba_id` (credentials or config).
- other adapters (an RCS partner) register theirs with `register_submitter(name, obj)`.

Every call goes through the hardened provider client (retries on 429/5xx, circuit breaker).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import quote, urlencode

from django.conf import settings

from platform_core.net import provider_client

from .components import provider_components

logger = logging.getLogger("templates.submission")

DEFAULT_GRAPH_BASE = "https://graph.facebook.com"

# Provider status -> template status. None: no change (quality flags and the like).
WHATSAPP_STATUSES: dict[str, str | None] = {
    "APPROVED": "approved",
    "REINSTATED": "approved",
    "REJECTED": "rejected",
    "PENDING": "pending",
    "IN_APPEAL": "pending",
    "PAUSED": "paused",
    "DISABLED": "disabled",
    "DELETED": "disabled",
    "ARCHIVED": "disabled",
    "PENDING_DELETION": "disabled",
    "FLAGGED": None,
    "LIMIT_EXCEEDED": None,
}


@dataclass
class ProviderVerdict:
    status: str | None  # a TemplateStatus value, or None (no change)
    reason: str | None = None
    provider_template_id: str | None = None


class SubmissionRejected(Exception):
    """The provider refused the template itself (the reason is shown to the author)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class SubmissionFailed(Exception):
    """The call did not reach a verdict (provider down, bad credentials): try again later."""


class TemplateSubmitter(Protocol):
    def submit(self, template, account) -> ProviderVerdict: ...

    def update(self, template, account) -> ProviderVerdict: ...

    def fetch_status(self, template, account) -> ProviderVerdict: ...

    def delete(self, *, name: str, provider_template_id: str | None, waba_id: str | None,
               account) -> None: ...


_SUBMITTERS: dict[str, TemplateSubmitter] = {}


def register_submitter(provider_name: str, submitter: TemplateSubmitter) -> None:
    _SUBMITTERS[provider_name] = submitter


def submitter_for(provider_name: str) -> TemplateSubmitter | None:
    return _SUBMITTERS.get(provider_name)


# --- Reading a ProviderAccount (messaging.providers) without depending on its internals ---


def account_credentials(account) -> dict[str, Any]:
    for attr in ("credentials_data", "credentials"):
        value = getattr(account, attr, None)
        if callable(value):
            value = value()
        if isinstance(value, dict):
            return value
        if isinstance(value, str) and value.strip():
            try:
                parsed = json.loads(value)
            except ValueError:
                continue
            if isinstance(parsed, dict):
                return parsed
    return {}


def account_config(account) -> dict[str, Any]:
    value = getattr(account, "config", None)
    return value if isinstance(value, dict) else {}


def account_provider_name(account) -> str:
    return str(getattr(account, "provider", "") or getattr(account, "provider_name", "") or "")


def account_waba_id(account) -> str | None:
    for source in (account_config(account), account_credentials(account)):
        for key in ("waba_id", "business_account_id", "whatsapp_business_account_id"):
            if source.get(key):
                return str(source[key])
    return None


def _base_url(account) -> str:
    base = getattr(account, "base_url", None) or account_config(account).get("base_url")
    return str(base or DEFAULT_GRAPH_BASE).rstrip("/")


def _version(account) -> str:
    return str(account_config(account).get("api_version")
               or getattr(settings, "WHATSAPP_GRAPH_VERSION", "v20.0"))


def _error_reason(response) -> str:
    body = response.json()
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        error = body["error"]
        text = error.get("error_user_msg") or error.get("message") or ""
        if text:
            return str(text)[:1000]
    return f"The provider answered {response.status_code}."


class WhatsAppCloudTemplates:
    """Template endpoints of the WhatsApp Cloud API (Graph API)."""

    name = "whatsapp_cloud"

    def _headers(self, account) -> dict[str, str]:
        token = account_credentials(account).get("access_token") or account_credentials(
            account).get("token")
        if not token:
            raise SubmissionFailed("the whatsapp account has no access_token")
        return {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                "Accept": "application/json"}

    def _call(self, method: str, url: str, account, payload: dict | None = None):
        headers = self._headers(account)
        content = json.dumps(payload).encode() if payload is not None else b""
        try:
            response = provider_client.request(self.name, method, url, content=content,
                                               headers=headers)
        except provider_client.ProviderUnavailable as exc:
            raise SubmissionFailed(exc.message) from exc
        if response.status_code in (401, 403):
            raise SubmissionFailed(f"the provider refused the credentials: "
                                   f"{_error_reason(response)}")
        return response

    def _waba(self, template, account) -> str:
        waba_id = template.waba_id or account_waba_id(account)
        if not waba_id:
            raise SubmissionRejected("No WhatsApp Business Account id (waba_id) is set on the "
                                     "template or the whatsapp provider account.")
        return waba_id

    def _verdict(self, body: Any, fallback_id: str | None = None) -> ProviderVerdict:
        body = body if isinstance(body, dict) else {}
        raw = str(body.get("status") or "").upper()
        status = WHATSAPP_STATUSES.get(raw) if raw else "pending"
        reason = body.get("rejected_reason") or body.get("reason")
        if reason in ("NONE", ""):
            reason = None
        return ProviderVerdict(status=status, reason=str(reason) if reason else None,
                               provider_template_id=str(body.get("id") or fallback_id or "")
                               or None)

    def submit(self, template, account) -> ProviderVerdict:
        url = f"{_base_url(account)}/{_version(account)}/{quote(self._waba(template, account))}" \
              "/message_templates"
        payload = {
            "name": template.name,
            "language": template.language,
            "category": template.category.upper(),
            "components": provider_components(template.components),
        }
        response = self._call("POST", url, account, payload)
        if not response.ok:
            raise SubmissionRejected(_error_reason(response))
        verdict = self._verdict(response.json())
        if not verdict.provider_template_id:
            raise SubmissionFailed("the provider answered no template id")
        return verdict

    def update(self, template, account) -> ProviderVerdict:
        if not template.provider_template_id:
            return self.submit(template, account)
        url = f"{_base_url(account)}/{_version(account)}/{quote(template.provider_template_id)}"
        payload = {"category": template.category.upper(),
                   "components": provider_components(template.components)}
        response = self._call("POST", url, account, payload)
        if not response.ok:
            raise SubmissionRejected(_error_reason(response))
        return ProviderVerdict(status="pending",
                               provider_template_id=template.provider_template_id)

    def fetch_status(self, template, account) -> ProviderVerdict:
        url = (f"{_base_url(account)}/{_version(account)}/{quote(template.provider_template_id)}?"
               + urlencode({"fields": "id,name,status,rejected_reason"}))
        response = self._call("GET", url, account)
        if not response.ok:
            raise SubmissionFailed(_error_reason(response))
        return self._verdict(response.json(), template.provider_template_id)

    def delete(self, *, name: str, provider_template_id: str | None, waba_id: str | None,
               account) -> None:
        waba_id = waba_id or account_waba_id(account)
        if not waba_id:
            return
        query = {"name": name}
        if provider_template_id:
            query["hsm_id"] = provider_template_id
        url = (f"{_base_url(account)}/{_version(account)}/{quote(waba_id)}/message_templates?"
               + urlencode(query))
        response = self._call("DELETE", url, account)
        if not response.ok and response.status_code != 404:
            raise SubmissionFailed(_error_reason(response))


register_submitter(WhatsAppCloudTemplates.name, WhatsAppCloudTemplates())


def live_account(organization, channel: str):
    """The organization's live account for `channel` (503 PROVIDER_NOT_WIRED when none)."""
    from messaging.providers.registry import provider_for

    _provider, account = provider_for(organization, channel)
    return account
