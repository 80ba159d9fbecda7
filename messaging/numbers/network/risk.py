"""The composite risk score (Document 3, 4.8 `risk:score`).

Each signal, when asked and available, contributes `weight x factor` (factor 0..1); the
score is their sum capped at 100. Signals:

| signal | default weight | asked when | factor |
|---|---|---|---|
| `sim_swap` | 35 | always (window `simSwapMaxAge` hours) | 1 swapped, else 0 |
| `number_verification` | 25 | `accessToken` given | 1 not verified, else 0 |
| `device_location` | 20 | `claimedLocation` given | FALSE 1, PARTIAL 0.5, TRUE 0; UNKNOWN counts as unavailable |
| `call_forwarding` | 15 | always (`callForwardingUnconditional` overrides the network) | 1 active |
| `reputation` | 20 | `reputationRiskLevel` given | high 1, medium 0.5, low 0; `unknown` contributes nothing |
| `roaming` | 10 | `roaming` given | 1 roaming |
| `reachability` | 5 | always | 1 NOT_CONNECTED |

A signal the operator cannot give is reported `unavailable` and contributes nothing.
Decision: score >= `thresholds.deny` (default 70) `deny`; >= `thresholds.review`
(default 40) `review`; else `allow`. `risk_level`: `high`, `medium`, `low` on the same cuts.
Reason codes name every contributing signal.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from .adapters import NetworkAdapter, SignalUnavailable

DEFAULT_WEIGHTS = {"sim_swap": 35, "number_verification": 25, "device_location": 20,
                   "call_forwarding": 15, "reputation": 20, "roaming": 10, "reachability": 5}
DEFAULT_THRESHOLDS = {"review": 40, "deny": 70}
REASONS = {"sim_swap": "SIM_SWAP_RECENT", "number_verification": "NUMBER_NOT_VERIFIED",
           "call_forwarding": "CALL_FORWARDING_ACTIVE", "roaming": "ROAMING",
           "reachability": "DEVICE_NOT_CONNECTED"}


def _signal(status: str, weight: int, factor: float = 0.0, value: Any = None,
            reason: str | None = None) -> dict[str, Any]:
    contribution = round(weight * factor, 2) if status == "evaluated" else 0
    return {"status": status, "weight": weight, "contribution": contribution, "value": value,
            "reason_code": reason if contribution else None}


def score(adapter: NetworkAdapter, data: dict[str, Any]) -> dict[str, Any]:
    number = data["phoneNumber"]
    weights = {**DEFAULT_WEIGHTS, **(data.get("weights") or {})}
    thresholds = {**DEFAULT_THRESHOLDS, **(data.get("thresholds") or {})}
    signals: dict[str, dict[str, Any]] = {}

    def ask(name: str, call, judge) -> None:
        try:
            value = call()
        except SignalUnavailable:
            signals[name] = _signal("unavailable", weights[name])
            return
        factor, reason = judge(value)
        signals[name] = _signal("evaluated", weights[name], factor, value, reason)

    ask("sim_swap", lambda: adapter.sim_swap_check(
        phone_number=number, max_age_hours=data.get("simSwapMaxAge") or 240),
        lambda v: (1.0 if v else 0.0, REASONS["sim_swap"]))
    if data.get("accessToken"):
        ask("number_verification", lambda: adapter.verify_number(
            phone_number=number, hashed_phone_number=None, access_token=data["accessToken"]),
            lambda v: (0.0 if v else 1.0, REASONS["number_verification"]))
    else:
        signals["number_verification"] = _signal("not_requested",
                                                 weights["number_verification"])
    claimed = data.get("claimedLocation")
    if claimed:
        try:
            result, rate = adapter.location_verify(
                phone_number=number, latitude=claimed["latitude"],
                longitude=claimed["longitude"], radius=claimed["radius"],
                max_age=claimed.get("maxAge"))
        except SignalUnavailable:
            result, rate = "UNKNOWN", None
        if result == "UNKNOWN":
            signals["device_location"] = _signal("unavailable", weights["device_location"],
                                                 value=result)
        else:
            factor = {"FALSE": 1.0, "PARTIAL": 0.5}.get(result, 0.0)
            signals["device_location"] = _signal(
                "evaluated", weights["device_location"], factor,
                {"verificationResult": result, "matchRate": rate},
                "LOCATION_MISMATCH" if result == "FALSE" else "LOCATION_PARTIAL_MATCH")
    else:
        signals["device_location"] = _signal("not_requested", weights["device_location"])
    forwarding = data.get("callForwardingUnconditional")
    if forwarding is None:
        ask("call_forwarding", lambda: adapter.call_forwarding(phone_number=number),
            lambda v: (1.0 if v else 0.0, REASONS["call_forwarding"]))
    else:
        signals["call_forwarding"] = _signal("evaluated", weights["call_forwarding"],
                                             1.0 if forwarding else 0.0, forwarding,
                                             REASONS["call_forwarding"])
    level = data.get("reputationRiskLevel")
    if level is None:
        signals["reputation"] = _signal("not_requested", weights["reputation"])
    elif level == "unknown":
        signals["reputation"] = _signal("unavailable", weights["reputation"], value=level)
    else:
        signals["reputation"] = _signal(
            "evaluated", weights["reputation"], {"high": 1.0, "medium": 0.5}.get(level, 0.0),
            level, "REPUTATION_HIGH" if level == "high" else "REPUTATION_MEDIUM")
    roaming = data.get("roaming")
    if roaming is None:
        signals["roaming"] = _signal("not_requested", weights["roaming"])
    else:
        signals["roaming"] = _signal("evaluated", weights["roaming"], 1.0 if roaming else 0.0,
                                     roaming, REASONS["roaming"])
    ask("reachability", lambda: adapter.reachability(phone_number=number),
        lambda v: (1.0 if v == "NOT_CONNECTED" else 0.0, REASONS["reachability"]))

    total = min(100.0, sum(s["contribution"] for s in signals.values()))
    risk_score = round(total)
    if risk_score >= thresholds["deny"]:
        decision, risk_level = "deny", "high"
    elif risk_score >= thresholds["review"]:
        decision, risk_level = "review", "medium"
    else:
        decision, risk_level = "allow", "low"
    return {
        "phoneNumber": number,
        "decision": decision,
        "risk_score": risk_score,
        "risk_level": risk_level,
        "reason_codes": [s["reason_code"] for s in signals.values() if s["reason_code"]],
        "unavailable_signals": sorted(n for n, s in signals.items()
                                      if s["status"] == "unavailable"),
        "signals": signals,
        "weights": weights,
        "thresholds": thresholds,
        "context": data.get("context"),
        "evaluated_at": timezone.now(),
    }
