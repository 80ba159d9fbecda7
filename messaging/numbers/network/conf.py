"""Operator gateway settings (Django settings first, else the environment).

| Name (default) | Meaning |
|---|---|
| `NETWORK_APIS_BASE_URL` | the operator's CAMARA gateway, e.g. `https://api.operator.example/camara` |
| `NETWORK_APIS_TOKEN_URL` | its OAuth 2.0 token endpoint (client credentials grant) |
| `NETWORK_APIS_CLIENT_ID` / `NETWORK_APIS_CLIENT_SECRET` | the application's credentials |
| `NETWORK_APIS_SCOPE` (empty) | scope asked with the token, when the gateway wants one |
| `NETWORK_APIS_CARRIER_BILLING_MAX_AMOUNT` (100) | server cap of one charge, major units |

Live mode without the base URL, token URL, client id and secret: every endpoint answers
503 SERVICE_UNAVAILABLE and `GET /status` `{enabled: false}`.
"""

from __future__ import annotations

import os
from decimal import Decimal
from typing import Any

from django.conf import settings


def setting(name: str, default: Any = None) -> Any:
    value = getattr(settings, name, None)
    if value is None:
        value = os.environ.get(name)
    return default if value in (None, "") else value


def configured() -> bool:
    return all(setting(n) for n in ("NETWORK_APIS_BASE_URL", "NETWORK_APIS_TOKEN_URL",
                                     "NETWORK_APIS_CLIENT_ID", "NETWORK_APIS_CLIENT_SECRET"))


def billing_cap() -> Decimal:
    return Decimal(str(setting("NETWORK_APIS_CARRIER_BILLING_MAX_AMOUNT", "100")))
