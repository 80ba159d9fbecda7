"""Error codes of the loyalty app (Document 3, 4.5)."""

from platform_core.errors import register

_APP = "loyalty"

register("LOYALTY_INSUFFICIENT_POINTS", 422,
         "The member does not have enough available points for this debit.",
         "A redemption or a debit adjustment larger than the member's available balance; "
         "`details` gives `available` and `requested`. Nothing was debited.", app=_APP)
