"""What the WhatsApp views share: scopes, roles, pagination, object lookups."""

from __future__ import annotations

from django.http import Http404
from rest_framework.response import Response

from platform_core.api.pagination import KeysetCursorPagination
from platform_core.api.serialization import represent

READ, WRITE, SEND = "whatsapp:read", "whatsapp:write", "messages:write"
ADMINS = {"owner", "admin"}
CALLERS = {"owner", "admin", "developer"}
# Viewer-tier callers (the viewer role, public keys) see masked phone numbers.
MASKED_ROLES = {"viewer"}


def paginated(view, queryset, serializer_class, *, context: dict | None = None,
              ordering: tuple[str, ...] = ("-id",)) -> Response:
    paginator = KeysetCursorPagination(ordering=ordering)
    rows = paginator.paginate_queryset(queryset, view.request, view=view)
    return paginator.get_paginated_response(
        represent(serializer_class, rows, many=True, context=context))


def get_or_404(queryset, pk: str):
    obj = queryset.filter(pk=str(pk)[:40]).first()
    if obj is None:
        raise Http404
    return obj


def sent(message) -> dict:
    return {"message_id": message.pk, "status": message.status, "channel": message.channel,
            "to": message.to}
