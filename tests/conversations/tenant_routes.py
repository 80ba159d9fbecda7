"""Conversation routes under the cross-tenant test."""

from conversations.models import Conversation
from tests.cross_tenant import TenantRoute, register


def _conversation(tenant) -> str:
    conversation = Conversation.objects.for_organization(tenant.org).create(
        organization=tenant.org, contact_id="cnt_victim", channel="sms")
    return conversation.pk


register(TenantRoute(name="conversations", list_url="/api/v1/conversations",
                     detail_url="/api/v1/conversations/{id}", create=_conversation,
                     methods=("GET",)))
