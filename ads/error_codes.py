"""Error codes of the ads app (Document 3, 4.9)."""

from platform_core.errors import register

register("CHANNEL_UNAVAILABLE", 400,
         "Connect an ad account first (and, for conversions, set the dataset id).", app="ads")
register("AD_PLATFORM_ERROR", 422,
         "The ad platform refused the request; details carry its error.", app="ads")
