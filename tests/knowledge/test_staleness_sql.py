"""The scorecard statement itself over rows written directly, so it also runs on the
embedded SQLite default (`DATABASE_URL=sqlite:///... pytest tests/knowledge/
test_staleness_sql.py` checks the SQLite age expression; indexing needs PostgreSQL)."""

import datetime as dt

import pytest
import time_machine

from knowledge import staleness
from knowledge.models import Document, KnowledgeBase
from platform_core.tenancy.context import tenant_context

pytestmark = pytest.mark.django_db
T0 = dt.datetime(2026, 1, 1, 12, tzinfo=dt.UTC)


def test_scorecard_statement(tenant):
    with tenant_context(tenant.org):
        kb = KnowledgeBase.objects.create(organization=tenant.org, name="x")
        with time_machine.travel(T0, tick=False):
            docs = [Document.objects.create(organization=tenant.org, knowledge_base=kb,
                                            name=f"d{n}", type="txt", content="x")
                    for n in range(4)]
        Document.objects.filter(pk=docs[0].pk).update(last_verified_at=T0 + dt.timedelta(days=90))
        Document.objects.filter(pk=docs[1].pk).update(staleness_threshold_days=500)
        with time_machine.travel(T0 + dt.timedelta(days=100), tick=False):
            card = staleness.scorecard(knowledge_base=kb, default_threshold_days=10)
            empty = staleness.scorecard(knowledge_base=KnowledgeBase.objects.create(
                organization=tenant.org, name="y"))
    assert card["totals"] == {"fresh": 1, "stale": 1, "critical": 2, "documents_scanned": 4,
                              "never_verified": 3}
    assert [i["age_days"] for i in card["attention_required"]] == [100, 100, 10]
    assert card["attention_required"][2]["bucket"] == "stale"
    assert isinstance(card["attention_required"][0]["updated_at"], dt.datetime)
    assert empty["totals"]["documents_scanned"] == 0
