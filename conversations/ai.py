"""The conversation AI engine's seam: sentiment, handoff brief, outcome prediction.

Deterministic, dependency-free stand-ins behind three functions, so tests and test mode
give stable answers. A model-backed engine replaces these functions (same signatures and
return shapes); callers never look inside.
"""

from __future__ import annotations

import re
from typing import Any

_POSITIVE = frozenset(["thanks", "thank", "great", "good", "love", "awesome", "perfect", "excellent", "happy", "nice", "helpful", "resolved", "appreciate", "wonderful", "amazing", "fantastic", "glad", "works", "yes"])
_NEGATIVE = frozenset(["bad", "terrible", "awful", "angry", "hate", "worst", "broken", "refund", "cancel", "useless", "slow", "never", "problem", "issue", "wrong", "disappointed", "frustrated", "complaint", "unacceptable", "ridiculous", "scam", "horrible", "not", "no"])
_WORD = re.compile(r"[a-z']+")


def sentiment(text: str) -> tuple[float, str]:
    """(score in [-1, 1], label `positive`/`neutral`/`negative`) of one inbound message."""
    words = _WORD.findall((text or "").lower())
    if not words:
        return 0.0, "neutral"
    pos = sum(w in _POSITIVE for w in words)
    neg = sum(w in _NEGATIVE for w in words)
    score = round((pos - neg) / max(pos + neg, 1), 2) if pos or neg else 0.0
    label = "positive" if score > 0.2 else "negative" if score < -0.2 else "neutral"
    return score, label


def handoff_brief(*, reason_category: str, inbound_texts: list[str]) -> str:
    """A short brief for the human taking over: why, and what the customer said last."""
    recent = [t.strip() for t in inbound_texts if t and t.strip()][-3:]
    said = " / ".join(t[:120] for t in recent) if recent else "no customer messages yet"
    return f"Handoff ({reason_category}). Customer said: {said}"


def predict_outcome(*, scores: list[float], status: str, priority: str, escalated: bool,
                    unread_count: int, assigned: bool) -> dict[str, Any]:
    """Outcome prediction: `predicted_outcome`, `resolution_probability`, `churn_risk`,
    `recommended_action` (one of monitor, coach_agent, proactive_escalate, reassign,
    offer_resolution)."""
    recent = scores[-5:]
    mood = sum(recent) / len(recent) if recent else 0.0
    probability = 0.6 + 0.3 * mood
    if escalated:
        probability -= 0.15
    if priority in ("high", "urgent"):
        probability -= 0.05
    if unread_count > 3:
        probability -= 0.1
    if status == "closed":
        probability = max(probability, 0.9)
    probability = round(min(max(probability, 0.01), 0.99), 2)
    churn = round(min(max(1 - probability - 0.1 * mood, 0.0), 1.0), 2)
    if status == "closed":
        action = "monitor"
    elif mood < -0.5 and not escalated:
        action = "proactive_escalate"
    elif mood < -0.2 and not assigned:
        action = "reassign"
    elif mood < -0.2:
        action = "coach_agent"
    elif probability >= 0.7 and status == "open":
        action = "offer_resolution"
    else:
        action = "monitor"
    outcome = ("resolved" if probability >= 0.6 else
               "escalated" if escalated or mood < -0.5 else "at_risk")
    return {"predicted_outcome": outcome, "resolution_probability": probability,
            "churn_risk": churn, "recommended_action": action,
            "signals": {"recent_sentiment": round(mood, 2), "messages_scored": len(scores)}}
