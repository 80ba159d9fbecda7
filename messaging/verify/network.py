"""Silent network authentication (`sna`): the operator confirms that the device holding
`device_token` uses the number (CAMARA number verification, Document 3, 4.8).

    adapter = number_verification_for(organization)   # 503 PROVIDER_NOT_WIRED when none
    adapter.verify(phone_number="+1415...", device_token="...") -> bool

Both modes use the network-signal family's operator adapter (messaging/numbers/network):
test mode its sandbox double (any token matches except `SANDBOX_MISMATCH_TOKEN`, and the
test number +15005550103 never matches), live mode the CAMARA client registered with
`register_number_verification` at start-up, which fails closed (503 PROVIDER_NOT_WIRED)
while the deployment has no operator credentials.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from platform_core.errors import APIError

SANDBOX_MISMATCH_TOKEN = "sandbox-mismatch"  # noqa: S105 - a documented test value


class NumberVerification(Protocol):
    def verify(self, *, phone_number: str, device_token: str) -> bool: ...


class SandboxNumberVerification:
    """The test-mode double: the network-signal sandbox's number verification."""

    def verify(self, *, phone_number: str, device_token: str) -> bool:
        from messaging.numbers.network.adapters import SandboxNetwork, SignalUnavailable

        try:
            return SandboxNetwork().verify_number(phone_number=phone_number,
                                                  hashed_phone_number=None,
                                                  access_token=device_token)
        except SignalUnavailable:
            return False


_LIVE: Callable[[], NumberVerification] | None = None


def register_number_verification(factory: Callable[[], NumberVerification] | None) -> None:
    global _LIVE
    _LIVE = factory


def not_wired(reason: str) -> APIError:
    return APIError("PROVIDER_NOT_WIRED", f"Silent network authentication: {reason}",
                    details={"channel": "sna"})


def number_verification_for(organization) -> NumberVerification:
    if organization.sandbox:
        return SandboxNumberVerification()
    if _LIVE is None:
        raise not_wired("no network operator is configured on this deployment.")
    return _LIVE()
