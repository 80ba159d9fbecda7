"""Live provider adapters, registered by name in `ProvidersConfig.ready()`.

- `twilio`: Twilio's REST API (sms, mms, voice text-to-speech calls).
- `whatsapp_cloud`: Meta's WhatsApp Cloud API.
- `rcs_business`: Google's RCS Business Messaging API.
- `smtp`: email over SMTP through Django's email framework.

HTTP adapters call out through `platform_core.net.provider_client` (pinned addresses,
timeouts, retries on 429/5xx, a circuit breaker per provider and host).
"""
