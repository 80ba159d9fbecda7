"""The AI engine: one interface, two engines, chosen per organization and mode.

    from agents import engine
    eng = engine.get_engine(organization)          # LocalEngine or LiveEngine
    result = engine.complete(organization, messages, feature="...")   # metered
    vectors = engine.embed(organization, texts, feature="...")        # metered

See docs/ai-engine.md for the whole API (task helpers in `agents.engine.helpers`).
"""

from __future__ import annotations

from platform_core.tenancy.models import Organization

from .base import ChatDelta, ChatResult, EmbedResult, Engine, EngineError
from .calls import complete, complete_stream, embed
from .live import LiveEngine
from .local import LocalEngine

_local = LocalEngine()
_live = LiveEngine()


def get_engine(organization: Organization | None) -> Engine:
    """The local engine in test mode (a sandbox organization) and whenever no upstream is
    configured (LLM_BASE_URL and LLM_API_KEY); the live engine otherwise."""
    from . import live

    if organization is None or organization.sandbox or not live.configured():
        return _local
    return _live


__all__ = ["ChatDelta", "ChatResult", "EmbedResult", "Engine", "EngineError", "LiveEngine",
           "LocalEngine", "complete", "complete_stream", "embed", "get_engine"]
