"""Contacts (0-conventions.md section 5): create, read, update, delete, normalization,
uniqueness, limits, events, tracked-event linking and the `q` search."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from contacts.models import Contact
from platform_core.events.models import Event, TrackedEvent
from platform_core.identity import services as identity_services
from platform_core.identity.models import KeyMode, KeyType
from platform_core.tenancy.context import tenant_context
from tests.contacts.helpers import CONTACTS, bulk_contacts, error_code, make_contact

pytestmark = pytest.mark.django_db


def create(client, **body):
    return client.post(CONTACTS, body, format="json")


def events_of(tenant, type_: str) -> list[Event]:
    return list(Event.objects.for_organization(tenant.org).filter(type=type_).order_by("created_at"))


# --- Create and read ---------------------------------------------------------------------


def test_create_normalizes_phone_and_email(tenant):
    response = create(tenant.client(), first_name=" Ann ", last_name="Lee",
                      phone="(415) 555-0123", email="Ann.Lee@Example.COM",
                      custom_fields={"plan": "pro", "seats": 3, "trial": False},
                      tags=["vip", "beta", "vip"])
    assert response.status_code == 201, response.content
    data = response.json()["data"]
    assert data["id"].startswith("cnt_")
    assert data["first_name"] == "Ann"
    assert data["phone"] == "+14155550123"
    assert data["email"] == "ann.lee@example.com"
    assert data["custom_fields"] == {"plan": "pro", "seats": 3, "trial": False}
    assert data["tags"] == ["vip", "beta"]
    assert set(data) == {"id", "first_name", "last_name", "phone", "email", "custom_fields",
                         "tags", "created_at", "updated_at"}
    detail = tenant.client().get(f"{CONTACTS}/{data['id']}")
    assert detail.status_code == 200
    assert detail.json()["data"] == data


def test_national_number_uses_organization_default_country(tenant):
    tenant.org.default_country = "GB"
    tenant.org.save()
    response = create(tenant.client(), phone="020 7183 8750")
    assert response.status_code == 201, response.content
    assert response.json()["data"]["phone"] == "+442071838750"


def test_contact_without_phone_or_email_reads_null(tenant):
    data = create(tenant.client(), first_name="Only").json()["data"]
    assert (data["phone"], data["email"], data["tags"], data["custom_fields"]) == (
        None, None, [], {})


@pytest.mark.parametrize("phone", ["12", "+1 555 555 0100", "not a phone", "+999123"])
def test_invalid_phone_is_422(tenant, phone):
    response = create(tenant.client(), phone=phone)
    assert response.status_code == 422
    assert error_code(response) == "INVALID_PHONE_NUMBER"
    assert response.json()["error"]["details"]["field"] == "phone"


@pytest.mark.parametrize("email", ["nope", "a@", "@b.com", "a b@c.com"])
def test_invalid_email_is_422(tenant, email):
    response = create(tenant.client(), email=email)
    assert response.status_code == 422
    assert error_code(response) == "INVALID_EMAIL"
    assert response.json()["error"]["details"]["field"] == "email"


def test_duplicate_phone_and_email_are_409_naming_the_field(tenant, other_tenant):
    first = create(tenant.client(), phone="+14155550123", email="a@example.com").json()["data"]
    same_phone = create(tenant.client(), phone="415-555-0123")
    assert same_phone.status_code == 409
    assert error_code(same_phone) == "ALREADY_EXISTS"
    assert same_phone.json()["error"]["details"] == {"field": "phone", "contact_id": first["id"]}
    same_email = create(tenant.client(), email="A@EXAMPLE.com")
    assert same_email.status_code == 409
    assert same_email.json()["error"]["details"]["field"] == "email"
    # Another organization may hold the same phone and email.
    assert create(other_tenant.client(), phone="+14155550123",
                  email="a@example.com").status_code == 201
    # Empty phone and email never collide.
    assert create(tenant.client(), first_name="x").status_code == 201
    assert create(tenant.client(), first_name="y").status_code == 201


def test_unique_constraint_backs_the_check(tenant):
    """The database refuses a duplicate even when the service's pre-check is bypassed."""
    from django.db import IntegrityError, transaction

    make_contact(tenant, phone="+14155550123")
    with tenant_context(tenant.org), pytest.raises(IntegrityError), transaction.atomic():
        Contact.objects.create(organization=tenant.org, phone="+14155550123")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"first_name": "x" * 256}, "first_name"),
        ({"tags": ["t"] * 1 + [f"t{i}" for i in range(50)]}, "tags"),
        ({"tags": ["x" * 65]}, "tags[0]"),
        ({"tags": [""]}, "tags[0]"),
        ({"tags": "vip"}, "tags"),
        ({"tags": [3]}, "tags[0]"),
        ({"custom_fields": {f"k{i}": 1 for i in range(101)}}, "custom_fields"),
        ({"custom_fields": {"bad key": 1}}, "custom_fields.bad key"),
        ({"custom_fields": {"-x": 1}}, "custom_fields.-x"),
        ({"custom_fields": {"k" * 65: 1}}, "custom_fields." + "k" * 65),
        ({"custom_fields": {"k": "x" * 2001}}, "custom_fields.k"),
        ({"custom_fields": {"k": {"nested": 1}}}, "custom_fields.k"),
        ({"custom_fields": {"k": [1, 2]}}, "custom_fields.k"),
        ({"custom_fields": [1]}, "custom_fields"),
    ],
)
def test_limits_are_422(tenant, body, field):
    response = create(tenant.client(), **body)
    assert response.status_code == 422, response.content
    assert error_code(response) == "VALIDATION_ERROR"
    fields = [i["field"] for i in response.json()["error"]["details"]["issues"]]
    assert field in fields


