"""The agents' safety config: PII redaction before the model, a content filter on what
comes in and what goes out, and the customer phrases the handoff rules listen for."""

from __future__ import annotations

import re

_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
_CARD = re.compile(r"\b(?:\d[ -]?){13,19}\b")
_SSN = re.compile(r"\b\d{3}-\d{2}-\d{4}\b")
_PHONE = re.compile(r"(?<![\w+])\+?\d[\d ().-]{7,}\d\b")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b")


def _luhn(digits: str) -> bool:
    total, odd = 0, True
    for ch in reversed(digits):
        n = int(ch)
        if not odd:
            n = n * 2 - 9 if n * 2 > 9 else n * 2
        total += n
        odd = not odd
    return total % 10 == 0


def redact(text: str) -> str:
    """Emails, card numbers (Luhn-checked), US social security numbers, IBANs and phone
    numbers replaced by a label, so they never reach the model."""
    if not text:
        return text

    def card(match: re.Match) -> str:
        digits = re.sub(r"\D", "", match.group(0))
        return "[card]" if 13 <= len(digits) <= 19 and _luhn(digits) else match.group(0)

    text = _EMAIL.sub("[email]", text)
    text = _CARD.sub(card, text)
    text = _SSN.sub("[ssn]", text)
    text = _IBAN.sub("[iban]", text)
    return _PHONE.sub("[phone]", text)


# Abuse, threats and self-harm: the thread goes to a person instead of the model.
_BLOCKED = re.compile(
    r"\b(?:kill (?:you|yourself|myself)|suicid\w*|bomb threat|i will hurt|"
    r"fuck\w*|shit\w*|bitch\w*|cunt\w*|bastard\w*|n[i1]gg\w*|rape\w*|"
    r"terroris\w*|child porn\w*)\b", re.IGNORECASE)


def blocked(text: str) -> bool:
    return bool(text and _BLOCKED.search(text))


_HUMAN = re.compile(
    r"\b(?:(?:talk|speak|chat|connect)(?: me)? (?:to|with) (?:a |an |the |your |some )?"
    r"(?:human|person|people|real person|agent|representative|rep|operator|someone|"
    r"somebody|staff|manager|supervisor)|human (?:agent|being|please)|real person|"
    r"live (?:agent|person|chat)|customer (?:service|support) (?:agent|rep\w*)|"
    r"representative|operator please)\b", re.IGNORECASE)
_SOLVED = re.compile(
    r"\b(?:thanks?|thank you|thx|solved|resolved|that (?:works|helps|helped|did it)|"
    r"perfect|got it|all good|problem solved)\b", re.IGNORECASE)


def asks_for_human(text: str) -> bool:
    return bool(text and _HUMAN.search(text))


def says_solved(text: str) -> bool:
    return bool(text and _SOLVED.search(text))
