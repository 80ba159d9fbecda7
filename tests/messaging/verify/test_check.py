"""POST /verify/check, POST /verify/{id}/cancel, expiry (time-machine) and the sweep."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from messaging.verify import tasks
from messaging.verify.models import Verification
from platform_core.tenancy.context import tenant_context

from .conftest import USER, error_code, verify_events, wrong

pytestmark = pytest.mark.django_db


def test_right_code_verifies_once(send, check, tenant):
    data = send({"to": USER}).json()["data"]
    response = check(data["verification_id"], data["test_code"])
    assert response.status_code == 200, response.content
    body = response.json()["data"]
    assert (body["valid"], body["status"], body["attempts"]) == (True, "verified", 1)
    assert body["verified_at"] is not None
    again = check(data["verification_id"], data["test_code"])
    assert (again.status_code, error_code(again)) == (409, "VERIFICATION_ALREADY_VERIFIED")
    assert [e.type for e in verify_events(tenant.org)] == [
        "verification.pending", "verification.sent", "verification.verified"]


def test_wrong_codes_use_the_attempts_then_fail(send, check, tenant):
    data = send({"to": USER, "max_attempts": 2}).json()["data"]
    bad = wrong(data["test_code"])
    first = check(data["verification_id"], bad).json()["data"]
    assert (first["valid"], first["status"], first["attempts_remaining"]) == (False, "sent", 1)
    last = check(data["verification_id"], bad).json()["data"]
    assert (last["valid"], last["status"], last["attempts_remaining"]) == (False, "failed", 0)
    # Even the right code is refused now.
    refused = check(data["verification_id"], data["test_code"])
    assert (refused.status_code, error_code(refused)) == (409, "VERIFICATION_MAX_ATTEMPTS")
    assert verify_events(tenant.org)[-1].type == "verification.failed"


def test_check_by_recipient_takes_the_latest(send, post):
    send({"to": USER})
    latest = send({"to": USER}).json()["data"]
    response = post("check", {"to": "+1 (415) 555-0123", "code": latest["test_code"]})
    assert response.json()["data"]["verification_id"] == latest["verification_id"]
    assert response.json()["data"]["valid"] is True


@pytest.mark.parametrize("body", [{"verification_id": "ver_x", "code": "12ab56"},
                                  {"verification_id": "ver_x", "code": "123"},
                                  {"verification_id": "ver_x"}, {"code": "123456"}])
def test_malformed_checks_are_422(post, body):
    response = post("check", body)
    assert (response.status_code, error_code(response)) == (422, "VALIDATION_ERROR")


def test_unknown_or_other_tenants_verification_is_404(send, check, other_tenant):
    data = send({"to": USER}).json()["data"]
    assert error_code(check("ver_01UNKNOWN", "123456")) == "NOT_FOUND"
    response = check(data["verification_id"], data["test_code"], client=other_tenant.client())
    assert (response.status_code, error_code(response)) == (404, "NOT_FOUND")


def test_expiry_refuses_the_check_and_counts_as_expired(send, check, tenant):
    data = send({"to": USER}).json()["data"]
    with time_machine.travel(timezone.now() + timedelta(minutes=10, seconds=1)):
        # Lapsed but not swept yet: reads show expired already.
        read = tenant.client().get(f"/api/v1/verify/{data['verification_id']}")
        assert read.json()["data"]["status"] == "expired"
        stats = tenant.client().get("/api/v1/verify/analytics").json()["data"]
        assert stats["by_status"]["expired"] == 1
        assert stats["by_status"]["sent"] == 0
        response = check(data["verification_id"], data["test_code"])
        assert (response.status_code, error_code(response)) == (410, "VERIFICATION_EXPIRED")
    with tenant_context(tenant.org):
        assert Verification.objects.get(pk=data["verification_id"]).status == "expired"
    assert verify_events(tenant.org)[-1].type == "verification.expired"


def test_profile_expiration(send, check, tenant):
    profile = tenant.client().post("/api/v1/verify/profiles", {
        "name": "short", "expiration_seconds": 60}, format="json").json()["data"]
    data = send({"to": USER, "profile_id": profile["id"]}).json()["data"]
    # Relative to the code's creation: a slow send on a loaded machine moves nothing.
    created = parse_datetime(data["created_at"])
    with time_machine.travel(created + timedelta(seconds=59)):
        assert check(data["verification_id"], data["test_code"]).json()["data"]["valid"]
    data = send({"to": USER, "profile_id": profile["id"]}).json()["data"]
    with time_machine.travel(parse_datetime(data["created_at"]) + timedelta(seconds=61)):
        assert error_code(check(data["verification_id"], data["test_code"])) == \
            "VERIFICATION_EXPIRED"


def test_the_sweep_expires_lapsed_codes_with_their_events(send, tenant, commit):
    old = send({"to": USER}).json()["data"]
    with time_machine.travel(timezone.now() + timedelta(minutes=5)):
        fresh = send({"to": "+14155550124"}).json()["data"]
    with time_machine.travel(timezone.now() + timedelta(minutes=11)):
        with commit():
            assert tasks.expire_due() == 1
        assert tasks.expire_due() == 0
    with tenant_context(tenant.org):
        statuses = dict(Verification.objects.values_list("pk", "status"))
    assert statuses == {old["verification_id"]: "expired", fresh["verification_id"]: "sent"}
    expired = [e for e in verify_events(tenant.org) if e.type == "verification.expired"]
    assert [e.data["verification_id"] for e in expired] == [old["verification_id"]]


def test_cancel(send, post, check, tenant):
    data = send({"to": USER}).json()["data"]
    response = post(f"{data['verification_id']}/cancel", {})
    assert response.status_code == 200, response.content
    assert (response.json()["data"]["status"], response.json()["data"]["cancel_reason"]) == (
        "canceled", "canceled")
    refused = check(data["verification_id"], data["test_code"])
    assert (refused.status_code, error_code(refused)) == (409, "VERIFICATION_CANCELED")
    again = post(f"{data['verification_id']}/cancel", {})
    assert (again.status_code, error_code(again)) == (409, "VERIFICATION_CANCELED")
    assert verify_events(tenant.org)[-1].type == "verification.canceled"


def test_cancel_after_verification_or_expiry_is_refused(send, post, check):
    done = send({"to": USER}).json()["data"]
    check(done["verification_id"], done["test_code"])
    response = post(f"{done['verification_id']}/cancel", {})
    assert (response.status_code, error_code(response)) == (409, "VERIFICATION_ALREADY_VERIFIED")
    lapsed = send({"to": USER}).json()["data"]
    with time_machine.travel(timezone.now() + timedelta(minutes=11)):
        response = post(f"{lapsed['verification_id']}/cancel", {})
    assert (response.status_code, error_code(response)) == (410, "VERIFICATION_EXPIRED")


def test_cancel_unknown_is_404(post):
    response = post("ver_01UNKNOWN/cancel", {})
    assert (response.status_code, error_code(response)) == (404, "NOT_FOUND")
