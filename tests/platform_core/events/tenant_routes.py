"""Events routes under the cross-tenant test: feed lookup by id."""

from django.db import transaction

from platform_core.events.bus import dispatch, emit
from tests.cross_tenant import TenantRoute, register


def _event(tenant) -> str:
    with transaction.atomic():
        event = emit(organization=tenant.org, type="contact.updated", data={"contact_id": "c"})
    dispatch(event.pk)  # the test transaction never commits: fan out by hand
    return event.pk


register(TenantRoute(name="events", list_url="/api/v1/events",
                     detail_url="/api/v1/events/{id}", create=_event, methods=("GET",)))
