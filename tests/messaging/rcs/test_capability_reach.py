"""Capability probes (cached) and the segment reach scan, in test mode."""

from __future__ import annotations

import pytest

from contacts.models import Contact
from contacts.segments.models import Segment, SegmentMembership
from messaging.rcs.providers.sandbox import SandboxRcsProvider
from platform_core.tenancy.context import tenant_context

from .conftest import error, ok

pytestmark = pytest.mark.django_db


@pytest.fixture
def probes(monkeypatch):
    """How many numbers the double was asked about (single and bulk)."""
    seen: list[str] = []
    single, bulk = SandboxRcsProvider.capability, SandboxRcsProvider.reachable

    def capability(self, agent, phone):
        seen.append(phone)
        return single(self, agent, phone)

    def reachable(self, agent, phones):
        seen.extend(phones)
        return bulk(self, agent, phones)

    monkeypatch.setattr(SandboxRcsProvider, "capability", capability)
    monkeypatch.setattr(SandboxRcsProvider, "reachable", reachable)
    return seen


def test_capability_is_probed_then_cached(api, agent, probes):
    bot = agent()
    first = ok(api("GET", f"/capability/{bot['id']}/+14155550123"))
    assert (first["rcs_enabled"], first["cached"], first["phone"]) == (True, False,
                                                                       "+14155550123")
    assert "RICHCARD_CAROUSEL" in first["features"]
    second = ok(api("GET", f"/capability/{bot['id']}/%2B14155550123"))
    assert (second["rcs_enabled"], second["cached"]) == (True, True)
    assert probes == ["+14155550123"]


def test_rich_failure_number_is_not_capable(api, agent):
    bot = agent()
    answer = ok(api("GET", f"/capability/{bot['id']}/+15005550011"))
    assert (answer["rcs_enabled"], answer["features"]) == (False, [])


def test_capability_errors(api, agent, other_tenant):
    bot = agent()
    error(api("GET", f"/capability/{bot['id']}/4155550123"), 422, "INVALID_PHONE_NUMBER")
    error(api("GET", f"/capability/{bot['id']}/+1abc"), 422, "INVALID_PHONE_NUMBER")
    error(api("GET", "/capability/rbt_nope/+14155550123"), 404, "NOT_FOUND")
    error(api("GET", f"/capability/{bot['id']}/+14155550123", client=other_tenant.client()),
          404, "NOT_FOUND")


def _segment(tenant, phones: list[str | None]) -> str:
    with tenant_context(tenant.org):
        segment = Segment.objects.create(organization=tenant.org, name="VIP")
        for i, phone in enumerate(phones):
            contact = Contact.objects.create(organization=tenant.org, phone=phone or "",
                                             email=f"c{i}@example.com")
            SegmentMembership.objects.create(organization=tenant.org, segment=segment,
                                             contact=contact)
    return segment.pk


def test_reach_scan_counts_by_status(api, agent, tenant, probes):
    bot = agent()
    ok(api("GET", f"/capability/{bot['id']}/+14155550101"))  # known from the cache
    segment_id = _segment(tenant, ["+14155550101", "+14155550102", "+15005550011", None])
    probes.clear()
    scan = ok(api("POST", "/reach-scan", {"segment_id": segment_id, "bot_id": bot["id"]}))
    assert scan == {
        "segment_id": segment_id, "bot_id": bot["id"], "members": 4, "with_phone": 3,
        "scanned": 3, "sampled": False, "from_cache": 1, "probed": 2,
        "by_status": {"capable": 2, "not_capable": 1, "no_phone": 1},
        "estimated_reach": 2, "reach_rate": round(2 / 3, 4)}
    assert sorted(probes) == ["+14155550102", "+15005550011"]  # one bulk probe, no resend
    again = ok(api("POST", "/reach-scan", {"segment_id": segment_id, "bot_id": bot["id"]}))
    assert (again["from_cache"], again["probed"]) == (3, 0)


def test_reach_scan_errors(api, agent, tenant, other_tenant):
    bot = agent()
    error(api("POST", "/reach-scan", {"segment_id": "seg_nope", "bot_id": bot["id"]}), 422,
          "VALIDATION_ERROR")
    error(api("POST", "/reach-scan", {"bot_id": bot["id"]}), 422, "VALIDATION_ERROR")
    segment_id = _segment(tenant, ["+14155550101"])
    error(api("POST", "/reach-scan", {"segment_id": segment_id, "bot_id": "rbt_nope"}), 404,
          "NOT_FOUND")
    other = _segment(other_tenant, ["+14155550101"])
    error(api("POST", "/reach-scan", {"segment_id": other, "bot_id": bot["id"]}), 422,
          "VALIDATION_ERROR")
