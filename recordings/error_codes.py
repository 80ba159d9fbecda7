"""Error codes of the recordings app (Document 3, 4.6)."""

from platform_core.errors import register

_APP = "recordings"

register("RECORDING_INTEGRITY_NOT_SEALED", 400,
         "The recording is not sealed; seal it before exporting its digest.", app=_APP)
register("RECORDING_INTEGRITY_MISSING_CONTENT_HASH", 400,
         "No content hash is available: give `content_sha256` or wait until the media is "
         "stored.", app=_APP)
register("RECORDING_INTEGRITY_ALREADY_SEALED", 409,
         "The recording is already sealed; a seal is final.", app=_APP)
register("RECORDING_SHARE_NOT_SHAREABLE", 400,
         "Only completed video-room recordings can be shared.", app=_APP)
register("RECORDING_SHARE_LINK_INVALID", 403,
         "The share link is not valid, was revoked, or has expired.", app=_APP)
