"""Huddles: a channel's live room on a LiveKit-compatible media server.

The platform never carries media: it keeps who is in the room and signs each joiner an
access token in the media server's format (LiveKit: an HS256 JWT whose issuer is the API
key, subject the participant identity, with a `video` grant for the room), signed with
PyJWT. The client connects to `media_url` with it.

Without TEAM_CHAT_MEDIA_URL, _API_KEY and _API_SECRET: in test mode (a sandbox organization)
the media server is a double, as every outside provider is there: the huddle bookkeeping
runs as in live mode and the token is signed for `wss://media.sandbox.invalid` (key
`sandbox`, a secret derived from SECRET_KEY), a server that does not exist; in live mode
every huddle call answers 503 SERVICE_UNAVAILABLE.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

import jwt
from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from platform_core.errors import APIError
from platform_core.identity.models import User

from . import conf, live
from .models import ChannelMember, Huddle, HuddleParticipant


@dataclass(frozen=True)
class Joined:
    huddle: Huddle
    started: bool
    token: str
    media_url: str


SANDBOX_MEDIA_URL = "wss://media.sandbox.invalid"


def _media(organization) -> tuple[str, str, str]:
    url, key, secret = conf.media()
    if url and key and secret:
        return url, key, secret
    if organization.sandbox:
        derived = hashlib.sha256(f"team-chat-media:{settings.SECRET_KEY}".encode()).hexdigest()
        return SANDBOX_MEDIA_URL, "sandbox", derived
    raise APIError("SERVICE_UNAVAILABLE", "Huddles need a media server: set "
                   "TEAM_CHAT_MEDIA_URL, TEAM_CHAT_MEDIA_API_KEY and "
                   "TEAM_CHAT_MEDIA_API_SECRET (a LiveKit-compatible server).")


def media_token(*, api_key: str, api_secret: str, room: str, user: User) -> str:
    now = int(time.time())
    claims = {
        "iss": api_key,
        "sub": user.pk,
        "name": user.name or user.email,
        "nbf": now,
        "exp": now + conf.media_token_ttl(),
        "jti": f"{user.pk}:{now}",
        "video": {"room": room, "roomJoin": True, "canPublish": True, "canSubscribe": True,
                  "canPublishData": True},
    }
    return jwt.encode(claims, api_secret, algorithm="HS256")


def _leave_all(user_id: str) -> list[Huddle]:
    """Take the user out of every live huddle; answers the huddles that emptied (ended)."""
    ended = []
    now = timezone.now()
    present = list(HuddleParticipant.objects.select_for_update()
                   .filter(user_id=user_id, left_at__isnull=True, huddle__ended_at__isnull=True)
                   .select_related("huddle"))
    for row in present:
        row.left_at = now
        row.save(update_fields=["left_at"])
        huddle = row.huddle
        live.publish([live.channel_group(huddle.channel_id)], {
            "type": "huddle.left", "channel_id": huddle.channel_id, "huddle_id": huddle.pk,
            "user_id": user_id})
        if not HuddleParticipant.objects.filter(huddle=huddle, left_at__isnull=True).exists():
            Huddle.objects.filter(pk=huddle.pk).update(ended_at=now)
            huddle.ended_at = now
            ended.append(huddle)
            live.publish([live.channel_group(huddle.channel_id)], {
                "type": "huddle.ended", "channel_id": huddle.channel_id,
                "huddle_id": huddle.pk})
    return ended


def huddle_join(*, organization, member: ChannelMember) -> Joined:
    url, key, secret = _media(organization)
    channel = member.channel
    for _attempt in range(3):
        try:
            with transaction.atomic():
                huddle = (Huddle.objects.select_for_update()
                          .filter(channel=channel, ended_at__isnull=True).first())
                started = huddle is None
                already_in = (not started and HuddleParticipant.objects.filter(
                    huddle=huddle, user_id=member.user_id, left_at__isnull=True).exists())
                if not already_in:
                    _leave_all(member.user_id)  # one huddle at a time
                if started:
                    huddle = Huddle.objects.create(
                        organization_id=channel.organization_id, channel=channel,
                        room=f"{channel.organization_id}.{channel.pk}",
                        started_by_user_id=member.user_id)
                    huddle.room = f"{huddle.room}.{huddle.pk}"
                    huddle.save(update_fields=["room"])
                if not already_in:
                    HuddleParticipant.objects.create(
                        organization_id=channel.organization_id, huddle=huddle,
                        user_id=member.user_id)
                    live.publish([live.channel_group(channel.pk)], {
                        "type": "huddle.started" if started else "huddle.joined",
                        "channel_id": channel.pk, "huddle_id": huddle.pk,
                        "user_id": member.user_id})
            break
        except IntegrityError:  # another member started it at the same moment: join it
            continue
    else:
        raise APIError("CONFLICT", "The huddle changed while joining; retry.")
    token = media_token(api_key=key, api_secret=secret, room=huddle.room, user=member.user)
    return Joined(huddle=huddle, started=started, token=token, media_url=url)


def huddle_leave(*, organization, user_id: str, huddle_id: str | None = None
                 ) -> tuple[Huddle, bool]:
    """Leave the live huddle the user is in; it ends when its room empties."""
    _media(organization)
    with transaction.atomic():
        present = HuddleParticipant.objects.filter(
            user_id=user_id, left_at__isnull=True, huddle__ended_at__isnull=True)
        if huddle_id:
            present = present.filter(huddle_id=huddle_id)
        row = present.select_related("huddle").first()
        if row is None:
            raise APIError("NOT_FOUND", "You are not in a live huddle.")
        huddle = row.huddle
        ended = [h.pk for h in _leave_all(user_id)]
    return huddle, huddle.pk in ended