def test_limits_at_the_edge_are_accepted(tenant):
    response = create(tenant.client(), first_name="x" * 255,
                      tags=[f"t{i}" for i in range(49)] + ["x" * 64],
                      custom_fields={**{f"k{i}": i for i in range(99)}, "k" * 64: "v" * 2000})
    assert response.status_code == 201, response.content


# --- Update and delete -------------------------------------------------------------------


def test_patch_merges_custom_fields_replaces_tags_and_clears(tenant):
    contact = make_contact(tenant, first_name="Ann", phone="+14155550123", email="a@x.com",
                           custom_fields={"plan": "pro", "seats": 3}, tags=["a"])
    response = tenant.client().patch(
        f"{CONTACTS}/{contact.pk}",
        {"custom_fields": {"seats": None, "region": "eu"}, "tags": ["b", "c"], "phone": None,
         "email": "NEW@x.com"},
        format="json",
    )
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["custom_fields"] == {"plan": "pro", "region": "eu"}
    assert data["tags"] == ["b", "c"]
    assert data["phone"] is None
    assert data["email"] == "new@x.com"
    assert data["first_name"] == "Ann"


def test_patch_to_taken_phone_is_409_and_invalid_is_422(tenant):
    make_contact(tenant, phone="+14155550123")
    other = make_contact(tenant, phone="+14155550124")
    url = f"{CONTACTS}/{other.pk}"
    taken = tenant.client().patch(url, {"phone": "4155550123"}, format="json")
    assert taken.status_code == 409
    assert taken.json()["error"]["details"]["field"] == "phone"
    bad = tenant.client().patch(url, {"email": "bad"}, format="json")
    assert error_code(bad) == "INVALID_EMAIL"
    # Its own values are not a conflict.
    assert tenant.client().patch(url, {"phone": "+14155550124"}, format="json").status_code == 200


def test_patch_custom_fields_limit_counts_the_merged_object(tenant):
    contact = make_contact(tenant, custom_fields={f"k{i}": i for i in range(100)})
    response = tenant.client().patch(f"{CONTACTS}/{contact.pk}",
                                     {"custom_fields": {"one_more": 1}}, format="json")
    assert response.status_code == 422
    replaced = tenant.client().patch(f"{CONTACTS}/{contact.pk}",
                                     {"custom_fields": {"k0": None, "one_more": 1}}, format="json")
    assert replaced.status_code == 200


def test_delete_then_404(tenant):
    contact = make_contact(tenant, first_name="Gone")
    assert tenant.client().delete(f"{CONTACTS}/{contact.pk}").status_code == 204
    response = tenant.client().get(f"{CONTACTS}/{contact.pk}")
    assert response.status_code == 404
    assert error_code(response) == "NOT_FOUND"


