"""Models of the agents app. Metering of model calls lives in agents/usage/."""

from agents.usage.models import AIBudget, AISpendDay, AIUsage

__all__ = ["AIBudget", "AISpendDay", "AIUsage"]
