"""The text of a code: the profile's template or the locale's default, per channel.

A template holds `{code}` and may hold `{name}` (the profile's or organization's name),
`{minutes}` (the code's lifetime) and the send's `template_variables` keys. Voice reads
the digits one by one, twice.

Telegram (Telegram Gateway) and flash calls carry the code alone: Telegram writes its own
localized text, a flash call has none. A magic link's text holds the link where a code's
holds the code (`{code}` and `{link}` in a profile template are the link).

`render(..., masked=True)` is the same text with the code as `MASK`: what the message
stores in its readable `body` (the real text goes to the provider only, encrypted at rest
until sent: messaging.models.Message.secret_body).
"""

from __future__ import annotations

import re

LOCALES = ("en", "es", "fr", "de", "pt", "it", "nl")
DEFAULT_LOCALE = "en"

_TEXT = {
    "en": "Your {name} verification code is: {code}. It expires in {minutes} minutes.",
    "es": "Tu código de verificación de {name} es: {code}. Caduca en {minutes} minutos.",
    "fr": "Votre code de vérification {name} est : {code}. Il expire dans {minutes} minutes.",
    "de": "Ihr {name} Bestätigungscode lautet: {code}. Er läuft in {minutes} Minuten ab.",
    "pt": "O seu código de verificação {name} é: {code}. Expira em {minutes} minutos.",
    "it": "Il tuo codice di verifica {name} è: {code}. Scade tra {minutes} minuti.",
    "nl": "Uw {name} verificatiecode is: {code}. Deze verloopt over {minutes} minuten.",
}
_VOICE = {
    "en": "Your {name} verification code is {code}. Again, your code is {code}.",
    "es": "Su código de verificación de {name} es {code}. Repito, su código es {code}.",
    "fr": "Votre code de vérification {name} est {code}. Je répète, votre code est {code}.",
    "de": "Ihr {name} Bestätigungscode lautet {code}. Noch einmal, Ihr Code lautet {code}.",
    "pt": "O seu código de verificação {name} é {code}. Repito, o seu código é {code}.",
    "it": "Il tuo codice di verifica {name} è {code}. Ripeto, il tuo codice è {code}.",
    "nl": "Uw {name} verificatiecode is {code}. Nogmaals, uw code is {code}.",
}
_SUBJECT = {
    "en": "Your {name} verification code",
    "es": "Tu código de verificación de {name}",
    "fr": "Votre code de vérification {name}",
    "de": "Ihr {name} Bestätigungscode",
    "pt": "O seu código de verificação {name}",
    "it": "Il tuo codice di verifica {name}",
    "nl": "Uw {name} verificatiecode",
}
_LINK = {
    "en": "Sign in to {name} with this link: {link} It expires in {minutes} minutes.",
    "es": "Inicia sesión en {name} con este enlace: {link} Caduca en {minutes} minutos.",
    "fr": "Connectez-vous à {name} avec ce lien : {link} Il expire dans {minutes} minutes.",
    "de": "Melden Sie sich mit diesem Link bei {name} an: {link} Er läuft in {minutes} "
          "Minuten ab.",
    "pt": "Entre em {name} com este link: {link} Expira em {minutes} minutos.",
    "it": "Accedi a {name} con questo link: {link} Scade tra {minutes} minuti.",
    "nl": "Meld u aan bij {name} met deze link: {link} Deze verloopt over {minutes} minuten.",
}
_LINK_SUBJECT = {
    "en": "Your {name} sign-in link",
    "es": "Tu enlace de acceso a {name}",
    "fr": "Votre lien de connexion {name}",
    "de": "Ihr {name} Anmeldelink",
    "pt": "O seu link de acesso a {name}",
    "it": "Il tuo link di accesso a {name}",
    "nl": "Uw {name} aanmeldlink",
}
CODE_ONLY_CHANNELS = frozenset({"telegram", "flashcall"})
LINK_CHANNEL = "magic_link"
MASK = "•" * 6  # the same whatever the code's length: the mask tells nothing
_PLACEHOLDER = re.compile(r"\{([A-Za-z0-9_]{1,64})\}")


def normalize_locale(value: str | None) -> str | None:
    """`pt-BR`, `pt_br` -> `pt`; None when not supported."""
    if not value:
        return DEFAULT_LOCALE
    base = re.split(r"[-_]", value.strip().lower(), maxsplit=1)[0]
    return base if base in LOCALES else None


def _fill(template: str, values: dict[str, str]) -> str:
    # Plain placeholder substitution (no str.format: a template cannot reach attributes).
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def render(*, channel: str, locale: str, code: str, name: str, minutes: int,
           template: str = "", variables: dict[str, str] | None = None,
           masked: bool = False, email: bool = False) -> tuple[str, str]:
    """(body, subject) of the message carrying `code` (`masked`: with `MASK` instead); for
    `magic_link`, `code` is the link and `email` says whether it goes by email."""
    if channel in CODE_ONLY_CHANNELS:
        return (MASK if masked else code), ""
    spoken = MASK if masked else ", ".join(code) if channel == "voice" else code
    values = {**(variables or {}), "code": spoken, "link": spoken, "name": name,
              "minutes": str(minutes)}
    if template:
        body = _fill(template, values)
    elif channel == LINK_CHANNEL:
        body = _fill(_LINK[locale], values)
    else:
        body = _fill((_VOICE if channel == "voice" else _TEXT)[locale], values)
    subject = ""
    if email:
        subject = _fill((_LINK_SUBJECT if channel == LINK_CHANNEL else _SUBJECT)[locale], values)
    return body, subject
