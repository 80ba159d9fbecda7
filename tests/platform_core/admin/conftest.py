"""The operator console under the Django test client: a staff superuser and helpers."""

from __future__ import annotations

import pytest
from django import forms
from django.test import Client

from platform_core.identity.models import User
from platform_core.tenancy.models import Role

OPERATOR_PASSWORD = "Operator-Horse-4-battery"
ADMIN = "/admin/platform_core"


@pytest.fixture
def operator(db) -> User:
    return User.objects.create_superuser("operator@example.com", OPERATOR_PASSWORD)


@pytest.fixture
def console(operator) -> Client:
    client = Client()
    client.force_login(operator)
    return client


def add_member(tenant, role: str = Role.VIEWER, *, email: str | None = None):
    from platform_core.tenancy.models import Membership

    user = User.objects.create_user(email or f"{role}-{User.objects.count()}@example.com",
                                    "Member-Horse-5-battery")
    return Membership.objects.for_organization(tenant.org).create(
        organization=tenant.org, user=user, role=role
    )


def form_data(response) -> dict:
    """POST data re-submitting a change page as rendered: main form plus inline formsets."""
    data: dict = {}
    all_forms = [response.context["adminform"].form]
    for inline in response.context["inline_admin_formsets"]:
        formset = inline.formset
        management = formset.management_form
        for name in management.fields:
            data[management.add_prefix(name)] = management[name].value()
        all_forms.extend(formset.forms)
    for form in all_forms:
        for name, field in form.fields.items():
            value = form[name].value()
            key = form.add_prefix(name)
            if isinstance(field, forms.BooleanField):
                if value:
                    data[key] = "on"
            elif isinstance(value, list | tuple):
                data[key] = [str(v) for v in value]
            elif value is not None:
                data[key] = value
    return data


def inline_prefix(response, index: int = 0) -> str:
    return response.context["inline_admin_formsets"][index].formset.prefix
