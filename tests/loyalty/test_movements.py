"""Redeem and adjust: debits and credits recorded as tracked events, overdrafts refused."""

from __future__ import annotations

from platform_core.audit.models import AuditLogEntry
from platform_core.events.models import Event, TrackedEvent

from .helpers import MEMBERS, author, make_contact, member, scoped_client, track
from .test_members import RULES


def _member_with(tenant, visits: int) -> dict:
    author(tenant, RULES)
    contact = make_contact(tenant)
    for _ in range(visits):
        track(tenant, contact["email"], "store.visit")  # 8 points each
    return contact


def test_redeem_debits_and_is_an_event(tenant):
    contact = _member_with(tenant, 5)  # 40
    response = tenant.client().post(f"{MEMBERS}/{contact['id']}/redeem",
                                    {"points": 25, "reward": "Free coffee",
                                     "reference": "order-77"}, format="json")
    assert response.status_code == 201, response.content
    data = response.json()["data"]
    assert data["id"].startswith("tev_")
    assert data["points"] == -25
    assert data["reward"] == "Free coffee"
    assert data["reference"] == "order-77"
    assert data["balance"]["available"] == 15
    assert data["balance"]["redeemed"] == 25
    assert member(tenant, contact["id"])["balance"]["available"] == 15
    stored = TrackedEvent.objects.for_organization(tenant.org).get(pk=data["id"])
    assert stored.name == "loyalty.points_redeemed"
    assert stored.contact_id == contact["id"]
    assert stored.properties == {"points": 25, "reward": "Free coffee", "reference": "order-77"}
    emitted = Event.objects.for_organization(tenant.org).filter(type="loyalty.points.redeemed")
    assert [e.data["available"] for e in emitted] == [15]
    # Exactly the balance may be redeemed; one more point may not.
    assert tenant.client().post(f"{MEMBERS}/{contact['id']}/redeem",
                                {"points": 15, "reward": "x"}, format="json").status_code == 201
    response = tenant.client().post(f"{MEMBERS}/{contact['id']}/redeem",
                                    {"points": 1, "reward": "x"}, format="json")
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "LOYALTY_INSUFFICIENT_POINTS"
    assert error["details"] == {"available": 0, "requested": 1}
    assert TrackedEvent.objects.for_organization(tenant.org).filter(
        name="loyalty.points_redeemed").count() == 2


def test_redeem_validation(tenant):
    contact = _member_with(tenant, 1)
    url = f"{MEMBERS}/{contact['id']}/redeem"
    for body, field in [
        ({"reward": "x"}, "points"),
        ({"points": 0, "reward": "x"}, "points"),
        ({"points": -3, "reward": "x"}, "points"),
        ({"points": 1.5, "reward": "x"}, "points"),
        ({"points": 1}, "reward"),
        ({"points": 1, "reward": "x" * 201}, "reward"),
    ]:
        response = tenant.client().post(url, body, format="json")
        assert response.status_code == 422, (body, response.content)
        assert field in [i["field"] for i in response.json()["error"]["details"]["issues"]]
    assert member(tenant, contact["id"])["balance"]["available"] == 8


def test_adjust_credit_and_debit_are_audited(tenant):
    contact = _member_with(tenant, 1)  # 8
    url = f"{MEMBERS}/{contact['id']}/adjust"
    response = tenant.client().post(url, {"points": 50, "reason": "Apology"}, format="json")
    assert response.status_code == 201, response.content
    data = response.json()["data"]
    assert data["points"] == 50
    assert data["reason"] == "Apology"
    assert data["balance"]["available"] == 58
    assert data["balance"]["adjusted"] == 50
    assert data["tier"]["current"]["name"] == "Silver"  # credits count toward lifetime

    response = tenant.client().post(url, {"points": -20, "reason": "Fraud"}, format="json")
    assert response.status_code == 201
    assert response.json()["data"]["balance"]["available"] == 38
    state = member(tenant, contact["id"])
    assert state["balance"]["adjusted"] == 30
    assert state["tier"]["lifetime_points"] == 58  # debits never lower lifetime points

    response = tenant.client().post(url, {"points": -39, "reason": "Too much"}, format="json")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "LOYALTY_INSUFFICIENT_POINTS"

    entries = AuditLogEntry.objects.filter(organization=tenant.org,
                                           action="loyalty.points.adjusted").order_by("created_at")
    assert [(e.target_id, e.metadata["points"], e.metadata["reason"]) for e in entries] == [
        (contact["id"], 50, "Apology"), (contact["id"], -20, "Fraud")]
    assert all(e.actor_id for e in entries)


def test_adjust_validation(tenant):
    contact = _member_with(tenant, 1)
    url = f"{MEMBERS}/{contact['id']}/adjust"
    for body, field in [
        ({"points": 0, "reason": "x"}, "points"),
        ({"points": 5}, "reason"),
        ({"points": 5, "reason": ""}, "reason"),
        ({"points": "lots", "reason": "x"}, "points"),
        ({"points": 10**10, "reason": "x"}, "points"),
    ]:
        response = tenant.client().post(url, body, format="json")
        assert response.status_code == 422, (body, response.content)
        assert field in [i["field"] for i in response.json()["error"]["details"]["issues"]]


def test_writes_need_contacts_write(tenant):
    contact = _member_with(tenant, 2)
    reader = scoped_client(tenant, ["contacts:read"])
    for path, body in (("redeem", {"points": 1, "reward": "x"}),
                       ("adjust", {"points": 1, "reason": "x"})):
        response = reader.post(f"{MEMBERS}/{contact['id']}/{path}", body, format="json")
        assert response.status_code == 403
        assert response.json()["error"]["details"]["required_scope"] == "contacts:write"
    writer = scoped_client(tenant, ["contacts:write"])
    assert writer.post(f"{MEMBERS}/{contact['id']}/redeem", {"points": 1, "reward": "x"},
                       format="json").status_code == 201


def test_redeem_is_idempotent_with_a_key(tenant):
    contact = _member_with(tenant, 2)  # 16
    url = f"{MEMBERS}/{contact['id']}/redeem"
    body = {"points": 10, "reward": "x"}
    first = tenant.client().post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    again = tenant.client().post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == again.status_code == 201
    assert first.json()["data"]["id"] == again.json()["data"]["id"]
    assert member(tenant, contact["id"])["balance"]["available"] == 6


def test_redemptions_and_adjustments_cannot_be_tracked_through_events_track(tenant):
    """Only loyalty's own endpoints record its movements: a key with events:write cannot
    credit or debit points by tracking the reserved names."""
    contact = make_contact(tenant)
    for name in ("loyalty.points_adjusted", "loyalty.points_redeemed"):
        response = tenant.client().post(
            "/api/v1/events/track",
            {"event": name, "contact_email": contact["email"], "properties": {"points": 500}},
            format="json")
        assert response.status_code == 422, response.content
        assert response.json()["error"]["code"] == "VALIDATION_ERROR"
    assert member(tenant, contact["id"])["balance"]["available"] == 0
