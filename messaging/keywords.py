"""STOP / START / HELP keywords of inbound messages (0-conventions.md section 6; contract).

A keyword is the whole message body, trimmed, case- and accent-insensitive, trailing
punctuation ignored ("Stop.", " stop " and "ARRÊT" count; "please stop texting me" does
not), as carriers apply them.

- Opt-out (`STOP`, `STOPALL`, `UNSUBSCRIBE`, `END`, `QUIT`, `CANCEL`, `REVOKE`, `OPTOUT`
  and the common localized ones: `ARRET`, `BAJA`, `PARAR`, `ALTO`, `STOPP`, `FERMATA`,
  `DETENER`, `CANCELAR`, `SAIR`, `PARE`...) records an `OptOut` of the end user (`sender`)
  for the business address they wrote to (`recipient`): scoped to that address's
  messaging service when it belongs to one (and the service handles opt-outs), else to
  the address itself; `STOPALL` covers every sender of the organization. Later sends
  answer 422 `RECIPIENT_OPTED_OUT`. Emits `message.opt_out`.
- Opt-in (`START`, `UNSTOP`, `YES`, `SUBSCRIBE` and localized `INICIO`, `ALTA`,
  `DEMARRER`, `ANMELDEN`...) removes the matching opt-outs. Emits `message.opt_in`.
- Help (`HELP`, `INFO`, `AIDE`, `AYUDA`, `HILFE`, `AIUTO`, `AJUDA`) changes nothing.

`handle_keywords` returns the kind (`"opt_out"`, `"opt_in"`, `"help"`) or None;
`reply_text(kind)` is the standard auto-reply a provider webhook may answer with.
A messaging service with `opt_out_handling = false` leaves keywords to the customer:
nothing is recorded and None is returned.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from django.db import transaction

from platform_core.events.bus import emit

from .models import MessagingService, OptOut

OPT_OUT = "opt_out"
OPT_IN = "opt_in"
HELP = "help"

OPT_OUT_KEYWORDS = frozenset({
    "STOP", "STOPALL", "UNSUBSCRIBE", "END", "QUIT", "CANCEL", "REVOKE", "OPTOUT", "OPT OUT",
    "STOP ALL",
    # Localized (French, Spanish, Portuguese, German, Italian, Dutch...).
    "ARRET", "ARRETER", "BAJA", "PARAR", "ALTO", "DETENER", "CANCELAR", "STOPP", "FERMATA",
    "BASTA", "SAIR", "PARE", "ABMELDEN", "AFMELDEN", "DESINSCRIRE", "DESABONNER",
})
ALL_SENDERS_KEYWORDS = frozenset({"STOPALL", "STOP ALL"})
OPT_IN_KEYWORDS = frozenset({
    "START", "UNSTOP", "YES", "SUBSCRIBE",
    "INICIO", "ALTA", "COMENZAR", "SI", "DEMARRER", "ANMELDEN", "STARTEN", "INIZIO",
    "ACEITAR", "OUI",
})
HELP_KEYWORDS = frozenset({"HELP", "INFO", "AIDE", "AYUDA", "HILFE", "AIUTO", "AJUDA", "HULP"})

REPLIES = {
    OPT_OUT: "You have successfully been unsubscribed. You will not receive any more messages "
             "from this number. Reply START to resubscribe.",
    OPT_IN: "You have successfully been re-subscribed to messages from this number. "
            "Reply HELP for help. Reply STOP to unsubscribe.",
    HELP: "Reply STOP to unsubscribe. Msg&Data rates may apply.",
}

_UNSET: Any = object()


def _canonical(body: str) -> str:
    text = unicodedata.normalize("NFKD", body or "")
    text = "".join(c for c in text if not unicodedata.combining(c))
    text = text.strip().strip(".!?,;:¡¿'\"").strip().upper()
    return " ".join(text.split())


def keyword_kind(body: str) -> str | None:
    word = _canonical(body)
    if len(word) > 20:
        return None
    if word in OPT_OUT_KEYWORDS:
        return OPT_OUT
    if word in OPT_IN_KEYWORDS:
        return OPT_IN
    if word in HELP_KEYWORDS:
        return HELP
    return None


def reply_text(kind: str | None) -> str | None:
    return REPLIES.get(kind) if kind else None


def _event_data(*, organization, channel: str, sender: str, recipient: str, keyword: str,
                service: MessagingService | None, scope: str) -> dict[str, Any]:
    from django.utils import timezone

    from platform_core.events.models import iso_z

    now = iso_z(timezone.now())
    return {
        "channel": channel,
        "from": sender,
        "to": recipient,
        "keyword": keyword,
        "scope": scope,
        "messaging_service_id": service.pk if service else None,
        "normalized": {
            "channel": channel, "from": sender, "to": recipient, "text": keyword,
            "media": [], "contact_id": None, "conversation_id": None, "received_at": now,
        },
    }


def handle_keywords(
    *,
    organization,
    channel: str,
    sender: str,
    recipient: str,
    body: str,
    service: MessagingService | None = _UNSET,
) -> str | None:
    """Apply an inbound keyword from `sender` (the end user) to `recipient` (our address).

    `service` may be passed when the caller already looked it up (None: no service).
    """
    kind = keyword_kind(body)
    if kind is None:
        return None
    if service is _UNSET:
        from .services import service_for_address

        service = service_for_address(organization, recipient)
    if service is not None and not service.opt_out_handling:
        return None
    if kind == HELP:
        return kind
    word = _canonical(body)
    all_senders = kind == OPT_OUT and word in ALL_SENDERS_KEYWORDS
    rows = OptOut.objects.for_organization(organization)
    if all_senders:
        scope = "all"
    elif service is not None:
        scope = "messaging_service"
    else:
        scope = "sender"
    with transaction.atomic():
        if kind == OPT_OUT:
            if all_senders:
                row = OptOut(organization=organization, messaging_service=None,
                             sender=OptOut.ALL_SENDERS, recipient=sender, channel=channel,
                             keyword=word)
            else:
                row = OptOut(organization=organization, messaging_service=service,
                             sender=recipient, recipient=sender, channel=channel, keyword=word)
            # Repeated STOPs keep the first row (the partial unique constraints).
            OptOut.objects.bulk_create([row], ignore_conflicts=True)
            event_type = "message.opt_out"
        else:
            # START lifts every opt-out of this end user that covers this address.
            from django.db.models import Q

            scope_q = Q(sender=OptOut.ALL_SENDERS) | Q(sender=recipient)
            if service is not None:
                scope_q |= Q(messaging_service=service)
            rows.filter(recipient=sender).filter(scope_q).delete()
            event_type = "message.opt_in"
        emit(organization=organization, type=event_type,
             data=_event_data(organization=organization, channel=channel, sender=sender,
                              recipient=recipient, keyword=word, service=service, scope=scope))
    return kind
