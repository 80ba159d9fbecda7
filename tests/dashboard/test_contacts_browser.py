"""The Contacts screen in a real browser: search and open a contact's timeline, a segment's
live count following the filter as it is typed, a CSV import whose progress bar moves
through a real mid-way state to done, an export downloaded when ready, and a viewer who
sees no write control.

The daphne of this module runs Celery non-eager (tests/dashboard/noneager_settings.py): queued
jobs wait, and the test plays the worker by calling the job services chunk by chunk.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from contacts import exports, imports
from contacts.models import Contact, ExportJob, ImportJob
from contacts.segments.models import Segment
from platform_core.tenancy.context import tenant_context
from tests.browser import BROWSER_TEST
from tests.conftest import make_tenant
from tests.daphne_server import running_daphne
from tests.platform_core.accounts.conftest import add_member

from .conftest import shot
from .contacts_support import csv_text, give_timeline, make_contact

pytestmark = [*BROWSER_TEST, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def dashboard_server(django_db_setup, django_db_blocker, tmp_path_factory) -> str:
    logs = tmp_path_factory.mktemp("daphne")
    with running_daphne(logs, settings_module="tests.dashboard.noneager_settings"
                        ) as port:
        yield f"http://127.0.0.1:{port}"


def test_search_open_a_contact_then_build_a_segment_with_a_live_count(page_as):
    tenant = make_tenant()
    ada = make_contact(tenant.org, first_name="Ada", last_name="Lovelace",
                       phone="+14155550101", email="ada@example.com", tags=["vip"])
    for first, last in (("Grace", "Hopper"), ("Alan", "Turing"), ("Edsger", "Dijkstra")):
        make_contact(tenant.org, first_name=first, last_name=last,
                     email=f"{first.lower()}@example.com", tags=["vip"])
    for i in range(2):
        make_contact(tenant.org, first_name=f"Other{i}", tags=["trial"])
    give_timeline(tenant.org, ada)

    # Search with the API's q as it is typed, then open the contact.
    page = page_as(tenant.owner, tenant.org, "/dashboard/contacts/")
    assert page.locator("#contacts-table tbody tr").count() == 6
    shot(page, "contacts-list")
    page.fill("#contact-search", "lovelace")
    page.wait_for_function(
        "document.querySelectorAll('#contacts-table tbody tr').length === 1")
    assert "q=lovelace" in page.url
    page.click("text=Ada Lovelace")
    page.wait_for_url(f"**/dashboard/contacts/{ada.pk}")

    # Its timeline (message, conversation, tracked event) and opt-out state; an edit.
    timeline = page.locator("#contact-timeline")
    assert "Your order has shipped" in timeline.locator("[data-kind=message]").inner_text()
    assert timeline.locator("[data-kind=conversation]").count() == 1
    assert "order_placed" in timeline.locator("[data-kind=event]").inner_text()
    assert "Opted out" in page.locator("#opt-out-state").inner_text()
    page.fill("#last_name", "King")
    page.click("#contact-edit-form button[type=submit]")
    page.wait_for_selector(".flash.success")
    assert page.locator("#contact-name").inner_text() == "Ada King"
    shot(page, "contacts-detail")

    # A segment whose count follows the filter as it is edited.
    page.goto("/dashboard/contacts/segments/new")
    page.wait_for_selector("#segment-count-body")
    rule = page.locator(".rule-row").first
    rule.locator("input[name=field]").fill("tags")
    rule.locator("input[name=value]").fill("vip")
    page.wait_for_selector("#segment-count-value:text-is('4')")
    rule.locator("select[name=operator]").select_option("neq")
    page.wait_for_selector("#segment-count-value:text-is('2')")
    rule.locator("select[name=operator]").select_option("eq")
    rule.locator("input[name=value]").fill("trial")
    page.wait_for_selector("#segment-count-value:text-is('2')")
    page.click("#add-rule")
    second = page.locator(".rule-row").nth(1)
    second.locator("input[name=field]").fill("first_name")
    second.locator("input[name=value]").fill("other0")
    page.wait_for_selector("#segment-count-value:text-is('1')")
    page.click("#add-rule")  # a third row, removed again: the count is asked anew
    page.locator(".rule-row").nth(2).locator("input[name=field]").fill("first_name")
    page.locator(".rule-row").nth(2).locator("input[name=value]").fill("nobody")
    page.wait_for_selector("#segment-count-value:text-is('0')")
    page.locator(".rule-row").nth(2).locator(".remove-rule").click()
    page.wait_for_selector("#segment-count-value:text-is('1')")
    page.fill("#segment-name", "Trial Other0")
    shot(page, "contacts-segment")
    page.click("#save-segment")
    page.wait_for_url(re.compile(r".*/dashboard/contacts/segments/seg_\w+$"))
    assert Segment.objects.dangerously_unscoped().get(name="Trial Other0").member_count == 1
    assert page.locator("#segment-members li").count() == 1


def test_import_a_csv_watch_the_progress_then_export_and_download(page_as, tmp_path):
    tenant = make_tenant()
    path = tmp_path / "people.csv"
    path.write_text(csv_text(120, bad_every=40))

    page = page_as(tenant.owner, tenant.org, "/dashboard/contacts/import")
    page.set_input_files("#import-file", str(path))
    page.click("#import-upload-form button[type=submit]")
    page.wait_for_selector("#import-mapping-form")
    assert "120 rows to import" in page.content()
    assert page.locator("#target-2").input_value() == "email"  # "E-mail" recognized
    page.locator("#target-4").select_option("custom")  # Plan -> custom field `plan`
    page.click("#import-mapping-form button[type=submit]")
    page.wait_for_url(re.compile(r".*/dashboard/contacts/imports/imp_\w+$"))
    job = ImportJob.objects.dangerously_unscoped().get()
    assert page.locator("#import-progress").get_attribute("data-status") == "queued"

    # The worker runs a first chunk: the polled bar shows the job mid-way.
    with tenant_context(tenant.org):
        imports.import_job_run(organization=tenant.org, job_id=job.pk, max_rows=50)
    page.wait_for_selector("#import-processed:text-is('50/120')")
    assert page.locator("#import-progress").get_attribute("data-status") == "running"
    assert page.locator("#import-bar").get_attribute("value") == "50"
    assert page.locator("#import-failed").inner_text() == "1"
    shot(page, "contacts-import-running")

    with tenant_context(tenant.org):
        imports.import_job_run(organization=tenant.org, job_id=job.pk, max_rows=100)
    page.wait_for_selector("#import-progress[data-status=succeeded]")
    assert page.locator("#import-processed").inner_text() == "120/120"
    assert page.locator("#import-created").inner_text() == "117"
    assert page.locator("#import-errors tbody tr").count() == 3
    shot(page, "contacts-import")
    with tenant_context(tenant.org):
        assert Contact.objects.count() == 117
        assert Contact.objects.get(email="person1@example.com").custom_fields == {
            "plan": "gold"}

    # Export some of the imported contacts, follow the job, download the file.
    page.goto("/dashboard/contacts/export")
    page.fill("#export-q", "email:person1*")
    page.fill("#export-filename", "people-1")
    page.click("#export-form button[type=submit]")
    page.wait_for_url(re.compile(r".*/dashboard/contacts/exports/exp_\w+$"))
    export = ExportJob.objects.dangerously_unscoped().get()
    assert page.locator("#export-progress").get_attribute("data-status") == "queued"
    with tenant_context(tenant.org):
        exports.export_job_run(organization=tenant.org, job_id=export.pk)
    page.wait_for_selector("#export-download")
    shot(page, "contacts-export")
    with page.expect_download() as download:
        page.click("#export-download")
    assert download.value.suggested_filename == "people-1.csv"
    body = Path(download.value.path()).read_text(encoding="utf-8")
    # person1, person10-19 and person100-119, less the refused person120: 31 rows.
    assert body.count("@example.com") == 31
    assert "person2@example.com" not in body

    # A viewer of the same organization: no write control anywhere on the screen.
    viewer = add_member(tenant, "viewer", email="viewer@example.com")
    page = page_as(viewer, tenant.org, "/dashboard/contacts/?q=person1%40example.com")
    assert page.locator("#contacts-table tbody tr").count() == 1
    assert page.locator("#new-contact-form").count() == 0
    page.click("text=Person1 Imported")
    assert page.locator("#contact-fields").is_visible()
    assert page.locator("#contact-edit-form, #add-to-list-form").count() == 0
    page.goto("/dashboard/contacts/import")
    assert page.locator("#import-upload-form").count() == 0
    assert page.locator("#imports-table tbody tr").count() == 1  # may follow imports
    page.goto("/dashboard/contacts/export")
    assert page.locator("#export-not-allowed").is_visible()
