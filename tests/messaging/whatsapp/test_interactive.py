"""send-interactive: buttons or list, the limits (422 naming the field), the 24-hour window,
and the taps coming back through the inbound webhook into the conversation."""

from __future__ import annotations

import pytest

from .conftest import (
    USER,
    code,
    data,
    inbound,
    messages,
    post_webhook,
    wa_message,
    with_app_secret,
)

pytestmark = pytest.mark.django_db

PATH = "/api/v1/whatsapp/messages/send-interactive"
BUTTONS = {"buttons": [{"id": "yes", "title": "Yes"}, {"id": "no", "title": "No"}]}


def _list(sections: int = 1, rows: int = 2) -> dict:
    return {"button": "Choose", "sections": [
        {"title": f"Section {s}", "rows": [{"id": f"r{s}-{r}", "title": f"Row {r}"}
                                           for r in range(rows)]} for s in range(sections)]}


def test_buttons_go_through_the_pipeline(wa):
    inbound(wa)
    response = wa.client().post(PATH, {"to": USER, "body": "Confirm?", "action": BUTTONS,
                                       "footer": "Reply below"}, format="json")
    assert response.status_code == 202, response.content
    sent = data(response)
    assert (sent["channel"], sent["to"], sent["status"]) == ("whatsapp", USER, "queued")
    (message,) = messages(wa, pk=sent["message_id"])
    assert message.body == "Confirm?"
    assert message.metadata["whatsapp"]["interactive"] == {
        "type": "button", "body": {"text": "Confirm?"}, "footer": {"text": "Reply below"},
        "action": {"buttons": [{"type": "reply", "reply": {"id": "yes", "title": "Yes"}},
                               {"type": "reply", "reply": {"id": "no", "title": "No"}}]}}
    # The message is an ordinary message of the messaging API.
    read = wa.client().get(f"/api/v1/messages/{sent['message_id']}")
    assert read.status_code == 200


def test_list_of_ten_sections_of_ten_rows(wa):
    inbound(wa)
    response = wa.client().post(PATH, {"to": USER, "body": "Menu", "action": _list(10, 10)},
                                format="json")
    assert response.status_code == 202, response.content
    (message,) = messages(wa, pk=data(response)["message_id"])
    content = message.metadata["whatsapp"]["interactive"]
    assert content["type"] == "list"
    assert len(content["action"]["sections"]) == 10
    assert content["action"]["button"] == "Choose"


@pytest.mark.parametrize(("action", "field"), [
    ({"buttons": [{"id": str(i), "title": f"B{i}"} for i in range(4)]}, "action.buttons"),
    ({"buttons": []}, "action.buttons"),
    ({"buttons": [{"id": "a", "title": "x" * 21}]}, "action.buttons[0].title"),
    ({"buttons": [{"title": "no id"}]}, "action.buttons[0].id"),
    ({"buttons": [{"id": "a", "title": "A"}, {"id": "a", "title": "B"}]},
     "action.buttons[1].id"),
    (_list(11, 1), "action.sections"),
    (_list(1, 11), "action.sections[0].rows"),
    ({"button": "Choose", "sections": [{"title": "S", "rows": [{"id": "1", "title": "x" * 25}]}]},
     "action.sections[0].rows[0].title"),
    ({"sections": [{"rows": [{"id": "1", "title": "A"}]}]}, "action.button"),
    ({**BUTTONS, **_list()}, "action"),
    ({}, "action"),
    ("buttons", "action"),
])
def test_limits_answer_422_naming_the_field(wa, action, field):
    inbound(wa)
    response = wa.client().post(PATH, {"to": USER, "body": "x", "action": action},
                                format="json")
    assert response.status_code == 422, response.content
    assert code(response) == "VALIDATION_ERROR"
    assert response.json()["error"]["details"]["issues"][0]["field"] == field
    assert messages(wa, direction="outbound") == []


def test_outside_the_window_is_refused(wa):
    response = wa.client().post(PATH, {"to": USER, "body": "x", "action": BUTTONS},
                                format="json")
    assert response.status_code == 422
    assert code(response) == "WHATSAPP_OUTSIDE_WINDOW"
    assert messages(wa, direction="outbound") == []
    bad_to = wa.client().post(PATH, {"to": "not a number", "body": "x", "action": BUTTONS},
                              format="json")
    assert bad_to.status_code == 422


def test_taps_return_on_the_inbound_webhook_into_the_conversation(wa, anon):
    with_app_secret(wa)
    inbound(wa)
    tap = wa_message({"id": "wamid.TAP1", "type": "interactive", "interactive": {
        "type": "button_reply", "button_reply": {"id": "yes", "title": "Yes"}}})
    response = post_webhook(anon, wa, "messages", tap)
    assert response.status_code == 200, response.content
    assert data(response)["received"] == 1
    pick = wa_message({"id": "wamid.TAP2", "type": "interactive", "interactive": {
        "type": "list_reply", "list_reply": {"id": "r0-1", "title": "Row 1",
                                             "description": "Second"}}})
    assert post_webhook(anon, wa, "messages", pick).status_code == 200
    first, button, row = messages(wa, direction="inbound")
    assert button.body == "Yes"
    assert button.metadata["interactive_reply"] == {"type": "button_reply", "id": "yes",
                                                    "title": "Yes"}
    assert row.metadata["interactive_reply"]["id"] == "r0-1"
    # The same thread as the user's first message.
    assert button.conversation_id is not None
    assert button.conversation_id == first.conversation_id == row.conversation_id
