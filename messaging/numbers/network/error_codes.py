"""Error codes of the network-signal checks (Document 3, 4.8)."""

from platform_core.errors import register

_APP = "network_apis"

register("CARRIER_BILLING_AMOUNT_ABOVE_CAP", 422,
         "The amount is above this deployment's carrier-billing cap.", app=_APP)
register("NETWORK_SIGNAL_UNAVAILABLE", 422,
         "The operator could not answer this check for this number.", app=_APP)
