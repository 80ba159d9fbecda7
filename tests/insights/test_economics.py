"""Cost economics: per message, per minute and per 1,000 tokens, defaults and config."""

from __future__ import annotations

from tests.insights.conftest import at, data, get, message, recording, usage

WINDOW = {"from": "2026-03-01T00:00:00Z", "to": "2026-03-11T00:00:00Z"}
CONFIG = "/api/v1/insights/cost-economics/config"


def _seed(org):
    for status in ("delivered", "sent", "undelivered", "failed", "queued", "canceled"):
        message(org, at("2026-03-02T10:00:00Z"), status=status)
    message(org, at("2026-03-02T10:00:00Z"), status="received", direction="inbound")
    message(org, at("2026-03-03T10:00:00Z"), channel="whatsapp", status="delivered")
    message(org, at("2026-03-03T10:00:00Z"), channel="email", status="delivered")
    message(org, at("2026-04-03T10:00:00Z"), status="delivered")  # outside
    recording(org, at("2026-03-02T10:00:00Z"), seconds=61)  # 2 minutes
    recording(org, at("2026-03-02T11:00:00Z"), seconds=60)  # 1
    recording(org, at("2026-03-02T12:00:00Z"), seconds=None)  # 0
    recording(org, at("2026-03-02T12:00:00Z"), kind="video", seconds=125)  # 3
    usage(org, at("2026-03-02T10:00:00Z"), cost=1, tokens=1500)
    usage(org, at("2026-03-04T10:00:00Z"), cost=1, tokens=1001)


def test_platform_defaults(tenant):
    _seed(tenant.org)
    body = data(get(tenant.client(), "cost-economics", **WINDOW))
    channels = {c["channel"]: c for c in body["channels"]}
    assert channels["sms"] == {"channel": "sms", "unit": "message", "volume": 4,
                               "rate_cents": 1, "cost_cents": 4, "per_unit_cost_cents": 1.0}
    assert (channels["whatsapp"]["volume"], channels["whatsapp"]["cost_cents"]) == (1, 1)
    assert (channels["voice"]["volume"], channels["voice"]["cost_cents"]) == (3, 6)
    assert (channels["video"]["volume"], channels["video"]["cost_cents"]) == (3, 3)
    # 2,501 tokens at 1 cent per 1,000 = 2.501 cents, rounded half up to 3.
    assert (channels["ai"]["volume"], channels["ai"]["cost_cents"]) == (2501, 3)
    assert channels["ai"]["per_unit_cost_cents"] == 1.2  # per 1,000 tokens: 3 / 2.501
    assert body["totals"] == {"cost_cents": 4 + 1 + 6 + 3 + 3, "message_volume": 5,
                              "voice_minutes": 3, "video_minutes": 3, "ai_tokens": 2501}
    assert body["config"]["sms_per_message_cents"] is None
    assert body["rates"]["sms_per_message_cents"] == {"cents": 1, "source": "default",
                                                      "default_cents": 1}


def test_no_usage_is_null_per_unit(tenant):
    body = data(get(tenant.client(), "cost-economics", **WINDOW))
    assert all(c["per_unit_cost_cents"] is None and c["cost_cents"] == 0
               for c in body["channels"])


def test_config_merge_and_null_reset(tenant):
    _seed(tenant.org)
    client = tenant.client()
    body = data(client.put(CONFIG, {"sms_per_message_cents": 5, "voice_per_minute_cents": 0},
                           format="json"))
    assert body["rates"]["sms_per_message_cents"] == {"cents": 5, "source": "configured",
                                                      "default_cents": 1}
    body = data(client.put(CONFIG, {"ai_per_1000_tokens_cents": 100_000_000_000},
                           format="json"))
    assert body["config"]["sms_per_message_cents"] == 5  # kept
    report = data(get(client, "cost-economics", **WINDOW))
    channels = {c["channel"]: c for c in report["channels"]}
    assert channels["sms"]["cost_cents"] == 20
    assert channels["voice"]["cost_cents"] == 0
    assert channels["ai"]["cost_cents"] == 250_100_000_000
    body = data(client.put(CONFIG, {"sms_per_message_cents": None}, format="json"))
    assert body["config"]["sms_per_message_cents"] is None
    assert body["rates"]["sms_per_message_cents"]["source"] == "default"
    for bad in ({"sms_per_message_cents": -1}, {"sms_per_message_cents": 100_000_000_001},
                {"sms_per_message_cents": "3"}, {"fax_per_page_cents": 1}):
        response = client.put(CONFIG, bad, format="json")
        assert response.status_code == 422, bad
        assert response.json()["error"]["details"]["issues"][0]["field"] == next(iter(bad))
    assert data(client.get(CONFIG))["config"]["voice_per_minute_cents"] == 0
