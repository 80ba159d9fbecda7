"""The background plane's Celery queues: one per family, so a flood on one never starves
another. A task names its queue in its decorator (`@shared_task(queue=queues.SENDS)`);
anything that names none runs on `default`. `Procfile.dev` and the README's production
topology say which worker serves which queue.
"""

SENDS = "sends"        # outbound messages: claim batches per provider account, send, record
EVENTS = "events"      # event fan-out: outbox drain to the feed, stream, webhooks, sinks
WEBHOOKS = "webhooks"  # outbound HTTP: webhook deliveries, status callbacks, sinks
DEFAULT = "default"    # everything else: broadcasts, exports, templates, segments, sweeps

ALL = (SENDS, EVENTS, WEBHOOKS, DEFAULT)
