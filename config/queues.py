"""The background plane's Celery queues: one per family, so a flood on one never starves
another. `ROUTES` (the `task_routes` setting) sends each family's tasks to its queue;
anything it does not name runs on `default`. `Procfile.dev` and the README's production
topology say which worker serves which queue.
"""

SENDS = "sends"        # outbound messages: claim batches per provider account, send, record
EVENTS = "events"      # event fan-out: outbox drain to the feed, stream, webhooks, sinks
WEBHOOKS = "webhooks"  # outbound HTTP: webhook deliveries, status callbacks, sinks
DEFAULT = "default"    # everything else: broadcasts, exports, templates, segments, sweeps

ALL = (SENDS, EVENTS, WEBHOOKS, DEFAULT)

ROUTES = {
    "messaging.dispatch_accepted": {"queue": SENDS},
    "messaging.dispatch_due": {"queue": SENDS},
    "messaging.deliver_callback": {"queue": WEBHOOKS},
    "events.*": {"queue": EVENTS},
    "webhooks.*": {"queue": WEBHOOKS},
}
