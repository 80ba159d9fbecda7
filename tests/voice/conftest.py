"""IVR flow tests: a valid flow and a Twilio-signed webhook poster."""

from __future__ import annotations

import copy
from urllib.parse import urlencode

from django.conf import settings
from twilio.request_validator import RequestValidator

TWILIO_TOKEN = "twilio-voice-token-0123456789abcdef"
NUMBER = "+14155550100"

FLOW = {
    "nodes": [
        {"id": "start", "type": "ivrStart", "data": {"greeting": "Welcome to Acme."}},
        {"id": "main", "type": "menu", "data": {
            "prompt": "Press 1 for sales, 2 for support, 9 for voicemail.",
            "menuOptions": [{"key": "1", "label": "Sales"}, {"key": "2", "label": "Support"},
                            {"key": "9", "label": "Voicemail"}]}},
        {"id": "sales", "type": "transfer", "data": {"transferTo": "+14155550199"}},
        {"id": "support", "type": "menu", "data": {
            "prompt": "Press 1 for billing, star to go back.",
            "menuOptions": [{"key": "1", "label": "Billing"}, {"key": "*", "label": "Back"}]}},
        {"id": "billing", "type": "ringGroup", "data": {"members": ["+14155550111", "204"]}},
        {"id": "vm", "type": "voicemail", "data": {"prompt": "Leave a message."}},
        {"id": "bye", "type": "hangup", "data": {"prompt": "Goodbye."}},
    ],
    "edges": [
        {"id": "e1", "source": "start", "target": "main"},
        {"id": "e2", "source": "main", "target": "sales", "sourceHandle": "1"},
        {"id": "e3", "source": "main", "target": "support", "sourceHandle": "2"},
        {"id": "e4", "source": "main", "target": "vm", "sourceHandle": "9"},
        {"id": "e5", "source": "support", "target": "billing", "sourceHandle": "1"},
        {"id": "e6", "source": "support", "target": "main", "sourceHandle": "*"},
        {"id": "e7", "source": "sales", "target": "bye"},
    ],
}


def flow(**changes) -> dict:
    definition = copy.deepcopy(FLOW)
    definition.update(changes)
    return definition


def twilio_post(client, path: str, params: dict, *, token: str = TWILIO_TOKEN):
    url = f"{settings.PUBLIC_BASE_URL}{path}"
    signature = RequestValidator(token).compute_signature(url, params)
    return client.post(path, urlencode(params), content_type="application/x-www-form-urlencoded",
                       HTTP_X_TWILIO_SIGNATURE=signature)
