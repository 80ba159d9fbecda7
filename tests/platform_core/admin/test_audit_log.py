"""The audit log in the console is read-only, superusers included."""

from __future__ import annotations

from platform_core.audit.models import AuditLogEntry

from .conftest import ADMIN

LOG = f"{ADMIN}/auditlogentry/"


def test_entries_are_listed_without_an_add_button(console, tenant):
    response = console.get(LOG)
    assert response.status_code == 200
    html = response.content.decode()
    assert "organization.created" in html
    assert f"{LOG}add/" not in html
    assert "delete_selected" not in html
    assert console.get(f"{LOG}add/").status_code == 403


def test_entry_page_is_read_only_and_change_post_is_refused(console, tenant):
    entry = AuditLogEntry.objects.get(action="organization.created", organization=tenant.org)
    response = console.get(f"{LOG}{entry.pk}/change/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'name="action"' not in html
    assert 'value="Save"' not in html

    response = console.post(f"{LOG}{entry.pk}/change/",
                            {"action": "forged", "actor_type": "system", "metadata": "{}"})
    assert response.status_code == 403
    entry.refresh_from_db()
    assert entry.action == "organization.created"


def test_entries_cannot_be_deleted(console, tenant):
    entry = AuditLogEntry.objects.get(action="organization.created", organization=tenant.org)
    assert console.get(f"{LOG}{entry.pk}/delete/").status_code == 403
    assert console.post(f"{LOG}{entry.pk}/delete/", {"post": "yes"}).status_code == 403
    console.post(LOG, {"action": "delete_selected", "_selected_action": [entry.pk], "post": "yes"})
    assert AuditLogEntry.objects.filter(pk=entry.pk).exists()


def test_filters_by_actor_type(console, tenant):
    response = console.get(LOG, {"actor_type": "user"})
    assert response.status_code == 200
    assert all(row.actor_type == "user" for row in response.context["cl"].result_list)
