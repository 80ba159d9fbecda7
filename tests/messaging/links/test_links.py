"""Short links and click records (the redirect route arrives with the messaging issue)."""

from __future__ import annotations

from datetime import timedelta

from django.db import connection
from django.utils import timezone

from messaging.links import selectors, services
from messaging.links.models import LinkClick, ShortLink
from platform_core.tenancy.context import tenant_context


def test_short_links_get_unique_codes(tenant):
    links = [services.short_link_create(organization=tenant.org,
                                        target_url="https://example.com/a",
                                        message_id="msg_1", campaign_id="cmp_1",
                                        contact_id="cnt_1") for _ in range(20)]
    assert len({link.code for link in links}) == 20
    assert all(link.pk.startswith("lnk_") and len(link.code) >= 8 for link in links)
    assert selectors.link_by_code(links[0].code) == links[0]
    assert selectors.link_by_code("missing") is None


def test_record_click_copies_the_links_ids_without_a_tenant_context(tenant):
    link = services.short_link_create(organization=tenant.org, target_url="https://e.com",
                                      message_id="msg_1", campaign_id="cmp_1",
                                      contact_id="cnt_1")
    # The public redirect has no tenant context: the click takes the link's organization.
    click = services.record_click(link=link, user_agent="UA " * 300, ip="198.51.100.7")
    assert (click.organization_id, click.contact_id, click.message_id, click.campaign_id) == (
        tenant.org.pk, "cnt_1", "msg_1", "cmp_1")
    assert len(click.user_agent) == 400
    earlier = timezone.now() - timedelta(days=3)
    other = services.record_click(link=link, contact_id="cnt_2", clicked_at=earlier)
    assert other.contact_id == "cnt_2"
    assert other.clicked_at == earlier
    assert other.ip is None
    with tenant_context(tenant.org):
        assert LinkClick.objects.filter(link=link).count() == 2


def test_links_are_tenant_scoped(tenant, other_tenant):
    link = services.short_link_create(organization=tenant.org, target_url="https://e.com")
    with tenant_context(other_tenant.org):
        assert not ShortLink.objects.filter(pk=link.pk).exists()


def test_click_indexes_exist(db):
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor,
                                                               LinkClick._meta.db_table)
    by_columns = {tuple(c["columns"]) for c in constraints.values() if c["index"]}
    assert ("organization_id", "link_id", "clicked_at") in by_columns
    assert ("organization_id", "campaign_id", "clicked_at") in by_columns
