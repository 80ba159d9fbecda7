"""Error codes of the voice app: IVR flows use the platform's VALIDATION_ERROR (422, with
`details.node_id` and `details.rule`), CONFLICT and NOT_FOUND; the call webhook answers
INVALID_SIGNATURE and WEBHOOK_BODY_MISSING (registered by messaging/inbound)."""

from platform_core.errors import register

register("IVR_FLOW_NOT_PUBLISHED", 409,
         "The flow has no published version yet.", app="voice")
