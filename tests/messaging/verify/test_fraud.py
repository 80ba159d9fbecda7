"""The fraud guard: per-recipient and per-prefix limits, the conversion block, overrides."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from messaging.verify.fraud import bucket_start
from messaging.verify.models import Status, Verification, VerifyPrefixBucket, VerifySettings
from platform_core.tenancy.context import tenant_context

from .conftest import USER, error_code

pytestmark = pytest.mark.django_db


def test_recipient_limit_is_on_by_default(send, tenant):
    for _ in range(5):
        assert send({"to": USER}).status_code == 201
    refused = send({"to": USER})
    assert (refused.status_code, error_code(refused)) == (429, "VERIFY_RECIPIENT_LIMIT")
    assert refused["Retry-After"] == "600"
    assert refused.json()["error"]["details"]["limit"] == 5
    # Another recipient is unaffected; the window passes.
    assert send({"to": "+14155550124"}).status_code == 201
    with time_machine.travel(timezone.now() + timedelta(minutes=11)):
        assert send({"to": USER}).status_code == 201


def test_prefix_limit_counts_the_batch_itself(post, tenant):
    VerifySettings.objects.create(organization=tenant.org, prefix_limit=3)
    response = post("bulk", {"recipients": [f"+1415555{i:04d}" for i in range(5)]
                             + ["+12125550100"]})
    assert response.status_code == 207
    rows = response.json()["data"]["results"]
    assert [r["status"] for r in rows] == ["sent"] * 3 + ["failed"] * 2 + ["sent"]
    assert rows[3]["error"]["code"] == "VERIFY_PREFIX_LIMIT"


def _history(tenant, prefix_number: str, *, sent: int, verified: int, hours_ago: int = 2):
    """Past sends to a prefix (as if they were made `hours_ago`)."""
    at = timezone.now() - timedelta(hours=hours_ago)
    rows = [Verification(organization=tenant.org, to=f"{prefix_number}{i:04d}", channel="sms",
                         status=Status.VERIFIED if i < verified else Status.EXPIRED,
                         destination_prefix=prefix_number[:5], created_at=at,
                         expires_at=at + timedelta(minutes=10),
                         verified_at=at + timedelta(seconds=20) if i < verified else None)
            for i in range(sent)]
    with tenant_context(tenant.org):
        Verification.objects.bulk_create(rows)
    # The guard reads the rollup the sends and checks keep (5-minute buckets).
    VerifyPrefixBucket.objects.create(organization=tenant.org, prefix=prefix_number[:5],
                                      bucket_start=bucket_start(at), sent=sent,
                                      verified=verified)


def test_collapsed_conversion_blocks_the_prefix(send, tenant):
    _history(tenant, "+1415555", sent=40, verified=2)  # 5% conversion
    refused = send({"to": USER})
    assert (refused.status_code, error_code(refused)) == (403, "VERIFY_PREFIX_BLOCKED")
    details = refused.json()["error"]["details"]
    assert (details["prefix"], details["sent"], details["verified"]) == ("+1415", 40, 2)
    # Another prefix still works.
    assert send({"to": "+12125550100"}).status_code == 201


def test_healthy_or_small_prefixes_are_not_blocked(send, tenant):
    _history(tenant, "+1415555", sent=40, verified=30)
    assert send({"to": USER}).status_code == 201
    _history(tenant, "+1212555", sent=10, verified=0)  # below the minimum sample
    assert send({"to": "+12125550100"}).status_code == 201


def test_per_organization_override_turns_the_guard_off(send, tenant):
    _history(tenant, "+1415555", sent=40, verified=0)
    assert error_code(send({"to": USER})) == "VERIFY_PREFIX_BLOCKED"
    VerifySettings.objects.create(organization=tenant.org, fraud_guard_enabled=False)
    for _ in range(7):
        assert send({"to": USER}).status_code == 201


def test_override_of_recipient_limit(send, tenant):
    VerifySettings.objects.create(organization=tenant.org, recipient_limit=1)
    assert send({"to": USER}).status_code == 201
    assert error_code(send({"to": USER})) == "VERIFY_RECIPIENT_LIMIT"


def test_guard_is_per_organization(send, tenant, other_tenant):
    for _ in range(5):
        send({"to": USER})
    assert send({"to": USER}, client=other_tenant.client()).status_code == 201


def test_settings_change_the_defaults(send, settings):
    settings.VERIFY_RECIPIENT_LIMIT = 2
    send({"to": USER})
    send({"to": USER})
    assert error_code(send({"to": USER})) == "VERIFY_RECIPIENT_LIMIT"


def test_sends_and_checks_keep_the_prefix_rollup(send, check, post, tenant):
    first = send({"to": USER}).json()["data"]
    send({"to": "+14155550124"})
    post("bulk", {"recipients": ["+14155550125", "+12125550100"]})
    check(first["verification_id"], first["test_code"])
    buckets = {b.prefix: (b.sent, b.verified) for b in VerifyPrefixBucket.objects.filter(
        organization=tenant.org)}
    assert buckets == {"+1415": (3, 1), "+1212": (1, 0)}


def test_the_guard_reads_the_rollup_not_the_rows(tenant):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from messaging.verify import fraud

    _history(tenant, "+1415555", sent=40, verified=30)
    with CaptureQueriesContext(connection) as queries:
        refused = fraud.check_many(tenant.org, [(USER, "+1415")])
    assert refused == {}
    sqls = [q["sql"] for q in queries.captured_queries]
    assert not [sql for sql in sqls if "destination_prefix" in sql]
    assert len([sql for sql in sqls if "verify_verifyprefixbucket" in sql]) == 1
    assert len(queries) <= 3  # settings, the recipient's rows, the prefix buckets


def test_prefix_window_counts_buckets_and_old_buckets_are_pruned(send, tenant):
    from messaging.verify import fraud

    VerifySettings.objects.create(organization=tenant.org, prefix_limit=2)
    send({"to": USER})
    send({"to": "+14155550124"})
    assert error_code(send({"to": "+14155550125"})) == "VERIFY_PREFIX_LIMIT"
    with time_machine.travel(timezone.now() + timedelta(minutes=66)):
        assert send({"to": "+14155550125"}).status_code == 201
    assert VerifyPrefixBucket.objects.count() == 2
    with time_machine.travel(timezone.now() + timedelta(days=2)):
        assert fraud.prune_buckets() == 2
    assert not VerifyPrefixBucket.objects.exists()
