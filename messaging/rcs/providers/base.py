"""The one interface both RCS management providers implement (live Google, test-mode double).

Every method takes the platform's records (already validated by the services) and answers
the provider's view; the services store it. A provider failure raises
`APIError("RCS_PROVIDER_ERROR")` (live only).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class Decision:
    """A provider's verdict on a brand, agent verification or template."""

    status: str                      # e.g. "verified" / "rejected" / "pending" / "approved"
    reason: str = ""
    carrier_statuses: dict[str, dict] = field(default_factory=dict)


@dataclass(frozen=True)
class Capability:
    rcs_enabled: bool
    features: list[str] = field(default_factory=list)


class RcsManagementProvider(Protocol):
    name: str
    # Whether the verdict of a submission comes at once after commit (the double, and
    # Google's templates which have no review) or later through `agent_refresh`.
    decides_immediately: bool

    def brand_submit(self, brand) -> str:
        """Register the brand with the provider; answers its provider reference."""

    def brand_decision(self, brand) -> Decision | None:
        """The verification verdict on a submitted brand (None: still under review)."""

    def brand_delete(self, brand) -> None: ...

    def agent_create(self, agent) -> str:
        """Create the agent; answers its provider reference."""

    def agent_update(self, agent, fields: Iterable[str]) -> None: ...

    def agent_delete(self, agent) -> None: ...

    def agent_verify(self, agent) -> None:
        """Ask for verification and launch on `agent.carriers`."""

    def agent_refresh(self, agent) -> Decision | None:
        """The current verification verdict and carrier launch states (None: unchanged)."""

    def tester_invite(self, agent, phone: str) -> str:
        """Invite `phone` as a tester; answers the device status."""

    def template_decision(self, template) -> Decision: ...

    def capability(self, agent, phone: str) -> Capability: ...

    def reachable(self, agent, phones: list[str]) -> set[str]:
        """The subset of `phones` that can receive RCS from `agent` (one bulk probe)."""
