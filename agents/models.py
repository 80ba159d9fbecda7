"""Models of the agents app: the agent resource (agent_models.py) and the metering of
model calls (agents/usage/)."""

from agents.agent_models import (
    Agent,
    AgentConversation,
    AgentStatus,
    AgentVersion,
    DeployChannel,
)
from agents.usage.models import AIBudget, AISpendDay, AIUsage

__all__ = ["AIBudget", "AISpendDay", "AIUsage", "Agent", "AgentConversation", "AgentStatus",
           "AgentVersion",
           "DeployChannel"]
