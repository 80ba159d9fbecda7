"""Team-chat routes under the cross-tenant test: another organization's credentials get 404
for a channel (and its sub-routes) and a DM thread of this one."""

from platform_core.identity.principal import Principal
from platform_core.tenancy.context import tenant_context
from tests.cross_tenant import TenantRoute, register


def _channel(tenant) -> str:
    from conversations.team_chat import services

    principal = Principal(kind="session", organization=tenant.org, role="owner",
                          user_id=tenant.owner.pk)
    with tenant_context(tenant.org):
        channel = services.channel_create(principal=principal, user_id=tenant.owner.pk,
                                          name="victims")
        member = services.membership(channel, tenant.owner.pk)
        services.message_post(member=member, body="secret", mentions=[], attachments=[])
    return channel.pk


register(TenantRoute(
    name="team-chat-channels", list_url="/api/v1/team-chat/channels",
    detail_url="/api/v1/team-chat/channels/{id}", create=_channel,
    patch_body={"name": "Hacked"},
    sub_urls=("/api/v1/team-chat/channels/{id}/messages",
              "/api/v1/team-chat/channels/{id}/members"),
))


def _dm_thread(tenant) -> str:
    from conversations.team_chat import dms
    from tests.team_chat.conftest import add_person

    peer = add_person(tenant, "peer")
    principal = Principal(kind="session", organization=tenant.org, role="owner",
                          user_id=tenant.owner.pk)
    with tenant_context(tenant.org):
        msg = dms.dm_send(principal=principal, sender_id=tenant.owner.pk, user_id=peer.id,
                          body="secret")
    return msg.dm_thread_id


register(TenantRoute(
    name="team-chat-dms", list_url="/api/v1/team-chat/dms",
    detail_url="/api/v1/team-chat/dms/{id}/messages", create=_dm_thread, methods=("GET",),
))
