"""Periodic jobs run by `celery -A config beat`. Each app adds its entries here."""

from __future__ import annotations

BEAT_SCHEDULE: dict[str, dict] = {
    "purge-idempotency-records": {
        "task": "platform_core.tasks.purge_idempotency_records",
        "schedule": 3600.0,
    },
}
BEAT_SCHEDULE["events-redispatch-pending"] = {
    # Outbox rows committed but not fanned out (crash, broker outage, failed handler).
    "task": "events.redispatch_pending",
    "schedule": 15.0,
}
BEAT_SCHEDULE["webhooks-dispatch-due"] = {
    # Pending webhook deliveries whose next attempt is due (retries, expired leases of a
    # killed worker: taken over within lease + 5 s, resumed endpoints).
    "task": "webhooks.dispatch_due",
    "schedule": 5.0,
}
BEAT_SCHEDULE["messaging-callbacks-due"] = {
    # Status callbacks whose retry is due, or whose drain a dying process never kicked.
    "task": "messaging.deliver_callback",
    "schedule": 5.0,
}
BEAT_SCHEDULE["events-purge-outbox"] = {
    # Outbox rows older than EVENTS_OUTBOX_RETENTION_DAYS (the outbox is not history).
    "task": "events.purge_outbox",
    "schedule": 3600.0,
}
BEAT_SCHEDULE["segments-refresh-stale"] = {
    # Rule-defined segments whose membership is older than SEGMENTS_REFRESH_INTERVAL_SECONDS
    # (15 min); click cohorts never refresh.
    "task": "segments.refresh_stale",
    "schedule": 300.0,
}
BEAT_SCHEDULE["templates-sync-statuses"] = {
    # Live whatsapp/rcs templates still pending: read the carrier's decision, resubmit
    # submissions that failed (the provider webhook usually decides first).
    "task": "templates.sync_statuses",
    "schedule": 600.0,
}
BEAT_SCHEDULE["messaging-dispatch-due"] = {
    # The timed drain of messaging (messaging/timed.py): due scheduled sends, send retries,
    # sandbox receipts and no-receipt fallbacks, a killed worker's send claims, then the
    # send drain (a lost drain signal). Woken earlier for work due sooner (`timed.arm`).
    "task": "messaging.dispatch_due",
    "schedule": 10.0,
}
BEAT_SCHEDULE["messaging-broadcasts-due"] = {
    # Scheduled broadcasts whose send_at has come, starts a broker outage lost, running
    # broadcasts whose runner stopped writing its heartbeat (a killed worker).
    "task": "messaging.broadcasts_due",
    "schedule": 15.0,
}
BEAT_SCHEDULE["verify-expire-due"] = {
    # Open verifications past their expiry become `expired` (with their event).
    "task": "verify.expire_due",
    "schedule": 30.0,
}
BEAT_SCHEDULE["rcs-refresh-agents"] = {
    # Live RCS agents awaiting Google's verification verdict or carrier launches.
    "task": "rcs.refresh_agents",
    "schedule": 600.0,
}
BEAT_SCHEDULE["recordings-retention-sweep"] = {
    # Recordings older than RECORDINGS_RETENTION_DAYS, not on legal hold, in batches.
    "task": "recordings.retention_sweep",
    "schedule": 3600.0,
}
BEAT_SCHEDULE["ads-retry-pending-leads"] = {
    # Ad leads whose fetch failed during ingestion (the batch went on without them).
    "task": "ads.retry_pending_leads",
    "schedule": 300.0,
}
BEAT_SCHEDULE["conversations-sweep"] = {
    # Routing offers past CONVERSATIONS_OFFER_TTL_SECONDS pass to the next agent; snoozed
    # conversations whose `until` has passed wake up.
    "task": "conversations.sweep",
    "schedule": 10.0,
}
BEAT_SCHEDULE["knowledge-sync-due-connectors"] = {
    # Knowledge connectors whose scheduled sync is due (knowledge/connectors/services.py).
    "task": "knowledge.sync_due_connectors",
    "schedule": 60.0,
}
BEAT_SCHEDULE["insights-refresh"] = {
    # The AI usage rollup per quarter-hour (insights/rollup.py), then the budget alerts.
    "task": "insights.refresh",
    "schedule": 60.0,
}
