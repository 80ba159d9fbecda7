"""Price table: integer cents per million tokens, per model (prompt, completion).

Platform defaults below; a deployment overrides or adds models with the AI_MODEL_PRICES
setting (`{"model": [prompt_cents_per_million, completion_cents_per_million]}`). A model
not in the table is priced as `default`. A call's cost is rounded UP to the whole cent
(a call is never free by rounding): ceil((prompt * p + completion * c) / 1,000,000).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

DEFAULT_PRICES: dict[str, tuple[int, int]] = {
    "local": (100, 200),  # the local engine: compute only, priced low but not free
    "all-MiniLM-L6-v2": (2, 0),
    "gpt-4o-mini": (15, 60),
    "gpt-4o": (250, 1000),
    "gpt-4.1-mini": (40, 160),
    "text-embedding-3-small": (2, 0),
    "text-embedding-3-large": (13, 0),
    "default": (100, 400),
}


@dataclass(frozen=True)
class Price:
    model: str
    prompt_per_million: int
    completion_per_million: int

    def cost_cents(self, prompt_tokens: int, completion_tokens: int) -> int:
        micro = prompt_tokens * self.prompt_per_million + (
            completion_tokens * self.completion_per_million)
        return -(-micro // 1_000_000)  # ceiling division in integers


def table() -> dict[str, tuple[int, int]]:
    prices = dict(DEFAULT_PRICES)
    for model, pair in (getattr(settings, "AI_MODEL_PRICES", None) or {}).items():
        prices[str(model)] = (int(pair[0]), int(pair[1]))
    return prices


def price_for(model: str) -> Price:
    prices = table()
    prompt, completion = prices.get(model) or prices["default"]
    return Price(model=model, prompt_per_million=prompt, completion_per_million=completion)