def test_read_scope_cannot_write(tenant):
    _key, raw = identity_services.api_key_create(
        organization=tenant.org, name="ro", key_type=KeyType.SECRET,
        mode=KeyMode.TEST if tenant.org.sandbox else KeyMode.LIVE, scopes=["contacts:read"],
    )
    client = tenant.client(raw)
    assert client.get(CONTACTS).status_code == 200
    response = create(client, first_name="x")
    assert response.status_code == 403
    assert error_code(response) == "INSUFFICIENT_PERMISSIONS"


# --- Events ------------------------------------------------------------------------------


def test_events_created_updated_deleted(tenant):
    client = tenant.client()
    contact_id = create(client, first_name="Ann", email="ann@x.com").json()["data"]["id"]
    created = events_of(tenant, "contact.created")
    assert len(created) == 1
    assert created[0].data["contact"]["id"] == contact_id
    assert created[0].data["contact"]["email"] == "ann@x.com"

    client.patch(f"{CONTACTS}/{contact_id}", {"last_name": "Lee"}, format="json")
    client.patch(f"{CONTACTS}/{contact_id}", {"last_name": "Lee"}, format="json")  # no change
    updated = events_of(tenant, "contact.updated")
    assert len(updated) == 1
    assert updated[0].data["changed_fields"] == ["last_name"]
    assert updated[0].data["contact"]["last_name"] == "Lee"

    client.delete(f"{CONTACTS}/{contact_id}")
    deleted = events_of(tenant, "contact.deleted")
    assert [e.data["id"] for e in deleted] == [contact_id]


def test_writes_are_audited(tenant):
    from platform_core.audit.models import AuditLogEntry

    contact_id = create(tenant.client(), first_name="Ann").json()["data"]["id"]
    actions = set(
        AuditLogEntry.objects.filter(organization=tenant.org, target_id=contact_id)
        .values_list("action", flat=True)
    )
    assert "contact.created" in actions


# --- Tracked events, both directions -----------------------------------------------------


def _tracked(tenant, **fields) -> TrackedEvent:
    with tenant_context(tenant.org):
        return TrackedEvent.objects.create(organization=tenant.org, name="purchase", **fields)


def test_creating_a_contact_links_its_earlier_tracked_events(tenant, other_tenant):
    by_email = _tracked(tenant, contact_email="ann@x.com")
    by_phone = _tracked(tenant, contact_phone="+14155550123")
    unrelated = _tracked(tenant, contact_email="bob@x.com")
    foreign = _tracked(other_tenant, contact_email="ann@x.com")
    contact_id = create(tenant.client(), email="Ann@X.com", phone="4155550123").json()["data"]["id"]
    for event in (by_email, by_phone, unrelated, foreign):
        event.refresh_from_db()
    assert by_email.contact_id == contact_id
    assert by_phone.contact_id == contact_id
    assert unrelated.contact_id is None
    assert foreign.contact_id is None


def test_changing_email_links_events_and_deleting_unlinks(tenant):
    contact = make_contact(tenant, email="old@x.com")
    event = _tracked(tenant, contact_email="new@x.com")
    tenant.client().patch(f"{CONTACTS}/{contact.pk}", {"email": "new@x.com"}, format="json")
    event.refresh_from_db()
    assert event.contact_id == contact.pk
    tenant.client().delete(f"{CONTACTS}/{contact.pk}")
    event.refresh_from_db()
    assert event.contact_id is None


def test_event_tracked_after_the_contact_is_linked_by_ingestion(tenant):
    contact = make_contact(tenant, phone="+14155550123")
    response = tenant.client().post("/api/v1/events/track",
                                    {"event": "signup", "contact_phone": "(415) 555-0123"},
                                    format="json")
    assert response.status_code in (200, 201, 202), response.content
    with tenant_context(tenant.org):
        assert TrackedEvent.objects.get(name="signup").contact_id == contact.pk


# --- Listing and q -----------------------------------------------------------------------


def ids(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()["data"]]


