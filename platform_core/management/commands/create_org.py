"""`manage.py create_org`: the bootstrap command of 0-conventions.md section 1 (a stable contract)."""

from __future__ import annotations

import json
import re

from django.core.management.base import BaseCommand, CommandError

from platform_core.errors import APIError
from platform_core.identity.services import organization_create

_SLUG = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")


class Command(BaseCommand):
    help = "Create an organization, its owner and one `*` secret API key matching its mode."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--name", required=True)
        parser.add_argument("--slug", required=True)
        parser.add_argument("--owner-email", required=True)
        parser.add_argument("--owner-password")
        parser.add_argument("--sandbox", action="store_true", help="test mode: svc_test_sk_ key")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **options) -> None:
        slug = options["slug"]
        if not _SLUG.match(slug):
            raise CommandError(f"invalid slug {slug!r}: use lowercase letters, digits and hyphens")
        try:
            org, user, password, _key, raw = organization_create(
                name=options["name"],
                slug=slug,
                owner_email=options["owner_email"],
                owner_password=options["owner_password"],
                sandbox=options["sandbox"],
            )
        except APIError as exc:
            raise CommandError(f"organization with slug {slug!r} already exists") from exc
        result = {
            "org_id": org.pk,
            "slug": org.slug,
            "sandbox": org.sandbox,
            "owner_id": user.pk,
            "owner_email": user.email,
            "owner_password": password,
            "api_key": raw,
        }
        if options["json"]:
            self.stdout.write(json.dumps(result))
            return
        self.stdout.write(f"Organization {org.name} ({org.slug}) created, id {org.pk}")
        self.stdout.write(f"Owner: {user.email}  password: {password}")
        self.stdout.write(f"API key (shown once): {raw}")
