"""Agent templates by name: list, create, read, replace, delete; names unique per agent;
the carrier review (test mode: the double's decision right after the request)."""

from __future__ import annotations

import pytest

from .conftest import error, events, ok

pytestmark = pytest.mark.django_db

CONTENT = {"body": "Your order {{1}} is ready", "language": "en",
           "suggestions": [{"type": "reply", "text": "Thanks", "postback_data": "thanks"},
                           {"type": "url", "text": "Track", "url": "https://acme.example/t"},
                           {"type": "dial", "text": "Call us", "phone": "+14155550100"}]}


def test_template_lifecycle(api, agent, tenant):
    bot = agent()
    base = f"/bots/{bot['id']}/templates"
    created = ok(api("POST", base, {"name": "order_ready", **CONTENT}), 201)
    assert (created["status"], created["bot_id"]) == ("pending", bot["id"])
    assert created["suggestions"][1]["url"] == "https://acme.example/t"
    read = ok(api("GET", f"{base}/order_ready"))
    assert read["status"] == "approved"
    assert [t["name"] for t in ok(api("GET", base))] == ["order_ready"]
    replaced = ok(api("PUT", f"{base}/order_ready", {"body": "Ready: {{1}}"}))
    assert (replaced["status"], replaced["body"], replaced["suggestions"]) == (
        "pending", "Ready: {{1}}", [])
    assert ok(api("GET", f"{base}/order_ready"))["status"] == "approved"
    assert api("DELETE", f"{base}/order_ready").status_code == 204
    error(api("GET", f"{base}/order_ready"), 404, "NOT_FOUND")
    assert [e.type for e in events(tenant, "rcs.template")] == [
        "rcs.template.submitted", "rcs.template.approved", "rcs.template.submitted",
        "rcs.template.approved"]


def test_rejected_by_the_double(api, agent, tenant):
    bot = agent()
    ok(api("POST", f"/bots/{bot['id']}/templates", {"name": "reject_promo", "body": "x"}), 201)
    read = ok(api("GET", f"/bots/{bot['id']}/templates/reject_promo"))
    assert read["status"] == "rejected"
    assert read["rejection_reason"]
    assert events(tenant, "rcs.template.rejected")[0].data["name"] == "reject_promo"


def test_names_unique_per_agent(api, agent, brand):
    brand_id = brand()["id"]
    first, second = agent("One", brand_id=brand_id), agent("Two", brand_id=brand_id)
    ok(api("POST", f"/bots/{first['id']}/templates", {"name": "hello", "body": "Hi"}), 201)
    error(api("POST", f"/bots/{first['id']}/templates", {"name": "hello", "body": "Hi"}), 409,
          "ALREADY_EXISTS")
    ok(api("POST", f"/bots/{second['id']}/templates", {"name": "hello", "body": "Hi"}), 201)


@pytest.mark.parametrize(("body", "field"), [
    ({"name": "Bad Name", "body": "x"}, "name"),
    ({"name": "x" * 65, "body": "x"}, "name"),
    ({"name": "ok"}, "body"),
    ({"name": "ok", "body": "x" * 2001}, "body"),
    ({"name": "ok", "media_url": "ftp://x.example/a.png"}, "media_url"),
    ({"name": "ok", "body": "x", "suggestions": [{"type": "url", "text": "Go"}]}, "url"),
    ({"name": "ok", "body": "x", "suggestions": [{"type": "reply", "text": "x" * 26}]}, "text"),
    ({"name": "ok", "body": "x", "suggestions": [{"type": "reply", "text": "a"}] * 12},
     "suggestions"),
    ({"name": "ok", "body": "x", "suggestions": [{"type": "buy", "text": "a"}]}, "type"),
])
def test_template_validation(api, agent, body, field):
    bot = agent()
    err = error(api("POST", f"/bots/{bot['id']}/templates", body), 422, "VALIDATION_ERROR")
    assert field in str(err["details"])


def test_unknown_agent_and_template(api, agent):
    error(api("GET", "/bots/rbt_nope/templates"), 404, "NOT_FOUND")
    error(api("POST", "/bots/rbt_nope/templates", {"name": "a", "body": "b"}), 404, "NOT_FOUND")
    bot = agent()
    error(api("PUT", f"/bots/{bot['id']}/templates/nope", {"body": "b"}), 404, "NOT_FOUND")
    error(api("DELETE", f"/bots/{bot['id']}/templates/nope"), 404, "NOT_FOUND")


def test_list_without_n_plus_one(api, agent, django_assert_max_num_queries):
    bot = agent()
    for i in range(5):
        ok(api("POST", f"/bots/{bot['id']}/templates", {"name": f"t{i}", "body": "x"}), 201)
    with django_assert_max_num_queries(12):
        assert len(ok(api("GET", f"/bots/{bot['id']}/templates?limit=50"))) == 5
