"""Saved segments: CRUD, materialization at create, refresh by the beat job and on a
change of filters, member pages with a constant number of queries, scopes."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from config.beat import BEAT_SCHEDULE
from contacts.models import Contact
from contacts.segments import tasks
from contacts.segments.models import Segment, SegmentMembership
from platform_core.audit.models import AuditLogEntry
from platform_core.tenancy.context import tenant_context

from .helpers import (
    SEGMENTS,
    api_key,
    contact,
    create_segment,
    member_ids,
    rule,
    track,
    tree,
)

VIP = tree(rule("tags", "eq", "vip"))


def test_create_materializes_membership_and_answers_201(tenant):
    a = contact(tenant, first_name="A", tags=["vip"])
    b = contact(tenant, first_name="B", tags=["vip", "x"])
    contact(tenant, first_name="C", tags=["x"])
    response = tenant.client().post(
        SEGMENTS, {"name": "VIPs", "description": "Our best", "filters": VIP}, format="json")
    assert response.status_code == 201, response.content
    data = response.json()["data"]
    assert data["id"].startswith("seg_")
    assert data | {"refreshed_at": None, "created_at": None, "updated_at": None} == {
        "id": data["id"], "name": "VIPs", "description": "Our best", "kind": "filter",
        "filters": VIP, "source": {}, "auto_refresh": True, "member_count": 2,
        "refreshed_at": None, "created_at": None, "updated_at": None,
    }
    assert data["refreshed_at"]
    assert member_ids(tenant, data["id"]) == {a.pk, b.pk}
    with tenant_context(tenant.org):
        assert SegmentMembership.objects.filter(segment_id=data["id"]).count() == 2
        assert AuditLogEntry.objects.filter(action="segment.created",
                                            target_id=data["id"]).exists()


def test_get_list_patch_delete(tenant):
    contact(tenant, tags=["vip"])
    seg = create_segment(tenant, VIP, name="VIPs")
    client = tenant.client()

    got = client.get(f"{SEGMENTS}/{seg['id']}")
    assert got.status_code == 200
    assert got.json()["data"]["name"] == "VIPs"
    listed = client.get(SEGMENTS)
    assert [row["id"] for row in listed.json()["data"]] == [seg["id"]]

    renamed = client.patch(f"{SEGMENTS}/{seg['id']}", {"name": "Very important",
                                                        "description": None}, format="json")
    assert renamed.status_code == 200, renamed.content
    assert renamed.json()["data"]["name"] == "Very important"
    # a rename does not recompute the membership
    assert renamed.json()["data"]["refreshed_at"] == seg["refreshed_at"]

    deleted = client.delete(f"{SEGMENTS}/{seg['id']}")
    assert deleted.status_code == 204
    assert client.get(f"{SEGMENTS}/{seg['id']}").status_code == 404
    with tenant_context(tenant.org):
        assert not SegmentMembership.objects.filter(segment_id=seg["id"]).exists()
        assert AuditLogEntry.objects.filter(action="segment.deleted").exists()


def test_patch_of_filters_rematerializes_at_once(tenant):
    vip = contact(tenant, tags=["vip"])
    gold = contact(tenant, tags=["gold"])
    seg = create_segment(tenant, VIP)
    response = tenant.client().patch(f"{SEGMENTS}/{seg['id']}",
                                     {"filters": tree(rule("tags", "eq", "gold"))},
                                     format="json")
    assert response.status_code == 200, response.content
    assert response.json()["data"]["member_count"] == 1
    assert member_ids(tenant, seg["id"]) == {gold.pk}
    assert vip.pk not in member_ids(tenant, seg["id"])


def test_patch_with_bad_filters_changes_nothing(tenant):
    contact(tenant, tags=["vip"])
    seg = create_segment(tenant, VIP)
    response = tenant.client().patch(f"{SEGMENTS}/{seg['id']}",
                                     {"name": "New", "filters": tree(rule("tags", "gt", 1))},
                                     format="json")
    assert response.status_code == 422
    assert response.json()["error"]["details"]["issues"][0]["field"] == "filters.rules.0.operator"
    unchanged = tenant.client().get(f"{SEGMENTS}/{seg['id']}").json()["data"]
    assert unchanged["name"] == "Segment"
    assert unchanged["filters"] == VIP


def test_create_validates_name(tenant):
    response = tenant.client().post(SEGMENTS, {"name": "", "filters": VIP}, format="json")
    assert response.status_code == 422
    assert response.json()["error"]["details"]["issues"][0]["field"] == "name"


def test_beat_job_refreshes_stale_segments(tenant):
    keep = contact(tenant, tags=["vip"])
    leaver = contact(tenant, tags=["vip"])
    seg = create_segment(tenant, VIP)
    with tenant_context(tenant.org):
        added_at = SegmentMembership.objects.get(segment_id=seg["id"], contact=keep).added_at
        joiner = contact(tenant, tags=["vip"])
        Contact.objects.filter(pk=leaver.pk).update(tags=["former"])

    # Fresh segments are left alone.
    assert tasks.refresh_stale() == 0
    assert member_ids(tenant, seg["id"]) == {keep.pk, leaver.pk}

    with time_machine.travel(timezone.now() + timedelta(minutes=16)):
        assert tasks.refresh_stale() == 1
    data = tenant.client().get(f"{SEGMENTS}/{seg['id']}").json()["data"]
    assert data["member_count"] == 2
    assert data["refreshed_at"] > seg["refreshed_at"]
    assert member_ids(tenant, seg["id"]) == {keep.pk, joiner.pk}
    with tenant_context(tenant.org):
        # a contact that stayed keeps the moment it joined
        assert SegmentMembership.objects.get(segment_id=seg["id"], contact=keep).added_at == added_at


def test_relative_windows_roll_forward_on_refresh(tenant):
    buyer = contact(tenant)
    track(tenant, buyer, "purchase", days_ago=5)
    seg = create_segment(tenant, tree(rule("event.purchase.count", "exists", window_days=7)))
    assert seg["member_count"] == 1
    with time_machine.travel(timezone.now() + timedelta(days=3)):
        tasks.refresh_stale()
    assert tenant.client().get(f"{SEGMENTS}/{seg['id']}").json()["data"]["member_count"] == 0


def test_refresh_is_on_the_beat_schedule():
    entry = BEAT_SCHEDULE["segments-refresh-stale"]
    assert entry["task"] == tasks.refresh_stale.name


def test_members_list_uses_a_constant_number_of_queries(tenant):
    def page_queries(count: int) -> int:
        Contact.objects.for_organization(tenant.org).bulk_create([
            Contact(organization=tenant.org, first_name=f"P{i}", tags=[f"batch{count}"])
            for i in range(count)
        ])
        seg = create_segment(tenant, tree(rule("tags", "eq", f"batch{count}")))
        client = tenant.client()
        with CaptureQueriesContext(connection) as captured:
            response = client.get(f"{SEGMENTS}/{seg['id']}/members?limit=50")
        assert response.status_code == 200
        assert len(response.json()["data"]) == min(count, 50)
        return len(captured.captured_queries)

    # one page of 50 from a segment of 60 or of 200: the same queries (the segment, the
    # page, the capped total)
    assert page_queries(60) == page_queries(200) <= 4


def test_members_pages_with_a_cursor(tenant):
    ids = {contact(tenant, first_name=f"M{i}", tags=["m"]).pk for i in range(7)}
    seg = create_segment(tenant, tree(rule("tags", "eq", "m")))
    client = tenant.client()
    first = client.get(f"{SEGMENTS}/{seg['id']}/members?limit=3").json()
    assert first["meta"]["pagination"]["has_more"] is True
    seen = [row["id"] for row in first["data"]]
    assert set(first["data"][0]) >= {"id", "first_name", "phone", "email", "tags", "added_at"}
    cursor = first["meta"]["pagination"]["cursor"]
    while cursor:
        page = client.get(f"{SEGMENTS}/{seg['id']}/members?limit=3&cursor={cursor}").json()
        seen += [row["id"] for row in page["data"]]
        cursor = page["meta"]["pagination"]["cursor"]
    assert len(seen) == 7
    assert set(seen) == ids
    assert seen == sorted(seen, reverse=True)


def test_segment_list_uses_a_constant_number_of_queries(tenant):
    client = tenant.client()

    def list_queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(f"{SEGMENTS}?limit=50").status_code == 200
        return len(captured.captured_queries)

    create_segment(tenant, VIP)
    few = list_queries()
    for _ in range(6):
        create_segment(tenant, VIP)
    assert list_queries() == few


def test_read_scope_reads_and_write_scope_writes(tenant):
    seg = create_segment(tenant, VIP)
    reader = tenant.client(api_key(tenant, ["contacts:read"]))
    assert reader.get(SEGMENTS).status_code == 200
    assert reader.get(f"{SEGMENTS}/{seg['id']}/members").status_code == 200
    for response in (
        reader.post(SEGMENTS, {"name": "x", "filters": VIP}, format="json"),
        reader.patch(f"{SEGMENTS}/{seg['id']}", {"name": "x"}, format="json"),
        reader.delete(f"{SEGMENTS}/{seg['id']}"),
    ):
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "INSUFFICIENT_PERMISSIONS"
    outsider = tenant.client(api_key(tenant, ["files:read"]))
    assert outsider.get(SEGMENTS).status_code == 403
    writer = tenant.client(api_key(tenant, ["contacts:write"]))
    assert writer.post(SEGMENTS, {"name": "x", "filters": VIP}, format="json").status_code == 201


@pytest.mark.parametrize("path", ["", "/members", "/export.csv"])
def test_unknown_segment_is_404(tenant, path):
    response = tenant.client().get(f"{SEGMENTS}/seg_UNKNOWN{path}")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"


def test_deleted_contacts_leave_the_membership(tenant):
    gone = contact(tenant, tags=["vip"])
    seg = create_segment(tenant, VIP)
    with tenant_context(tenant.org):
        Contact.objects.filter(pk=gone.pk).delete()
        assert not SegmentMembership.objects.filter(segment_id=seg["id"]).exists()
        assert Segment.objects.get(pk=seg["id"]).member_count == 1  # until the next refresh
