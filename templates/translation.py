"""Translation of template texts for `localize`, through the AI engine interface.

    translate(texts, source_locale, target_locale) -> list[str]

answers one translated string per input, in order, keeping every positional placeholder
`{{n}}` intact. The AI engine (the agents issue) plugs its translator in with
`set_engine(callable)`; until then, and always in tests, the sandbox translator answers:
it is deterministic, makes no outside call and prefixes each text with `[<locale>] `.

Whatever engine answers, `translate` checks the result: as many strings as texts, and the
same placeholders in each (a translation that drops or invents one is refused with
`TranslationError`, so a variant never loses a variable).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from .components import placeholders_in

Engine = Callable[[Sequence[str], str, str], list[str]]


class TranslationError(Exception):
    """The engine failed or answered something unusable."""


def sandbox_translate(texts: Sequence[str], source_locale: str, target_locale: str) -> list[str]:
    """Deterministic stand-in: `[fr] Hello {{1}}`; placeholders untouched."""
    return [f"[{target_locale}] {text}" for text in texts]


_engine: Engine | None = None


def set_engine(engine: Engine | None) -> None:
    """Install the AI engine's translator (None restores the sandbox translator)."""
    global _engine
    _engine = engine


def get_engine() -> Engine:
    return _engine or sandbox_translate


def translate(texts: Sequence[str], source_locale: str, target_locale: str) -> list[str]:
    texts = list(texts)
    if not texts:
        return []
    try:
        result = list(get_engine()(texts, source_locale, target_locale))
    except TranslationError:
        raise
    except Exception as exc:  # an engine failure is reported per locale, never a 500
        raise TranslationError(f"the translation engine failed: {exc}") from exc
    if len(result) != len(texts) or not all(isinstance(t, str) for t in result):
        raise TranslationError("the translation engine answered the wrong number of texts")
    for original, translated in zip(texts, result, strict=True):
        if Counter(placeholders_in(original)) != Counter(placeholders_in(translated)):
            raise TranslationError("the translation changed the {{n}} placeholders")
    return result