@pytest.fixture
def people(tenant):
    return {
        "ann": make_contact(tenant, first_name="Ann", last_name="Lee", phone="+14155550123",
                            email="ann@acme.com", tags=["vip", "big spender"]),
        "bob": make_contact(tenant, first_name="Bob", last_name="Annis", phone="+12025550143",
                            email="bob@other.org", tags=["vip"]),
        "cy": make_contact(tenant, first_name="Cy", last_name="Young", email="cy@acme.com",
                           tags=["beta"]),
    }


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        ("ann", {"ann", "bob"}),  # first name of Ann, last name of Bob (Annis)
        ("ann lee", {"ann"}),
        ("(415) 555-0123", {"ann"}),
        ("4155550123", {"ann"}),
        ("+1 415 555 0123", {"ann"}),
        ("555-0143", {"bob"}),
        ("ann@acme.com", {"ann"}),
        ("ANN@ACME.COM", {"ann"}),
        ("@acme", {"ann", "cy"}),
        ("email:*@acme.com", {"ann", "cy"}),
        ("email:bob@other.org", {"bob"}),
        ("email:c*@acme.com", {"cy"}),
        ("email:ann*", {"ann"}),
        ("tag:vip", {"ann", "bob"}),
        ('tag:"big spender"', {"ann"}),
        ("tag:vip email:*@acme.com", {"ann"}),
        ("tag:vip tag:beta", set()),
        ("tag:VIP", set()),
        ("phone:+14155550123", {"ann"}),
        ("phone:(202) 555-0143", {"bob"}),
        ("phone:+1415", {"ann"}),
        ("name:young", {"cy"}),
        ("tag:vip bob", {"bob"}),
        ("nobody", set()),
    ],
)
def test_q_search(tenant, people, q, expected):
    response = tenant.client().get(CONTACTS, {"q": q})
    names = {name for name, c in people.items() if c.pk in ids(response)}
    assert names == expected


@pytest.mark.parametrize("q", ["tag:", "email:", "phone:", "x" * 501])
def test_bad_q_is_400(tenant, q):
    response = tenant.client().get(CONTACTS, {"q": q})
    assert response.status_code == 400
    assert error_code(response) == "VALIDATION_ERROR"


def test_cursor_pagination_keeps_filters(tenant):
    bulk_contacts(tenant, 7, tags=["vip"])
    bulk_contacts(tenant, 3)
    client = tenant.client()
    seen: list[str] = []
    params = {"q": "tag:vip", "limit": 3}
    while True:
        response = client.get(CONTACTS, params)
        seen += ids(response)
        pagination = response.json()["meta"]["pagination"]
        if not pagination["has_more"]:
            break
        params = {**params, "cursor": pagination["cursor"]}
    assert len(seen) == len(set(seen)) == 7
    # The cursor belongs to its filters.
    changed = client.get(CONTACTS, {"q": "tag:beta", "limit": 3, "cursor": params["cursor"]})
    assert changed.status_code == 400
    assert error_code(changed) == "INVALID_CURSOR"


def _queries(client, url, params) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url, params).status_code == 200
    return len(captured)


def test_list_query_count_is_constant(tenant):
    client = tenant.client()
    client.get(CONTACTS)  # warm the credential cache
    bulk_contacts(tenant, 3, custom_fields={"a": 1}, tags=["t"])
    small = _queries(client, CONTACTS, {"limit": 50, "q": "tag:t"})
    bulk_contacts(tenant, 40, custom_fields={"a": 1}, tags=["t"])
    large = _queries(client, CONTACTS, {"limit": 50, "q": "tag:t"})
    assert small == large
    assert large <= 6


def test_race_past_the_check_still_answers_409_naming_the_field(tenant, monkeypatch):
    """Two concurrent creates can both pass the pre-check; the constraint decides."""
    from contacts import services

    make_contact(tenant, email="ann@x.com")
    monkeypatch.setattr(services, "_check_unique", lambda *a, **k: None)
    response = create(tenant.client(), email="ann@x.com")
    assert response.status_code == 409
    assert response.json()["error"]["details"] == {"field": "email"}
    with tenant_context(tenant.org):
        assert Contact.objects.filter(email="ann@x.com").count() == 1


def test_gin_indexes_exist_on_postgresql():
    if connection.vendor != "postgresql":
        pytest.skip("GIN indexes are PostgreSQL-only")
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes "
                       "WHERE tablename = 'contacts_contact'")
        indexes = dict(cursor.fetchall())
    assert "USING gin (custom_fields jsonb_path_ops)" in indexes["contacts_cnt_custom_fields_gin"]
    assert "USING gin (tags jsonb_path_ops)" in indexes["contacts_cnt_tags_gin"]
