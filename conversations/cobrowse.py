"""Co-browse (Document 3, 2.5 and 4.7): a visitor's widget asks, an agent joins, either ends.

The token handed to each side is a signed, short-lived credential (django.core.signing,
`TOKEN_TTL` seconds) bound to the organization, the conversation and the session, with the
role and the effective control. The platform's own WebSocket relay (consumers.py, at
`ws_url`) accepts only such tokens: it carries the visitor's DOM events to the agent and
the agent's control events back only when control was granted, i.e. the agent asked for
it AND the visitor consented.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from django.conf import settings
from django.core import signing
from django.db import transaction
from django.utils import timezone

from platform_core.errors import APIError, validation_error
from platform_core.identity.principal import Principal

from .activity import record
from .models import Conversation
from .side_models import CobrowseSession, CobrowseStatus

logger = logging.getLogger("conversations.cobrowse")
TOKEN_TTL = 1800
_SALT = "conversations.cobrowse.v1"
CONVERSATION_ID = re.compile(r"^cnv_[0-9A-HJKMNP-TV-Z]{26}$")
# The roles that join and end a session (Document 3, 4.7), on top of conversations:write.
AGENT_ROLES = frozenset({"owner", "admin", "developer"})


def check_available() -> None:
    if not getattr(settings, "COBROWSE_ENABLED", True) or not getattr(
            settings, "CHANNEL_LAYERS", None):
        raise APIError("COBROWSE_UNAVAILABLE")


def conversation_in_account(principal: Principal, conversation_id: str) -> Conversation:
    if not CONVERSATION_ID.match(conversation_id or ""):
        raise validation_error("conversationId", "Not a conversation id (cnv_...).")
    conversation = (Conversation.objects.for_organization(principal.organization)
                    .select_related("organization").filter(pk=conversation_id).first())
    if conversation is None:
        raise APIError("NOT_FOUND")
    return conversation


def latest_session(conversation: Conversation) -> CobrowseSession | None:
    return (CobrowseSession.objects.for_organization(conversation.organization)
            .filter(conversation=conversation).order_by("-id").first())


def room_name(conversation: Conversation, session_id: str) -> str:
    return f"cobrowse:{conversation.organization_id}:{conversation.pk}:{session_id}"


def group_name(session_id: str) -> str:
    return f"cobrowse.{session_id}"


def make_token(session: CobrowseSession, *, role: str, control: bool,
               user_id: str | None) -> str:
    payload = {"o": str(session.organization_id), "c": session.conversation_id,
               "s": session.pk, "r": role, "ctl": bool(control), "u": user_id}
    return signing.dumps(payload, salt=_SALT, compress=True)


def read_token(token: str, *, session_id: str) -> dict[str, Any] | None:
    """The token's claims when genuine, unexpired and for `session_id`; else None."""
    try:
        claims = signing.loads(token or "", salt=_SALT, max_age=TOKEN_TTL)
    except (signing.BadSignature, ValueError, TypeError):
        return None
    if not isinstance(claims, dict) or claims.get("s") != session_id:
        return None
    return claims


def ws_url(request, session_id: str) -> str:
    scheme = "wss" if request.is_secure() else "ws"
    return f"{scheme}://{request.get_host()}/ws/cobrowse/{session_id}/"


def _grant(request, session: CobrowseSession, *, role: str, control: bool,
           user_id: str | None) -> dict[str, Any]:
    return {"token": make_token(session, role=role, control=control, user_id=user_id),
            "ws_url": ws_url(request, session.pk), "room_name": session.room_name,
            "session_id": session.pk, "control": control, "role": role,
            "expires_in": TOKEN_TTL}


@transaction.atomic
def widget_start(*, principal: Principal, conversation_id: str, visitor_id: str | None = None,
                 control: bool, request) -> tuple[CobrowseSession, dict[str, Any], bool]:
    """The visitor's request: a `requested` session (or the live one, consent updated)."""
    check_available()
    conversation = conversation_in_account(principal, conversation_id)
    Conversation.objects.select_for_update(of=("self",)).filter(pk=conversation.pk).first()
    session = latest_session(conversation)
    created = session is None or session.status == CobrowseStatus.ENDED
    if created:
        session = CobrowseSession(organization=principal.organization,
                                  conversation=conversation, visitor_id=visitor_id,
                                  control=control, requested_at=timezone.now())
        session.room_name = room_name(conversation, session.pk)
        session.save(force_insert=True)
        record(conversation, "cobrowse_requested", principal=principal,
               event="cobrowse.requested", data={"session_id": session.pk})
    else:
        session.control, session.visitor_id = control, visitor_id or session.visitor_id
        session.save(update_fields=["control", "visitor_id"])
    return session, _grant(request, session, role="visitor", control=session.control,
                           user_id=None), created


@transaction.atomic
def agent_join(*, principal: Principal, conversation_id: str, control: bool,
               request) -> tuple[CobrowseSession, dict[str, Any]]:
    conversation = conversation_in_account(principal, conversation_id)
    check_available()
    session = (CobrowseSession.objects.for_organization(principal.organization)
               .select_for_update().filter(conversation=conversation)
               .exclude(status=CobrowseStatus.ENDED).order_by("-id").first())
    if session is None:
        raise APIError("COBROWSE_NOT_ACTIVE")
    first = session.status == CobrowseStatus.REQUESTED
    session.status = CobrowseStatus.ACTIVE
    session.agent_user_id = principal.user_id or principal.actor_id
    if session.started_at is None:
        session.started_at = timezone.now()  # a second join keeps the first start
    session.save(update_fields=["status", "agent_user_id", "started_at"])
    effective = bool(control and session.control)
    if first:
        record(conversation, "cobrowse_started", principal=principal,
               event="cobrowse.started", data={"session_id": session.pk, "control": effective})
    return session, _grant(request, session, role="agent", control=effective,
                           user_id=session.agent_user_id)


@transaction.atomic
def session_end(*, principal: Principal, conversation_id: str) -> CobrowseSession:
    """Ended by the agent; ending an ended session changes nothing."""
    conversation = conversation_in_account(principal, conversation_id)
    session = (CobrowseSession.objects.for_organization(principal.organization)
               .select_for_update().filter(conversation=conversation).order_by("-id").first())
    if session is None:
        raise APIError("NOT_FOUND", "This conversation has no co-browse session.")
    if session.status == CobrowseStatus.ENDED:
        return session
    session.status = CobrowseStatus.ENDED
    session.ended_at = timezone.now()
    session.ended_by = "agent"
    session.save(update_fields=["status", "ended_at", "ended_by"])
    record(conversation, "cobrowse_ended", principal=principal, event="cobrowse.ended",
           data={"session_id": session.pk, "ended_by": "agent"})
    transaction.on_commit(lambda: _close_room(session.pk))
    return session


def _close_room(session_id: str) -> None:
    from asgiref.sync import async_to_sync
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    if layer is not None:
        try:
            async_to_sync(layer.group_send)(group_name(session_id), {"type": "session.ended"})
        except Exception:  # noqa: BLE001 - the relay is best effort; the row is the truth
            logger.warning("cobrowse: could not close the room of %s", session_id)


def session_data(session: CobrowseSession | None) -> dict[str, Any] | None:
    if session is None:
        return None
    return {"session_id": session.pk, "conversation_id": session.conversation_id,
            "status": session.status, "room_name": session.room_name,
            "visitor_id": session.visitor_id, "control": session.control,
            "requested_at": session.requested_at, "started_at": session.started_at,
            "ended_at": session.ended_at, "ended_by": session.ended_by,
            "agent_user_id": session.agent_user_id}
