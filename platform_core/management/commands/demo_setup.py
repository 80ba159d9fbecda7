"""`manage.py demo_setup`: the demo sandbox organization `make run` prints a key for.

Keys are shown only once, so every run creates the organization if it is missing and
otherwise issues a fresh test key for it.
"""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand

from platform_core.identity.models import KeyMode, KeyType
from platform_core.identity.services import api_key_create, organization_create
from platform_core.tenancy.models import Organization

SLUG = "demo"


class Command(BaseCommand):
    help = "Create (or reuse) the demo sandbox organization and print a fresh API key."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--development-run", action="store_true",
                            help="Say what a `make run` development run allows.")

    def handle(self, *args, **options) -> None:
        org = Organization.objects.filter(slug=SLUG).first()
        password_line = ""
        if org is None:
            org, user, password, _key, raw = organization_create(
                name="Demo", slug=SLUG, owner_email="owner@demo.example", sandbox=True
            )
            password_line = f"  owner:    {user.email} / {password or '(existing password)'}\n"
        else:
            _key, raw = api_key_create(
                organization=org,
                name="make run",
                key_type=KeyType.SECRET,
                mode=KeyMode.TEST,
                scopes=["*"],
            )
        base = settings.PUBLIC_BASE_URL
        self.stdout.write(
            f"\nDemo sandbox organization '{org.slug}' ({org.pk})\n"
            f"{password_line}"
            f"  API key:  {raw}\n\n"
            f"Try it:\n  curl -s {base}/api/v1/organization -H 'X-API-Key: {raw}'\n"
            f"  dashboard: {base}/dashboard/ (sign in as the owner)\n"
            f"  API docs: {base}/api/docs   admin: {base}/admin/\n"
        )
        if options["development_run"]:
            self.stdout.write(
                "\nDevelopment run (Procfile.dev): webhooks, sinks and callbacks may target "
                "loopback and\nprivate addresses (http://127.0.0.1:8765/hook works); cloud "
                "metadata and link-local\naddresses stay refused. Worker and beat log warnings "
                "only: CELERY_LOG_LEVEL=INFO for more.\n"
            )
