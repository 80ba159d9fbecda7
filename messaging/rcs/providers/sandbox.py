"""The test-mode RCS provider: the product's test mode for brands, agents, testers,
templates and capability (0-conventions.md section 6). It never contacts anything outside
the process and walks the live lifecycle, decisions arriving right after the request
commits (as a carrier's verdict would, later), with the same events:

- Brand submit: `submitted`, then `verified`, or `rejected` when the brand's name contains
  "reject" (any case).
- Agent verify: `verification_status` `pending`, then `verified` (or `rejected` when the
  display name contains "reject"); a verified agent is launched on each of its `carriers`
  (default `SANDBOX_CARRIERS`), except a carrier whose name contains "reject" (REJECTED) or
  "pending" (stays PENDING). Launched on at least one carrier: agent `status` `launched`.
- Template: `pending`, then `approved`, or `rejected` when its name starts with "reject".
- Capability: every number is RCS-capable except the rich-channel failure number of the
  messaging test numbers (`+15005550011`, which RCS and WhatsApp sends cannot reach).
- Tester invite: `invited`; the not-capable number answers 422 RCS_NOT_CAPABLE.
"""

from __future__ import annotations

from collections.abc import Iterable

from messaging.providers import sandbox as messaging_sandbox
from platform_core.errors import APIError

from .base import Capability, Decision

SANDBOX_CARRIERS = ("sandbox-carrier-a", "sandbox-carrier-b")
NOT_CAPABLE = messaging_sandbox.RICH_FAIL_RECIPIENTS
FEATURES = ["RICHCARD_STANDALONE", "RICHCARD_CAROUSEL", "ACTION_CREATE_CALENDAR_EVENT",
            "ACTION_DIAL", "ACTION_OPEN_URL", "ACTION_SHARE_LOCATION", "ACTION_VIEW_LOCATION"]


class SandboxRcsProvider:
    name = "sandbox"
    decides_immediately = True

    def brand_submit(self, brand) -> str:
        return f"brands/sandbox-{brand.pk.lower()}"

    def brand_decision(self, brand) -> Decision | None:
        if "reject" in brand.name.lower():
            return Decision("rejected", "Sandbox: the brand name contains 'reject'.")
        return Decision("verified")

    def brand_delete(self, brand) -> None:
        return None

    def agent_create(self, agent) -> str:
        return f"{agent.brand.provider_ref or 'brands/sandbox'}/agents/sandbox_{agent.pk.lower()}"

    def agent_update(self, agent, fields: Iterable[str]) -> None:
        return None

    def agent_delete(self, agent) -> None:
        return None

    def agent_verify(self, agent) -> None:
        return None

    def agent_refresh(self, agent) -> Decision | None:
        if agent.verification_status != "pending":
            return None
        if "reject" in agent.display_name.lower():
            return Decision("rejected", "Sandbox: the display name contains 'reject'.")
        statuses = {}
        for carrier in agent.carriers or SANDBOX_CARRIERS:
            lowered = carrier.lower()
            status = ("REJECTED" if "reject" in lowered else
                      "PENDING" if "pending" in lowered else "LAUNCHED")
            statuses[carrier] = {"status": status}
        return Decision("verified", carrier_statuses=statuses)

    def tester_invite(self, agent, phone: str) -> str:
        if phone in NOT_CAPABLE:
            raise APIError("RCS_NOT_CAPABLE", details={"phone": phone})
        return "invited"

    def template_decision(self, template) -> Decision:
        if template.name.lower().startswith("reject"):
            return Decision("rejected", "Sandbox: the template name starts with 'reject'.")
        return Decision("approved")

    def capability(self, agent, phone: str) -> Capability:
        if phone in NOT_CAPABLE:
            return Capability(False, [])
        return Capability(True, list(FEATURES))

    def reachable(self, agent, phones: list[str]) -> set[str]:
        return {p for p in phones if p not in NOT_CAPABLE}
