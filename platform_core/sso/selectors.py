"""Reads of the SSO family: the SAML and SCIM settings as the settings routes answer them
(GET /api/v1/settings/saml and /settings/scim) and the dashboard shows them."""

from __future__ import annotations

from django.conf import settings

from platform_core.tenancy.models import Organization

from . import saml
from .models import SamlConfig, ScimConfig


def saml_config() -> SamlConfig | None:
    """The current organization's SAML row (None before the first setup)."""
    return SamlConfig.objects.first()


def scim_config() -> ScimConfig | None:
    return ScimConfig.objects.first()


def saml_settings(org: Organization, config: SamlConfig | None) -> dict:
    urls = saml.sp_urls(org.slug)
    return {
        "enabled": bool(config and config.enabled),
        "idp_entity_id": config.idp_entity_id if config else "",
        "idp_sso_url": config.idp_sso_url if config else "",
        "idp_slo_url": config.idp_slo_url if config else "",
        "idp_x509_cert": config.idp_x509_cert if config else "",
        "idp_metadata_xml": config.idp_metadata_xml if config else "",
        "sp_entity_id": urls.entity_id,
        "acs_url": urls.acs_url,
        "metadata_url": urls.metadata_url,
        "slo_url": urls.slo_url,
        "login_url": urls.login_url,
        "sp_certificate": config.sp_certificate if config else "",
        "updated_at": config.updated_at if config else None,
    }


def scim_base_url(org: Organization) -> str:
    return f"{settings.PUBLIC_BASE_URL}/scim/v2/{org.slug}"


def scim_settings(org: Organization, config: ScimConfig | None) -> dict:
    return {
        "enabled": bool(config and config.enabled),
        "token_last4": config.token_last4 if config else "",
        "token_created_at": config.token_created_at if config else None,
        "max_role": config.max_role if config else "admin",
        "group_role_map": config.group_role_map if config else {},
        "base_url": scim_base_url(org),
    }
