"""`python -m bench.profile_webhooks`: where the webhook drain spends its time.

The companion of `bench.profile_send` for issue 13's webhook target: N events fanned out
to three endpoints on the fast local receiver (bench/receiver.py, its own process), then
one `engine.run` of the webhook source in this process under cProfile. Prints deliveries
per second of the drain alone and the functions with the most own time. Not the
benchmark (no Celery, no slow endpoint): a profile of the drain's CPU.

Variables: PROFILE_EVENTS (default 3000), PROFILE_TOP (default 30).
"""

from __future__ import annotations

import cProfile
import os
import pstats
import time
from contextlib import ExitStack

from .env import apply_to_this_process, server_environ


def main() -> None:
    apply_to_this_process(server_environ())
    os.environ["ALLOW_PRIVATE_WEBHOOK_TARGETS"] = "true"
    import django

    django.setup()
    from django.db import transaction

    from platform_core.events import bus
    from platform_core.identity.services import organization_create
    from platform_core.tenancy.models import Organization
    from platform_core.webhooks import delivery, engine, services
    from platform_core.webhooks.models import WebhookDelivery

    from .procs import Receiver

    events = int(os.environ.get("PROFILE_EVENTS", "3000"))
    with ExitStack() as stack:
        receiver = stack.enter_context(Receiver(env=dict(os.environ)))
        slug = f"profile-webhooks-{os.getpid()}"
        org = organization_create(name="Profile webhooks", slug=slug,
                                  owner_email=f"owner@{slug}.example", sandbox=False)[0]
        [services.endpoint_create(organization=org, url=receiver.url,
                                              events=[f"profile.{i}"],
                                              description="profile_webhooks")
         for i in range(3)]
        try:
            with transaction.atomic():
                bus.emit_batch([(org, f"profile.{n % 3}", {"n": n}) for n in range(events)])
            while bus.dispatch_batch(500)[0]:
                pass
            owed = WebhookDelivery.objects.for_organization(org).filter(
                status="pending").count()
            profile = cProfile.Profile()
            started, cpu = time.monotonic(), time.process_time()
            profile.enable()
            done = engine.run(delivery.SOURCE, max_seconds=600)
            profile.disable()
            wall, cpu = time.monotonic() - started, time.process_time() - cpu
            print(f"{done:,} of {owed:,} deliveries in {wall:.2f} s: {done / wall:,.0f}/s;"
                  f" CPU {cpu / max(done, 1) * 1000:.2f} ms per delivery (this process)")
            stats = pstats.Stats(profile).sort_stats("tottime")
            stats.print_stats(int(os.environ.get("PROFILE_TOP", "30")))
        finally:
            Organization.objects.filter(pk=org.pk).delete()


if __name__ == "__main__":
    main()
