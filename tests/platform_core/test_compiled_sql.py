"""platform_core/compiled_sql.py: ORM queries compiled once with named slots."""

from __future__ import annotations

import pytest
from django.db import connection

from contacts.models import Contact
from platform_core.compiled_sql import CompiledSQL, compile_query, placeholder, slot

pytestmark = pytest.mark.django_db


def _run(statement: CompiledSQL, **values) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(statement.sql, statement.params(values))
        return cursor.fetchall()


def _contact(tenant, **fields) -> Contact:
    return Contact.objects.for_organization(tenant.org).create(organization=tenant.org,
                                                              **fields)


def test_slots_are_filled_and_simple_constants_inlined(tenant, other_tenant):
    ana = _contact(tenant, phone="+14155550101", first_name="Ana")
    _contact(tenant, phone="", first_name="Nobody")
    _contact(other_tenant, phone="+14155550101", first_name="Elsewhere")
    rows = (Contact._base_manager.filter(organization_id=slot("org"), phone=slot("phone"))
            .exclude(phone="").values("pk"))
    statement = compile_query(rows, using="default", expected={"org", "phone"})
    assert '"contacts_contact"."phone" = \'\'' in statement.sql  # written, not bound
    assert [name for name, _ in statement.template] == ["org", "phone"]
    assert _run(statement, org=tenant.org.pk, phone="+14155550101") == [(ana.pk,)]
    assert _run(statement, org=tenant.org.pk, phone="+14155550199") == []


@pytest.mark.parametrize("last_name", ["O'Brien", "100%"])
def test_constants_that_need_escaping_stay_bound(tenant, last_name):
    wanted = _contact(tenant, phone="+14155550102", last_name=last_name)
    _contact(tenant, phone="+14155550103", last_name="Other")
    rows = Contact._base_manager.filter(organization_id=slot("org"), last_name=last_name)
    statement = compile_query(rows.values("pk"), using="default", expected={"org"})
    assert last_name not in statement.sql
    assert (None, last_name) in statement.template
    assert _run(statement, org=tenant.org.pk) == [(wanted.pk,)]


def test_a_slot_the_orm_rewrote_is_refused():
    rows = Contact._base_manager.filter(first_name__icontains=slot("name"))  # '%…%' added
    with pytest.raises(ValueError, match="slots"):
        compile_query(rows, using="default", expected={"name"})


def test_join_concatenates_sql_and_parameters(tenant):
    ana = _contact(tenant, phone="+14155550104")
    inner = compile_query(Contact._base_manager.filter(organization_id=slot("org"))
                          .values("pk"), using="default", expected={"org"})
    statement = CompiledSQL.join(["SELECT ", placeholder("label"), ", (", inner, ")"])
    assert statement.template == (("label", None), ("org", None))
    assert _run(statement, label="x", org=tenant.org.pk) == [("x", ana.pk)]
