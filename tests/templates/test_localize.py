"""Per-locale variants: `localize` through the translator and the approval path, and the
`localizations` tracker (Document 2, 2.3, 4.3 and 8)."""

from __future__ import annotations

import pytest

from templates import translation
from templates.models import MessageTemplate

from .conftest import BASE, create, decide, error, key_client, sms_body, wa_body, whatsapp_account


def localize(tenant, template_id, locales, client=None):
    return (client or tenant.client()).post(f"{BASE}/{template_id}/localize",
                                            {"locales": locales}, format="json")


def test_localize_creates_pending_variants_with_translated_texts(tenant):
    source = create(tenant, wa_body())
    response = localize(tenant, source["id"], ["fr", "de"])
    assert response.status_code == 201, response.content
    data = response.json()["data"]
    assert (data["template_id"], data["source_language"]) == (source["id"], "en")
    rows = {row["language"]: row for row in data["localizations"]}
    assert set(rows) == {"fr", "de"}
    assert all(row["result"] == "created" and row["status"] == "pending"
               for row in rows.values())
    french = tenant.client().get(f"{BASE}/{rows['fr']['template_id']}").json()["data"]
    assert (french["name"], french["channel"], french["language"], french["status"],
            french["localized_from"]) == ("order_update", "whatsapp", "fr", "pending",
                                          source["id"])
    header, body, footer, buttons = french["components"]
    assert header["text"] == "[fr] Order {{1}}"
    assert body["text"] == "[fr] Hi {{2}}, your order {{1}} ships on {{3}}."
    assert footer["text"] == "[fr] Reply STOP to opt out"
    assert [b["text"] for b in buttons["buttons"]] == ["[fr] Thanks", "[fr] Track"]
    # Non-text parts are kept as they are.
    assert buttons["buttons"][1]["url"] == "https://shop.example/t/{{1}}"
    assert french["placeholder_count"] == 3


def test_each_variant_has_its_own_status(tenant):
    source = create(tenant, wa_body())
    rows = localize(tenant, source["id"], ["fr", "es"]).json()["data"]["localizations"]
    ids = {row["language"]: row["template_id"] for row in rows}
    assert decide(tenant, ids["fr"]).status_code == 200
    assert decide(tenant, ids["es"], "rejected", "Bad translation").status_code == 200
    tracker = tenant.client().get(f"{BASE}/{source['id']}/localizations")
    assert tracker.status_code == 200, tracker.content
    data = tracker.json()["data"]
    assert data["total"] == 3
    assert data["by_status"]["pending"] == 1
    assert data["by_status"]["approved"] == 1
    assert data["by_status"]["rejected"] == 1
    statuses = {row["language"]: (row["template_id"], row["status"], row["rejection_reason"])
                for row in data["localizations"]}
    assert statuses == {"en": (source["id"], "pending", None),
                        "es": (ids["es"], "rejected", "Bad translation"),
                        "fr": (ids["fr"], "approved", None)}
    # The tracker is the same from any variant of the family.
    from_variant = tenant.client().get(f"{BASE}/{ids['fr']}/localizations").json()["data"]
    assert from_variant["localizations"] == data["localizations"]


def test_plain_templates_localize_to_approved_variants(tenant):
    source = create(tenant, sms_body(channel="email", subject="Hello {{1}}"))
    rows = localize(tenant, source["id"], ["pt_BR"]).json()["data"]["localizations"]
    variant = tenant.client().get(f"{BASE}/{rows[0]['template_id']}").json()["data"]
    assert (variant["status"], variant["content"], variant["subject"]) == (
        "approved", "[pt_BR] Hi {{1}}, see you at {{2}}.", "[pt_BR] Hello {{1}}")


def test_existing_locales_are_reported_not_duplicated(tenant):
    source = create(tenant, wa_body())
    first = localize(tenant, source["id"], ["fr"]).json()["data"]["localizations"][0]
    response = localize(tenant, source["id"], ["fr"])
    assert response.status_code == 200  # nothing created
    again = response.json()["data"]["localizations"][0]
    assert (again["result"], again["template_id"]) == ("existing", first["template_id"])
    assert MessageTemplate.objects.for_organization(tenant.org).count() == 2


def test_up_to_25_locales(tenant):
    source = create(tenant, sms_body())
    locales = [f"l{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(26)]
    payload = error(localize(tenant, source["id"], locales), 422, "VALIDATION_ERROR")
    assert payload["details"]["issues"][0]["field"] == "locales"
    response = localize(tenant, source["id"], locales[:25])
    assert response.status_code == 201
    assert len(response.json()["data"]["localizations"]) == 25
    assert MessageTemplate.objects.for_organization(tenant.org).count() == 26


@pytest.mark.parametrize(("locales", "field"), [
    ([], "locales"),
    ("fr", "locales"),
    (["fr", "fr"], "locales.1"),
    (["en"], "locales.0"),
    (["not a locale"], "locales.0"),
])
def test_locales_are_validated(tenant, locales, field):
    source = create(tenant, sms_body())
    payload = error(localize(tenant, source["id"], locales), 422, "VALIDATION_ERROR")
    assert payload["details"]["issues"][0]["field"] == field


def test_a_translation_that_breaks_placeholders_fails_for_that_locale(tenant, monkeypatch):
    source = create(tenant, wa_body())

    def lossy(texts, source_locale, target_locale):
        if target_locale == "de":
            return [t.replace("{{1}}", "") for t in texts]
        return translation.sandbox_translate(texts, source_locale, target_locale)

    # monkeypatch restores the engine the AI app installed at startup (not None: later
    # tests in this worker translate through it)
    monkeypatch.setattr(translation, "_engine", lossy)
    response = localize(tenant, source["id"], ["fr", "de"])
    assert response.status_code == 201
    rows = {row["language"]: row for row in response.json()["data"]["localizations"]}
    assert rows["fr"]["result"] == "created"
    assert rows["de"]["result"] == "failed"
    assert rows["de"]["error"]["code"] == "TRANSLATION_FAILED"
    assert rows["de"]["template_id"] is None


def test_a_translation_over_the_limits_fails_for_that_locale(tenant):
    source = create(tenant, wa_body(components=[
        {"type": "BODY", "text": "Hi"},
        {"type": "BUTTONS", "buttons": [{"type": "QUICK_REPLY", "text": "x" * 24}]}]))
    response = localize(tenant, source["id"], ["fr"])
    row = response.json()["data"]["localizations"][0]
    assert (row["result"], row["error"]["code"]) == ("failed", "VALIDATION_ERROR")
    assert row["error"]["details"]["issues"][0]["field"] == "components.1.buttons.0.text"


def test_localize_needs_write_and_tracker_needs_read(tenant):
    source = create(tenant, wa_body())
    reader = key_client(tenant, ["templates:read"])
    error(localize(tenant, source["id"], ["fr"], client=reader), 403,
          "INSUFFICIENT_PERMISSIONS")
    assert reader.get(f"{BASE}/{source['id']}/localizations").status_code == 200


def test_live_localize_submits_each_variant(live_tenant, graph,
                                            django_capture_on_commit_callbacks):
    whatsapp_account(live_tenant, graph)
    with django_capture_on_commit_callbacks(execute=True):
        source = create(live_tenant, wa_body())
        response = localize(live_tenant, source["id"], ["fr", "es"])
    assert response.status_code == 201, response.content
    submitted = [(r.json["name"], r.json["language"]) for r in graph.requests
                 if r.method == "POST"]
    assert sorted(submitted) == [("order_update", "en"), ("order_update", "es"),
                                 ("order_update", "fr")]
