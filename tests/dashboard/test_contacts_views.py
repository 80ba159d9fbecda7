"""The Contacts screen through the Django test client: search and paging without N+1,
the detail with its timeline and opt-out state, edits, lists, the segment live count,
CSV import and export jobs, and role refusals (a viewer's write answers 403)."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from contacts import imports
from contacts.models import Contact, ContactList, ExportJob, ImportJob
from contacts.segments.models import Segment
from platform_core.tenancy.context import tenant_context
from tests.conftest import make_tenant
from tests.platform_core.accounts.conftest import add_member

from .conftest import client_as
from .contacts_support import csv_text, give_timeline, make_contact

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def tenant():
    return make_tenant()


@pytest.fixture
def owner(tenant):
    return client_as(tenant.owner, tenant.org)


@pytest.fixture
def viewer(tenant):
    return client_as(add_member(tenant, "viewer", email="viewer@example.com"),
                            tenant.org)


def test_list_searches_with_the_api_q_and_pages_by_keyset(tenant, owner):
    for i in range(30):
        make_contact(tenant.org, first_name=f"Ann{i}", email=f"ann{i}@example.com")
    make_contact(tenant.org, first_name="Bob", email="bob@corp.test", tags=["vip"])

    page = owner.get("/dashboard/contacts/").content.decode()
    assert page.count("data-contact-id=") == 25
    assert 'id="contacts-next"' in page
    cursor = re.search(r'cursor=([^"&]+)', page).group(1)
    second = owner.get(f"/dashboard/contacts/?cursor={cursor}").content.decode()
    assert second.count("data-contact-id=") == 6

    found = owner.get("/dashboard/contacts/?q=tag:vip", **HTMX,
                      HTTP_HX_TARGET="contacts-results").content.decode()
    assert "bob@corp.test" in found
    assert "ann1@" not in found
    assert "<html" not in found
    bad = owner.get("/dashboard/contacts/?q=email:", **HTMX)
    assert bad.status_code == 400
    assert b"VALIDATION_ERROR" in bad.content


def test_list_queries_do_not_grow_with_the_rows(tenant, owner, django_assert_max_num_queries):
    make_contact(tenant.org, first_name="Only")
    with django_assert_max_num_queries(50) as few:
        owner.get("/dashboard/contacts/")
    for i in range(40):
        make_contact(tenant.org, first_name=f"P{i}", tags=["a", "b"])
    with django_assert_max_num_queries(len(few.captured_queries) + 1):  # + the capped count
        assert owner.get("/dashboard/contacts/").status_code == 200


def test_detail_shows_timeline_opt_out_and_lists_and_saves_edits(tenant, owner):
    contact = make_contact(tenant.org, first_name="Ada", phone="+14155550101",
                           custom_fields={"plan": "gold", "seats": 3})
    give_timeline(tenant.org, contact)
    with tenant_context(tenant.org):
        ContactList.objects.create(organization=tenant.org, name="Newsletter")

    page = owner.get(f"/dashboard/contacts/{contact.pk}").content.decode()
    assert 'data-kind="message"' in page
    assert "Your order has shipped" in page
    assert 'data-kind="conversation"' in page
    assert 'data-kind="event"' in page
    assert "Opted out" in page
    assert "every sender" in page
    assert "Newsletter" in page
    assert 'id="contact-edit-form"' in page

    response = owner.post(f"/dashboard/contacts/{contact.pk}", {
        "first_name": "Ada", "last_name": "Lovelace", "phone": "+14155550101",
        "email": "ADA@example.com", "tags": "vip, beta", "custom_fields": "seats: 3\nrole: cto"})
    assert response.status_code == 302
    contact.refresh_from_db()
    assert (contact.last_name, contact.email, contact.tags) == ("Lovelace", "ada@example.com",
                                                               ["vip", "beta"])
    assert contact.custom_fields == {"seats": 3, "role": "cto"}  # plan removed, 3 kept a number

    bad = owner.post(f"/dashboard/contacts/{contact.pk}", {"phone": "12", "tags": ""},
                     follow=True)
    assert b"INVALID_PHONE_NUMBER" in bad.content


def test_another_organizations_contact_is_not_found(tenant, owner):
    other = make_tenant()
    stranger = make_contact(other.org, first_name="Eve")
    assert owner.get(f"/dashboard/contacts/{stranger.pk}").status_code == 404


def test_lists_create_add_and_remove_members(tenant, owner):
    contact = make_contact(tenant.org, first_name="Ada", email="ada@example.com")
    response = owner.post("/dashboard/contacts/lists/", {"name": "VIPs"})
    contact_list = ContactList.objects.dangerously_unscoped().get(name="VIPs")
    assert response["Location"] == f"/dashboard/contacts/lists/{contact_list.pk}"

    owner.post(f"/dashboard/contacts/lists/{contact_list.pk}", {"identifier": "ada@example.com"})
    page = owner.get(f"/dashboard/contacts/lists/{contact_list.pk}").content.decode()
    assert f'data-contact-id="{contact.pk}"' in page
    assert 'id="list-count">1<' in page

    missing = owner.post(f"/dashboard/contacts/lists/{contact_list.pk}",
                         {"identifier": "nobody@example.com"}, follow=True)
    assert b"CONTACT_NOT_FOUND_FOR_IDENTIFIER" in missing.content

    owner.post(f"/dashboard/contacts/lists/{contact_list.pk}/members/{contact.pk}/remove",
               {"next": f"/dashboard/contacts/{contact.pk}"})
    contact_list.refresh_from_db()
    assert contact_list.contact_count == 0


def test_segment_live_count_follows_the_filter_and_saves(tenant, owner):
    for i in range(3):
        make_contact(tenant.org, first_name=f"V{i}", tags=["vip"])
    make_contact(tenant.org, first_name="Plain")

    def count(**params) -> str:
        return owner.get("/dashboard/contacts/segments/count", params, **HTMX).content.decode()

    assert 'data-count="3"' in count(op="and", field="tags", operator="eq", value="vip")
    assert 'data-count="4"' in count(op="or", field=["tags", "first_name"],
                                     operator=["eq", "eq"], value=["vip", "plain"])
    unfinished = count(op="and", field="shoe_size", operator="eq", value="9")
    assert "Not a complete filter yet" in unfinished
    assert "filters.rules.0.field" in unfinished

    response = owner.post("/dashboard/contacts/segments/new", {
        "name": "VIPs", "op": "and", "field": ["tags", ""], "operator": ["eq", "eq"],
        "value": ["vip", ""]})
    segment = Segment.objects.dangerously_unscoped().get(name="VIPs")
    assert response.status_code == 302
    assert segment.member_count == 3
    assert segment.filters == {"op": "and", "rules": [
        {"field": "tags", "operator": "eq", "value": "vip"}]}

    page = owner.get(f"/dashboard/contacts/segments/{segment.pk}").content.decode()
    assert 'value="vip"' in page
    assert 'hx-trigger="input changed delay:400ms"' in page

    invalid = owner.post(f"/dashboard/contacts/segments/{segment.pk}", {
        "name": "VIPs", "op": "and", "field": "tags", "operator": "gt", "value": "1"})
    assert invalid.status_code == 422
    assert b'id="segment-errors"' in invalid.content


def test_import_uploads_maps_and_runs_the_job(tenant, owner, monkeypatch,
                                              django_capture_on_commit_callbacks):
    monkeypatch.setattr(imports, "CHUNK_ROWS", 5)  # 12 rows: the task chains 3 chunks
    upload = SimpleUploadedFile("people.csv", csv_text(12, bad_every=5).encode(),
                                content_type="text/csv")
    mapping = owner.post("/dashboard/contacts/import", {"file": upload}).content.decode()
    assert "12 rows to import" in mapping
    file_id = re.search(r'name="file_id" value="([^"]+)"', mapping).group(1)
    # The suggested mapping: names and email recognized, Plan offered as a custom field.
    assert re.search(r'<option value="email" selected>', mapping)
    assert 'value="plan"' in mapping

    form = {"file_id": file_id, "column": ["First Name", "Last Name", "E-mail", "Phone", "Plan"],
            "target": ["first_name", "last_name", "email", "", "custom"],
            "custom": ["", "", "", "", "plan"]}
    with django_capture_on_commit_callbacks(execute=True):
        response = owner.post("/dashboard/contacts/import/start", form)
    job = ImportJob.objects.dangerously_unscoped().get()
    assert response["Location"] == f"/dashboard/contacts/imports/{job.pk}"
    # Celery runs eagerly in tests: the job has finished by now.
    assert (job.status, job.rows_done, job.created_count, job.failed_count) == (
        "succeeded", 12, 10, 2)
    assert job.errors[0]["row"] == 6
    assert job.errors[0]["code"] == "INVALID_EMAIL"
    with tenant_context(tenant.org):
        assert Contact.objects.get(email="person1@example.com").custom_fields == {"plan": "gold"}

    fragment = owner.get(f"/dashboard/contacts/imports/{job.pk}", **HTMX).content.decode()
    assert 'data-status="succeeded"' in fragment
    assert "every 1s" not in fragment
    assert 'id="import-created">10<' in fragment
    assert "INVALID_EMAIL" in fragment

    twice = dict(form, target=["first_name", "first_name", "email", "", ""])
    again = owner.post("/dashboard/contacts/import/start", twice)
    assert again.status_code == 422
    assert b"first_name is mapped twice" in again.content


def test_import_progress_polls_while_the_job_runs(tenant, owner, monkeypatch):
    monkeypatch.setattr(imports, "enqueue", lambda job: None)  # no worker: drive it by hand
    upload = SimpleUploadedFile("p.csv", csv_text(30).encode(), content_type="text/csv")
    owner.post("/dashboard/contacts/import", {"file": upload})
    with tenant_context(tenant.org):
        stored = imports.StoredFile.objects.get(purpose=imports.FILE_PURPOSE)
        job = imports.import_job_create(principal=_owner_principal(tenant), file_id=stored.pk,
                                        mapping={"E-mail": "email", "First Name": "first_name"})
        imports.import_job_run(organization=tenant.org, job_id=job.pk, max_rows=10)
    fragment = owner.get(f"/dashboard/contacts/imports/{job.pk}", **HTMX).content.decode()
    assert 'hx-trigger="every 1s"' in fragment
    assert 'data-status="running"' in fragment
    assert "10/30" in fragment
    assert 'value="10"' in fragment
    with tenant_context(tenant.org):
        imports.import_job_run(organization=tenant.org, job_id=job.pk, max_rows=100)
    fragment = owner.get(f"/dashboard/contacts/imports/{job.pk}", **HTMX).content.decode()
    assert "every 1s" not in fragment
    assert "30/30" in fragment


def _owner_principal(tenant):
    from platform_core.identity.principal import Principal

    return Principal(kind="session", organization=tenant.org, role="owner",
                     user_id=tenant.owner.pk)


def test_import_refuses_a_file_that_is_not_csv(owner):
    upload = SimpleUploadedFile("x.csv", b"\xff\xfe\x00bad", content_type="text/csv")
    response = owner.post("/dashboard/contacts/import", {"file": upload}, follow=True)
    assert b"not UTF-8" in response.content


def test_export_job_runs_and_downloads(tenant, owner, django_capture_on_commit_callbacks):
    make_contact(tenant.org, first_name="Ada", email="ada@example.com", tags=["vip"])
    make_contact(tenant.org, first_name="Bob", email="bob@example.com")
    with django_capture_on_commit_callbacks(execute=True):
        response = owner.post("/dashboard/contacts/export", {"q": "tag:vip", "format": "csv",
                                                             "filename": "vips"})
    job = ExportJob.objects.dangerously_unscoped().get()
    assert response["Location"] == f"/dashboard/contacts/exports/{job.pk}"
    page = owner.get(f"/dashboard/contacts/exports/{job.pk}").content.decode()
    assert 'data-status="succeeded"' in page
    assert 'id="export-download"' in page
    download = owner.get(f"/dashboard/contacts/exports/{job.pk}/download")
    body = b"".join(download.streaming_content).decode()
    assert download["Content-Disposition"].startswith('attachment; filename="vips.csv"')
    assert "ada@example.com" in body
    assert "bob@example.com" not in body


def test_export_is_refused_to_roles_outside_the_export_roles(tenant):
    agent = client_as(add_member(tenant, "agent", email="agent@example.com"), tenant.org)
    assert b'id="export-not-allowed"' in agent.get("/dashboard/contacts/export").content
    assert agent.post("/dashboard/contacts/export", {"format": "csv"}).status_code == 403
    assert not ExportJob.objects.dangerously_unscoped().exists()


def test_viewer_sees_no_write_control_and_its_writes_are_refused(tenant, viewer):
    contact = make_contact(tenant.org, first_name="Ada")
    with tenant_context(tenant.org):
        contact_list = ContactList.objects.create(organization=tenant.org, name="L")
    pages = {
        "/dashboard/contacts/": ['id="new-contact-form"'],
        f"/dashboard/contacts/{contact.pk}": ['id="contact-edit-form"', 'id="add-to-list-form"'],
        "/dashboard/contacts/lists/": ['id="new-list-form"'],
        f"/dashboard/contacts/lists/{contact_list.pk}": ['id="add-member-form"', "Remove"],
        "/dashboard/contacts/segments/": ['id="new-segment"'],
        "/dashboard/contacts/segments/new": ['id="save-segment"'],
        "/dashboard/contacts/import": ['id="import-upload-form"'],
    }
    for path, controls in pages.items():
        page = viewer.get(path)
        assert page.status_code == 200, path
        for control in controls:
            assert control not in page.content.decode(), (path, control)

    writes = [
        ("/dashboard/contacts/", {"first_name": "X"}),
        (f"/dashboard/contacts/{contact.pk}", {"first_name": "X"}),
        ("/dashboard/contacts/lists/", {"name": "X"}),
        (f"/dashboard/contacts/lists/{contact_list.pk}", {"identifier": contact.pk}),
        ("/dashboard/contacts/segments/new", {"name": "X", "field": "tags", "operator": "exists"}),
        ("/dashboard/contacts/import", {}),
        ("/dashboard/contacts/export", {}),
    ]
    for path, data in writes:
        assert viewer.post(path, data).status_code == 403, path
    contact.refresh_from_db()
    assert contact.first_name == "Ada"
    assert not Segment.objects.dangerously_unscoped().exists()
