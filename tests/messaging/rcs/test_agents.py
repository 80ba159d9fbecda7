"""Agents (`/bots`): create, list, profile update (`PUT /bots`), read, delete, verify and
launch, quality (2.8), test devices and tester invites (test mode)."""

from __future__ import annotations

import pytest

from .conftest import error, events, ok

pytestmark = pytest.mark.django_db

QUALITY_FIELDS = {"bot_id", "display_name", "brand_name", "status", "verification_status",
                  "launched", "carrier_statuses", "carriers_launched", "carriers_total"}


def test_create_list_read_update_delete(api, agent, tenant):
    bot = agent("Acme Bot", description="Coffee orders", color="#112233", use_case="PROMOTIONAL")
    assert bot["id"].startswith("rbt_")
    assert (bot["status"], bot["verification_status"], bot["launched"]) == (
        "draft", "unverified", False)
    assert [b["id"] for b in ok(api("GET", "/bots"))] == [bot["id"]]
    assert ok(api("GET", f"/bots/{bot['id']}"))["color"] == "#112233"
    updated = ok(api("PUT", "/bots", {"id": bot["id"], "display_name": "Acme Orders",
                                      "website": "https://acme.example/orders"}))
    assert (updated["display_name"], updated["website"], updated["description"]) == (
        "Acme Orders", "https://acme.example/orders", "Coffee orders")
    by_alias = ok(api("PUT", "/bots", {"bot_id": bot["id"], "color": "#AABBCC"}))
    assert by_alias["color"] == "#AABBCC"
    assert api("DELETE", f"/bots/{bot['id']}").status_code == 204
    error(api("GET", f"/bots/{bot['id']}"), 404, "NOT_FOUND")
    assert [e.type for e in events(tenant, "rcs.agent")] == [
        "rcs.agent.created", "rcs.agent.updated", "rcs.agent.updated", "rcs.agent.deleted"]


@pytest.mark.parametrize(("body", "field"), [
    ({"brand_id": None}, "brand_id"),
    ({"brand_id": "rbr_nope", "display_name": "A"}, "brand_id"),
    ({"display_name": ""}, "display_name"),
    ({"color": "red"}, "color"),
    ({"phone": "4155550123"}, "phone"),
    ({"logo_url": "http://x.example/a.png"}, "logo_url"),
    ({"use_case": "SPAM"}, "use_case"),
    ({"carriers": "t-mobile"}, "carriers"),
])
def test_create_validation(api, brand, body, field):
    brand_id = brand()["id"]
    payload = {"brand_id": brand_id, "display_name": "Bot", **body}
    err = error(api("POST", "/bots", payload), 422, "VALIDATION_ERROR")
    assert field in str(err["details"])


def test_put_needs_an_agent_of_the_account(api, agent, other_tenant):
    error(api("PUT", "/bots", {"display_name": "X"}), 422, "VALIDATION_ERROR")
    error(api("PUT", "/bots", {"id": "rbt_missing", "display_name": "X"}), 404, "NOT_FOUND")
    bot = agent()
    error(api("PUT", "/bots", {"id": bot["id"], "display_name": "X"},
              client=other_tenant.client()), 404, "NOT_FOUND")


def test_verify_and_launch_then_quality(api, agent, brand, tenant):
    brand_row = brand()
    bot = agent(brand_id=brand_row["id"], carriers=["T-Mobile", "Verizon pending"])
    error(api("POST", f"/bots/{bot['id']}/verify"), 409, "RCS_AGENT_NOT_VERIFIABLE")  # draft
    ok(api("POST", f"/brands/{brand_row['id']}/submit"))
    verified = ok(api("POST", f"/bots/{bot['id']}/verify"))
    assert verified["verification_status"] == "pending"
    quality = ok(api("GET", f"/bots/{bot['id']}/quality"))
    assert set(quality) == QUALITY_FIELDS
    assert quality == {
        "bot_id": bot["id"], "display_name": "Acme Bot", "brand_name": "Acme Coffee",
        "status": "launched", "verification_status": "verified", "launched": True,
        "carrier_statuses": {"T-Mobile": {"status": "LAUNCHED"},
                             "Verizon pending": {"status": "PENDING"}},
        "carriers_launched": 1, "carriers_total": 2}
    types = [e.type for e in events(tenant, "rcs.agent")]
    assert types[-3:] == ["rcs.agent.verification_submitted", "rcs.agent.verified",
                          "rcs.agent.launched"]
    error(api("POST", f"/bots/{bot['id']}/verify"), 409, "RCS_AGENT_NOT_VERIFIABLE")


