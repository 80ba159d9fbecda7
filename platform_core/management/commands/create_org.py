"""`manage.py create_org`: the bootstrap command of 0-conventions.md section 1.

A stable contract: scripts and tests parse its `--json` output."""

from __future__ import annotations

import json
import re

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.core.validators import validate_email

from platform_core.errors import APIError
from platform_core.identity.services import organization_create

_SLUG = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")


class Command(BaseCommand):
    help = (
        "Create an organization, its owner and one `*` secret API key matching its mode "
        "(--sandbox: test mode, svc_test_sk_ key; otherwise svc_live_sk_). With --json, print "
        'exactly one JSON object: {"org_id", "slug", "sandbox", "owner_id", "owner_email", '
        '"owner_password", "api_key"}. A duplicate slug exits non-zero. If the owner email '
        "belongs to an existing user, that user becomes owner and their password is NOT "
        "changed: omit --owner-password (owner_password is then null) or give their current "
        "password; a different password is refused."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--name", required=True, help="display name of the organization")
        parser.add_argument(
            "--slug", required=True, help="URL-safe unique slug: lowercase letters, digits, hyphens"
        )
        parser.add_argument("--owner-email", required=True)
        parser.add_argument(
            "--owner-password",
            help="password of a new owner (default: generated and printed); for an existing "
            "user only their current password is accepted, it is never reset",
        )
        parser.add_argument("--sandbox", action="store_true", help="test mode: svc_test_sk_ key")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **options) -> None:
        slug = options["slug"]
        name = options["name"].strip()
        email = options["owner_email"].strip()
        password = options["owner_password"]
        if not _SLUG.match(slug):
            raise CommandError(f"invalid slug {slug!r}: use lowercase letters, digits and hyphens")
        if not name:
            raise CommandError("--name must not be empty")
        try:
            validate_email(email)
        except ValidationError:
            raise CommandError(f"invalid owner email {email!r}") from None
        if password is not None and not password:
            raise CommandError("--owner-password must not be empty; omit it to generate one")
        try:
            org, user, password, _key, raw = organization_create(
                name=name,
                slug=slug,
                owner_email=email,
                owner_password=password,
                sandbox=options["sandbox"],
            )
        except APIError as exc:
            raise CommandError(exc.message) from exc
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
        if password is None:
            self.stdout.write(f"Owner: {user.email} (existing user; password unchanged)")
        else:
            self.stdout.write(f"Owner: {user.email}  password: {password}")
        self.stdout.write(f"API key (shown once): {raw}")
