"""The analytics screen through the Django test client: each SVG chart's bars carry the
numbers of the insights selectors, the date range, the data tables, the scope."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from agents.usage.models import AIBudget, AIUsage
from messaging.models import Message
from messaging.verify.models import Verification
from tests.conftest import make_tenant
from tests.platform_core.accounts.conftest import add_member

from .conftest import client_as

pytestmark = pytest.mark.django_db

RECT = re.compile(r'<rect [^>]*fill="[^"]+"\s+data-series="([^"]+)" data-day="([^"]+)" '
                  r'data-value="([^"]+)"')


def bars(page: str, chart: str) -> dict[tuple[str, str], float]:
    """`{(series, day): value}` of one chart's SVG bars."""
    section = page[page.index(f'data-chart="{chart}"'):]
    section = section[:section.index("</svg>")]
    return {(s, d): float(v) for s, d, v in RECT.findall(section)}


def day(days_ago: int) -> str:
    return (timezone.now() - timedelta(days=days_ago)).date().isoformat()


def seed(org) -> None:
    """Known figures: messages on three days, verifications, LLM usage and a budget."""
    now = timezone.now()

    def message(days_ago, channel, status, direction="outbound"):
        return Message(organization=org, channel=channel, status=status, direction=direction,
                       to="+14155550123", created_at=now - timedelta(days=days_ago, seconds=1))

    rows = ([message(0, "sms", "delivered")] * 3 + [message(0, "sms", "failed")]
            + [message(0, "whatsapp", "delivered")] * 2 + [message(2, "sms", "undelivered")]
            + [message(2, "email", "delivered")] + [message(5, "sms", "received", "inbound")]
            + [message(9, "sms", "delivered")])  # outside the 7-day range
    Message.objects.for_organization(org).bulk_create(
        [Message(**{f.attname: getattr(m, f.attname) for f in Message._meta.concrete_fields
                    if f.attname != "id"}) for m in rows])
    for days_ago, status in ((1, "verified"), (1, "verified"), (1, "expired"), (3, "failed")):
        Verification.objects.for_organization(org).create(
            organization=org, to="+14155550123", channel="sms", status=status,
            created_at=now - timedelta(days=days_ago), expires_at=now)
    for days_ago, cents in ((0, 250), (1, 700), (1, 50)):
        AIUsage.objects.for_organization(org).create(
            organization=org, feature="chat.completions", engine="local", model="m",
            total_tokens=100, cost_cents=cents, created_at=now - timedelta(days=days_ago))
    AIBudget.objects.for_organization(org).create(organization=org, daily_cap_cents=600,
                                                  monthly_cap_cents=10_000)


def test_charts_carry_the_numbers_of_the_selectors(django_assert_max_num_queries):
    tenant = make_tenant()
    seed(tenant.org)
    other = make_tenant()
    seed(other.org)  # another organization's figures never show
    client = client_as(tenant.owner, tenant.org)
    with django_assert_max_num_queries(25):
        response = client.get("/dashboard/analytics/")
    assert response.status_code == 200
    page = response.content.decode()

    assert bars(page, "messages-by-channel") == {
        ("sms", day(0)): 4, ("whatsapp", day(0)): 2, ("email", day(2)): 1,
        ("sms", day(2)): 1, ("sms", day(5)): 1}
    by_status = bars(page, "messages-by-status")
    assert by_status[("delivered", day(0))] == 5
    assert by_status[("failed", day(0))] == 1
    assert by_status[("undelivered", day(2))] == 1
    assert by_status[("received", day(5))] == 1
    # Delivery rate: delivered over delivered + failed, outbound only.
    assert bars(page, "delivery-rate") == {("delivery rate", day(0)): pytest.approx(83.3),
                                           ("delivery rate", day(2)): 50.0}
    assert "75% over the period (6 of 8)" in page
    assert bars(page, "verify-conversion") == {("verified", day(1)): 2,
                                               ("not verified", day(1)): 1,
                                               ("not verified", day(3)): 1}
    assert "50% converted (2 of 4)" in page
    assert bars(page, "llm-spend") == {("spend", day(0)): 250, ("spend", day(1)): 750}
    assert 'data-reference="600"' in page  # the daily cap line
    # Every chart has a title and its numbers in a table.
    assert page.count("<details class=\"chart-data\">") == 5
    assert page.count("<title id=") == 5
    assert "<tr><th scope=\"row\">" + day(1) + "</th><td>7.50</td></tr>" in page


def test_the_thirty_day_range_and_a_bad_range(tenant_factory):
    tenant = tenant_factory()
    seed(tenant.org)
    client = client_as(tenant.owner, tenant.org)
    page = client.get("/dashboard/analytics/?range=30").content.decode()
    assert bars(page, "messages-by-channel")[("sms", day(9))] == 1
    assert page.count('data-day="') > 0
    assert '<option value="30" selected>' in page
    page = client.get("/dashboard/analytics/?range=9999").content.decode()
    assert ("sms", day(9)) not in bars(page, "messages-by-channel")
    assert '<option value="7" selected>' in page


def test_an_empty_organization_says_so_and_a_role_without_insights_is_refused(tenant_factory):
    tenant = tenant_factory()
    viewer = client_as(add_member(tenant, "viewer"), tenant.org)
    page = viewer.get("/dashboard/analytics/").content.decode()
    assert page.count("No data in this period") == 5
    assert "no monthly cap is set" in page
    agent = client_as(add_member(tenant, "agent"), tenant.org)
    response = agent.get("/dashboard/analytics/")
    assert response.status_code == 403
    assert b"insights:read" in response.content
