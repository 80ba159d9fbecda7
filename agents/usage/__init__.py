"""Metering of every model call: usage rows, prices, budget caps (see docs/ai-engine.md)."""
