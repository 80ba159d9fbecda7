"""Google's RCS management and capability APIs, with the organization's `rcs` provider
account (credentials encrypted at rest in `ProviderAccount`, the OAuth token obtained by the
RCS send adapter's `access_token`). Every call goes through the hardened provider client.

Business Communications API (brands, agents, verification, launch), base
`https://businesscommunications.googleapis.com`:

    POST   /v1/brands                                   {"displayName"}  -> {"name": "brands/B"}
    DELETE /v1/brands/B
    POST   /v1/brands/B/agents                          Agent            -> {"name": ".../agents/A"}
    PATCH  /v1/brands/B/agents/A?updateMask=...         Agent
    DELETE /v1/brands/B/agents/A
    POST   /v1/brands/B/agents/A:requestVerification    {"agentVerificationContact"}
    POST   /v1/brands/B/agents/A:requestLaunch          {"agentLaunch"}
    GET    /v1/brands/B/agents/A/verification           {"verificationState"}
    GET    /v1/brands/B/agents/A/launch                 {"rcsBusinessMessaging": {"launchDetails"}}

RBM API (testers, capability), base `https://rcsbusinessmessaging.googleapis.com`:

    POST /v1/phones/{msisdn}/testers?agentId=A
    GET  /v1/phones/{msisdn}/capabilities?requestId=<uuid>&agentId=A  -> {"features": [...]}
                                                          404 NOT_FOUND: not RCS-capable
    POST /v1/users:batchGet {"users": [...], "agentId"}   -> {"reachableUsers": [...]}

The account's `base_url` (tests: a loopback stand-in) replaces both bases. Google has no
brand review of its own: a brand counts as verified once one of its agents is verified.
Google reviews no message templates either: a template is approved at submission.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, urlencode

from messaging.providers.adapters import common
from messaging.providers.adapters.rcs import access_token
from messaging.providers.base import ProviderError
from platform_core.errors import APIError

from .base import Capability, Decision

MANAGEMENT_BASE_URL = "https://businesscommunications.googleapis.com"
RBM_BASE_URL = "https://rcsbusinessmessaging.googleapis.com"
NAME = "rcs_business"
BATCH_GET_MAX = 10_000

_VERIFICATION = {"VERIFICATION_STATE_VERIFIED": "verified",
                 "VERIFICATION_STATE_PENDING": "pending",
                 "VERIFICATION_STATE_UNVERIFIED": "unverified",
                 "VERIFICATION_STATE_SUSPENDED_IN_GMB": "rejected"}
_LAUNCH = {"LAUNCH_STATE_LAUNCHED": "LAUNCHED", "LAUNCH_STATE_PENDING": "PENDING",
           "LAUNCH_STATE_REJECTED": "REJECTED", "LAUNCH_STATE_SUSPENDED": "SUSPENDED",
           "LAUNCH_STATE_UNLAUNCHED": "UNLAUNCHED", "LAUNCH_STATE_PENDING_UNLAUNCH": "PENDING"}
_FIELD_MASKS = {"display_name": "displayName", "description": "rcsBusinessMessagingAgent.description",
                "logo_url": "rcsBusinessMessagingAgent.logoUri",
                "hero_url": "rcsBusinessMessagingAgent.heroUri",
                "color": "rcsBusinessMessagingAgent.color",
                "phone": "rcsBusinessMessagingAgent.phoneNumbers",
                "email": "rcsBusinessMessagingAgent.emails",
                "website": "rcsBusinessMessagingAgent.websites",
                "privacy_url": "rcsBusinessMessagingAgent.privacy",
                "terms_url": "rcsBusinessMessagingAgent.termsConditions",
                "use_case": "rcsBusinessMessagingAgent.agentUseCase"}


def agent_body(agent) -> dict[str, Any]:
    """The Business Communications `Agent` of one of ours."""
    rbm: dict[str, Any] = {"description": agent.description or agent.display_name,
                           "agentUseCase": agent.use_case, "hostingRegion": "NORTH_AMERICA",
                           "billingConfig": {"billingCategory": "CONVERSATIONAL"}}
    if agent.logo_url:
        rbm["logoUri"] = agent.logo_url
    if agent.hero_url:
        rbm["heroUri"] = agent.hero_url
    if agent.color:
        rbm["color"] = agent.color
    if agent.phone:
        rbm["phoneNumbers"] = [{"phoneNumber": {"number": agent.phone}, "label": "Call us"}]
    if agent.email:
        rbm["emails"] = [{"address": agent.email, "label": "Email us"}]
    if agent.website:
        rbm["websites"] = [{"uri": agent.website, "label": "Website"}]
    if agent.privacy_url:
        rbm["privacy"] = {"uri": agent.privacy_url, "label": "Privacy policy"}
    if agent.terms_url:
        rbm["termsConditions"] = {"uri": agent.terms_url, "label": "Terms and conditions"}
    return {"displayName": agent.display_name, "rcsBusinessMessagingAgent": rbm}


class GoogleRcsProvider:
    name = NAME
    decides_immediately = False

    def __init__(self, account) -> None:
        self.account = account

    # --- the wire -------------------------------------------------------------------------
    def _base(self, default: str) -> str:
        try:
            return common.base_url(self.account, default)
        except ProviderError as exc:
            raise _provider_error(exc.code, exc.message, 0) from None

    def _call(self, method: str, base: str, path: str, body: Any = None, *,
              allow_404: bool = False) -> dict[str, Any] | None:
        url = f"{self._base(base)}{path}"
        try:
            headers = {"Authorization": f"Bearer {access_token(self.account)}",
                       "Accept": "application/json"}
            content = b""
            if body is not None:
                content = json.dumps(body).encode()
                headers["Content-Type"] = "application/json"
            response = common.call(NAME, method, url, content=content, headers=headers)
        except ProviderError as exc:
            raise _provider_error(exc.code, exc.message, 0) from None
        data = common.as_dict(response.json())
        if response.ok:
            return data
        error = common.as_dict(data.get("error"))
        if allow_404 and response.status_code == 404:
            return None
        raise _provider_error(error.get("status") or str(response.status_code),
                              error.get("message") or "", response.status_code)

    def _agent_id(self, agent) -> str:
        agent_id = (agent.provider_agent_id if agent is not None else "") or \
            self.account.setting("agent_id")
        if not agent_id:
            raise _provider_error(common.MISCONFIGURED,
                                  "The agent has no Google agent id yet.", 0)
        return str(agent_id)

    # --- brands ---------------------------------------------------------------------------
    def brand_submit(self, brand) -> str:
        if brand.provider_ref:
            return brand.provider_ref
        data = self._call("POST", MANAGEMENT_BASE_URL, "/v1/brands",
                          {"displayName": brand.name}) or {}
        return str(data.get("name") or "")

    def brand_decision(self, brand) -> Decision | None:
        if brand.agents.filter(verification_status="verified").exists():
            return Decision("verified")
        return None

    def brand_delete(self, brand) -> None:
        if brand.provider_ref:
            self._call("DELETE", MANAGEMENT_BASE_URL, f"/v1/{brand.provider_ref}",
                       allow_404=True)

    # --- agents ---------------------------------------------------------------------------
    def agent_create(self, agent) -> str:
        brand = agent.brand
        if not brand.provider_ref:
            brand.provider_ref = self.brand_submit(brand)
            brand.save(update_fields=["provider_ref", "updated_at"])
        data = self._call("POST", MANAGEMENT_BASE_URL, f"/v1/{brand.provider_ref}/agents",
                          agent_body(agent)) or {}
        return str(data.get("name") or "")

    def agent_update(self, agent, fields: Iterable[str]) -> None:
        mask = sorted({_FIELD_MASKS[f] for f in fields if f in _FIELD_MASKS})
        if not mask or not agent.provider_ref:
            return
        self._call("PATCH", MANAGEMENT_BASE_URL,
                   f"/v1/{agent.provider_ref}?{urlencode({'updateMask': ','.join(mask)})}",
                   agent_body(agent))

    def agent_delete(self, agent) -> None:
        if agent.provider_ref:
            self._call("DELETE", MANAGEMENT_BASE_URL, f"/v1/{agent.provider_ref}",
                       allow_404=True)

    def agent_verify(self, agent) -> None:
        brand = agent.brand
        contact = {"partnerName": self.account.setting("partner_name") or "Engage",
                   "partnerEmailAddress": self.account.setting("partner_email") or "",
                   "brandContactName": brand.contact_name,
                   "brandContactEmailAddress": brand.contact_email,
                   "brandWebsiteUrl": brand.website}
        self._call("POST", MANAGEMENT_BASE_URL, f"/v1/{agent.provider_ref}:requestVerification",
                   {"agentVerificationContact": contact})
        carriers = {c: {} for c in agent.carriers or []}
        self._call("POST", MANAGEMENT_BASE_URL, f"/v1/{agent.provider_ref}:requestLaunch",
                   {"agentLaunch": {"rcsBusinessMessaging": {"launchDetails": carriers}}})

    def agent_refresh(self, agent) -> Decision | None:
        if not agent.provider_ref:
            return None
        verification = self._call("GET", MANAGEMENT_BASE_URL,
                                  f"/v1/{agent.provider_ref}/verification", allow_404=True) or {}
        launch = self._call("GET", MANAGEMENT_BASE_URL, f"/v1/{agent.provider_ref}/launch",
                            allow_404=True) or {}
        details = common.as_dict(common.as_dict(launch.get("rcsBusinessMessaging"))
                                 .get("launchDetails"))
        statuses = {str(carrier): {"status": _LAUNCH.get(
            str(common.as_dict(value).get("launchState")), "UNKNOWN")}
            for carrier, value in details.items()}
        state = _VERIFICATION.get(str(verification.get("verificationState")),
                                  agent.verification_status)
        return Decision(state, carrier_statuses=statuses)

    # --- testers, templates, capability ------------------------------------------------------
    def tester_invite(self, agent, phone: str) -> str:
        query = urlencode({"agentId": self._agent_id(agent)})
        self._call("POST", RBM_BASE_URL, f"/v1/phones/{quote(phone, safe='+')}/testers?{query}",
                   {})
        return "invited"

    def template_decision(self, template) -> Decision:
        return Decision("approved")

    def capability(self, agent, phone: str) -> Capability:
        query = urlencode({"requestId": str(uuid.uuid4()), "agentId": self._agent_id(agent)})
        data = self._call("GET", RBM_BASE_URL,
                          f"/v1/phones/{quote(phone, safe='+')}/capabilities?{query}",
                          allow_404=True)
        if data is None:
            return Capability(False, [])
        features = data.get("features")
        return Capability(True, [str(f) for f in features] if isinstance(features, list) else [])

    def reachable(self, agent, phones: list[str]) -> set[str]:
        found: set[str] = set()
        agent_id = self._agent_id(agent)
        for start in range(0, len(phones), BATCH_GET_MAX):
            chunk = phones[start:start + BATCH_GET_MAX]
            data = self._call("POST", RBM_BASE_URL, "/v1/users:batchGet",
                              {"users": chunk, "agentId": agent_id}) or {}
            users = data.get("reachableUsers")
            if isinstance(users, list):
                found.update(str(u) for u in users)
        return found & set(phones)


def _provider_error(status: Any, message: str, http_status: int) -> APIError:
    return APIError("RCS_PROVIDER_ERROR",
                    f"Google's RCS API answered {status}: {message}"[:500],
                    details={"provider_status": str(status), "http_status": http_status})
