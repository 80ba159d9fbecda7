"""djangosaml2's authentication backend, bound to one organization.

The ACS view calls it directly rather than through `django.contrib.auth.authenticate`: it
is not listed in AUTHENTICATION_BACKENDS, so no other sign-in path can ever reach it, and
it needs the organization and the answered AuthnRequest that the view resolved.
"""

from __future__ import annotations

import calendar
import datetime as dt
from typing import Any

from djangosaml2.backends import Saml2Backend
from saml2.time_util import str_to_time

from platform_core.errors import APIError
from platform_core.identity.models import User

from . import saml, services


class OrganizationSaml2Backend(Saml2Backend):
    """Finds the invited member by email, refuses anyone else (SAML_USER_NOT_IN_ORG) and
    never creates a user: membership is granted by invitation or SCIM, not by the IdP."""

    def __init__(self, *, organization, pending) -> None:
        self.organization = organization
        self.pending = pending
        self.membership = None
        self._session_info: dict = {}

    def is_authorized(
        self,
        attributes: dict,
        attribute_mapping: dict,
        idp_entityid: str,
        assertion_info: dict,
        **kwargs: Any,
    ) -> bool:
        # djangosaml2 hands the assertion id here for replay protection: burn it (and the
        # request it answers) once; a second use answers SAML_ASSERTION_REPLAYED.
        expiry = None
        if assertion_info.get("not_on_or_after"):
            expiry = dt.datetime.fromtimestamp(
                _timestamp(assertion_info["not_on_or_after"]), dt.UTC
            )
        services.saml_burn(
            org=self.organization,
            pending=self.pending,
            assertion_id=str(assertion_info.get("assertion_id") or ""),
            not_on_or_after=expiry,
        )
        return True

    def _extract_user_identifier_params(
        self, session_info: dict, attributes: dict, attribute_mapping: dict
    ) -> tuple[str, str | None]:
        return "email", saml.email_of(session_info.get("name_id"), attributes)

    def get_or_create_user(
        self,
        user_lookup_key: str,
        user_lookup_value: Any,
        create_unknown_user: bool,
        idp_entityid: str,
        attributes: dict,
        attribute_mapping: dict,
        request,
    ) -> tuple[User, bool]:
        name_id = self._session_info.get("name_id")
        user, self.membership = services.saml_member(
            org=self.organization,
            email=user_lookup_value,
            name_id=getattr(name_id, "text", "") or str(user_lookup_value or ""),
            request=request,
        )
        return user, False

    def _update_user(self, user, attributes: dict, attribute_mapping: dict, force_save=False):
        # The name is filled on the first SAML sign-in only (in services.saml_sign_in).
        return user

    def authenticate(self, request, session_info=None, **kwargs: Any):
        self._session_info = session_info or {}
        user = super().authenticate(request, session_info=session_info, **kwargs)
        if user is None or self.membership is None:
            # No usable subject (no email in NameID or attributes): nobody to sign in.
            raise APIError("SAML_USER_NOT_IN_ORG")
        return user


def _timestamp(value: Any) -> float:
    if isinstance(value, int | float):
        return float(value)
    return float(calendar.timegm(str_to_time(str(value))))
