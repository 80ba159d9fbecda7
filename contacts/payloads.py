"""Plain-data shapes of contacts, shared by event payloads and the API serializers."""

from __future__ import annotations

from typing import Any

from platform_core.events.models import iso_z

from .models import Contact


def contact_data(contact: Contact) -> dict[str, Any]:
    return {
        "id": contact.pk,
        "first_name": contact.first_name,
        "last_name": contact.last_name,
        "phone": contact.phone or None,
        "email": contact.email or None,
        "custom_fields": contact.custom_fields or {},
        "tags": contact.tags or [],
        "created_at": iso_z(contact.created_at),
        "updated_at": iso_z(contact.updated_at) if contact.updated_at else None,
    }