def test_rejected_agent_is_not_launched(api, agent, brand):
    brand_row = brand()
    ok(api("POST", f"/brands/{brand_row['id']}/submit"))
    bot = agent("Reject Bot", brand_id=brand_row["id"])
    ok(api("POST", f"/bots/{bot['id']}/verify"))
    quality = ok(api("GET", f"/bots/{bot['id']}/quality"))
    assert (quality["verification_status"], quality["launched"], quality["status"]) == (
        "rejected", False, "draft")
    assert quality["carriers_total"] == 0


def test_verified_without_launch_is_not_launched(api, agent, brand):
    brand_row = brand()
    ok(api("POST", f"/brands/{brand_row['id']}/submit"))
    bot = agent(brand_id=brand_row["id"], carriers=["reject-carrier"])
    ok(api("POST", f"/bots/{bot['id']}/verify"))
    quality = ok(api("GET", f"/bots/{bot['id']}/quality"))
    assert (quality["status"], quality["launched"], quality["carriers_launched"]) == (
        "verified", False, 0)
    assert quality["carrier_statuses"] == {"reject-carrier": {"status": "REJECTED"}}


def test_quality_404_outside_the_account(api, agent, other_tenant):
    bot = agent()
    error(api("GET", "/bots/rbt_nope/quality"), 404, "NOT_FOUND")
    error(api("GET", f"/bots/{bot['id']}/quality", client=other_tenant.client()), 404,
          "NOT_FOUND")


def test_devices_add_list_remove(api, agent, tenant):
    bot = agent()
    added = ok(api("POST", f"/bots/{bot['id']}/devices", {"phone": "+14155550123"}), 201)
    assert (added["phone"], added["status"], added["bot_id"]) == (
        "+14155550123", "invited", bot["id"])
    again = api("POST", f"/bots/{bot['id']}/devices", {"phone": "+14155550123"})
    assert again.status_code == 200  # invited again, still one device
    ok(api("POST", f"/bots/{bot['id']}/devices", {"phone": "+14155550124"}), 201)
    listed = ok(api("GET", f"/bots/{bot['id']}/devices"))
    assert sorted(d["phone"] for d in listed) == ["+14155550123", "+14155550124"]
    assert api("DELETE", f"/bots/{bot['id']}/devices?phone=%2B14155550123").status_code == 204
    assert api("DELETE", f"/bots/{bot['id']}/devices",
               {"phone": "+14155550124"}).status_code == 204
    assert ok(api("GET", f"/bots/{bot['id']}/devices")) == []
    error(api("DELETE", f"/bots/{bot['id']}/devices?phone=%2B14155550124"), 404, "NOT_FOUND")
    error(api("DELETE", f"/bots/{bot['id']}/devices"), 422, "VALIDATION_ERROR")
    assert len(events(tenant, "rcs.tester.invited")) == 3


def test_tester_invite(api, agent):
    bot = agent()
    invited = ok(api("POST", f"/bots/{bot['id']}/tester-invite", {"phone": "+14155550199"}))
    assert (invited["phone"], invited["status"]) == ("+14155550199", "invited")
    assert [d["phone"] for d in ok(api("GET", f"/bots/{bot['id']}/devices"))] == [
        "+14155550199"]
    for phone in ("4155550199", "+1", "", None, 12):
        error(api("POST", f"/bots/{bot['id']}/tester-invite", {"phone": phone}), 422,
              "VALIDATION_ERROR")
    # The rich-channel failure number of test mode is not RCS-capable.
    error(api("POST", f"/bots/{bot['id']}/tester-invite", {"phone": "+15005550011"}), 422,
          "RCS_NOT_CAPABLE")
    error(api("POST", "/bots/rbt_nope/tester-invite", {"phone": "+14155550199"}), 404,
          "NOT_FOUND")


def test_list_without_n_plus_one(api, agent, brand, django_assert_max_num_queries):
    brand_id = brand()["id"]
    for i in range(6):
        agent(f"Bot {i}", brand_id=brand_id)
    with django_assert_max_num_queries(12):
        assert len(ok(api("GET", "/bots?limit=50"))) == 6
