"""What the WhatsApp services share: finding the connection a request acts on."""

from __future__ import annotations

from django.http import Http404

from platform_core.errors import APIError

from ..models import Connection


def connection_get(organization, phone_number_id: str) -> Connection:
    connection = (Connection.objects.for_organization(organization)
                  .filter(phone_number_id=str(phone_number_id)[:64]).first())
    if connection is None:
        raise Http404
    return connection


def default_connection(organization, phone_number_id: str | None = None) -> Connection:
    """The connection named by `phone_number_id`, else the default one (else any)."""
    rows = Connection.objects.for_organization(organization)
    if phone_number_id:
        connection = rows.filter(phone_number_id=str(phone_number_id)[:64]).first()
        if connection is None:
            from platform_core.errors import validation_error

            raise validation_error("phone_number_id", "No connected number has this id.")
        return connection
    connection = rows.order_by("-is_default", "created_at").first()
    if connection is None:
        raise APIError("WHATSAPP_NOT_CONNECTED")
    return connection
