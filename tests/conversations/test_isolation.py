"""Another organization's credentials cannot act on a conversation: every verb answers
404 NOT_FOUND exactly like an unknown id, and nothing changes."""

from __future__ import annotations

import pytest

from conversations.models import Conversation

pytestmark = pytest.mark.django_db

VERBS = [
    ("post", "/close", {}), ("post", "/reopen", {}), ("post", "/escalate", {}),
    ("post", "/snooze", {"until": "2099-01-01T00:00:00Z"}), ("post", "/read", {}),
    ("post", "/assign", {"agent_id": None}), ("post", "/messages", {"body": "x"}),
    ("post", "/handoff", {}), ("post", "/handoff/resolve", {}), ("post", "/agent/resume", {}),
    ("post", "/assignment/accept", {}), ("post", "/assignment/decline", {}),
    ("post", "/resume-channel", {"channel": "sms"}), ("put", "/tags", {"tags": ["x"]}),
    ("put", "/priority", {"priority": "high"}),
    ("post", "/side-conversations", {"external_participants": [{"label": "x",
                                                               "email": "x@example.com"}]}),
]


def test_other_tenant_cannot_act_on_a_conversation(tenant, other_tenant, inbound):
    cid = inbound("hello")["conversation_id"]
    before = tenant.client().get(f"/api/v1/conversations/{cid}").json()["data"]
    intruder = other_tenant.client()
    for method, suffix, body in VERBS:
        response = getattr(intruder, method)(f"/api/v1/conversations/{cid}{suffix}", body,
                                             format="json")
        unknown = getattr(intruder, method)(f"/api/v1/conversations/cnv_nope{suffix}", body,
                                            format="json")
        assert response.status_code == 404, (suffix, response.content)
        got, expected = response.json()["error"], unknown.json()["error"]
        assert (got["code"], got["message"]) == (expected["code"], expected["message"])
    merge = intruder.post(f"/api/v1/conversations/{cid}/merge",
                          {"source_conversation_id": cid}, format="json")
    assert merge.status_code in (404, 422)
    bulk = intruder.post("/api/v1/conversations/bulk", {"action": "close",
                                                        "conversation_ids": [cid]},
                         format="json")
    assert bulk.json()["data"]["results"][0]["error"]["code"] == "NOT_FOUND"
    after = tenant.client().get(f"/api/v1/conversations/{cid}").json()["data"]
    assert after == before
    assert Conversation.objects.for_organization(tenant.org).get(pk=cid).status == "open"
