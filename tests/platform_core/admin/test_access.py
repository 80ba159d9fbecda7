"""Only staff reach the console; tenant users, however senior, are sent to its login."""

from __future__ import annotations

import pytest
from django.test import Client

from .conftest import ADMIN

PAGES = ["/admin/", f"{ADMIN}/organization/", f"{ADMIN}/user/", f"{ADMIN}/membership/",
         f"{ADMIN}/apikey/", f"{ADMIN}/usersession/", f"{ADMIN}/auditlogentry/"]


@pytest.mark.parametrize("url", PAGES)
def test_anonymous_is_sent_to_login(db, url):
    response = Client().get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


@pytest.mark.parametrize("url", PAGES)
def test_non_staff_tenant_owner_is_refused(tenant, url):
    assert not tenant.owner.is_staff
    client = Client()
    client.force_login(tenant.owner)
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_non_staff_cannot_log_in_through_the_console_form(tenant):
    client = Client()
    response = client.post("/admin/login/", {"username": tenant.owner.email,
                                             "password": tenant.password})
    assert response.status_code == 200  # the form again, with an error
    assert client.get(f"{ADMIN}/apikey/").status_code == 302


def test_staff_without_permissions_sees_no_model_page(tenant):
    tenant.owner.is_staff = True
    tenant.owner.save()
    client = Client()
    client.force_login(tenant.owner)
    assert client.get("/admin/").status_code == 200
    assert client.get(f"{ADMIN}/apikey/").status_code == 403


def test_operator_logs_in_by_email(operator):
    from .conftest import OPERATOR_PASSWORD

    client = Client()
    response = client.post("/admin/login/?next=/admin/",
                           {"username": "operator@example.com", "password": OPERATOR_PASSWORD})
    assert response.status_code == 302, response.content
    assert client.get("/admin/").status_code == 200
