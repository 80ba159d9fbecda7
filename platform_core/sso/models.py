"""Single sign-on and provisioning: SAML 2.0 (Document 1, 4.2) and SCIM 2.0 (4.3).

Everything is per organization: each organization has at most one `SamlConfig` (its own
identity provider; there is never a global one) and one `ScimConfig` (its provisioning
token and role ceiling). SCIM users are `ScimUser` rows linking a platform user to the
organization with the attributes the identity provider manages; their access itself is the
organization `Membership`, which exists exactly while the SCIM user is active.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models.functions import Lower

from platform_core.crypto import EncryptedTextField
from platform_core.ids import PublicIdField
from platform_core.tenancy.models import Role, TenantModel

# --- SAML ----------------------------------------------------------------------------------


class SamlConfig(TenantModel):
    """The organization's identity provider: either the three fields or its metadata XML."""

    id = PublicIdField(prefix="saml")
    enabled = models.BooleanField(default=False)
    idp_entity_id = models.CharField(max_length=1024, blank=True)
    idp_sso_url = models.CharField(max_length=2048, blank=True)
    idp_slo_url = models.CharField(max_length=2048, blank=True)
    idp_x509_cert = models.TextField(blank=True, help_text="PEM; the IdP's signing certificate")
    idp_metadata_xml = models.TextField(
        blank=True, help_text="IdP metadata; when set it supersedes the three fields above"
    )
    # The service provider's own signing key pair, generated once per organization.
    sp_private_key = EncryptedTextField(blank=True)
    sp_certificate = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization"], name="uniq_saml_config_per_org")
        ]
        verbose_name = "SAML configuration"

    def __str__(self) -> str:
        return f"SAML of {self.organization_id} ({'on' if self.enabled else 'off'})"


class SamlAuthnRequest(TenantModel):
    """An AuthnRequest we sent: the callback accepts only responses to one of these
    (`InResponseTo`), once."""

    id = PublicIdField(prefix="samlreq")
    request_id = models.CharField(max_length=100, unique=True)
    redirect = models.CharField(max_length=2048, default="/")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(db_index=True)
    consumed_at = models.DateTimeField(null=True, blank=True)


class SamlConsumedAssertion(TenantModel):
    """Assertion ids already used to sign in, kept until the assertion expires (replay)."""

    id = PublicIdField(prefix="samlasr")
    assertion_id = models.CharField(max_length=256)
    expires_at = models.DateTimeField(db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "assertion_id"], name="uniq_saml_assertion_per_org"
            )
        ]


class SamlUserLink(TenantModel):
    """A person who signed in to the organization through SAML at least once."""

    id = PublicIdField(prefix="samlusr")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    name_id = models.CharField(max_length=512)
    name_id_format = models.CharField(max_length=200, blank=True)
    first_login_at = models.DateTimeField(auto_now_add=True)
    last_login_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "user"], name="uniq_saml_user_per_org")
        ]


class SsoTicket(TenantModel):
    """One-time sign-in ticket handed to the dashboard after a SAML callback; exchanged for
    a session at POST /api/v1/auth/sso/exchange. Only its SHA-256 digest is stored."""

    id = PublicIdField(prefix="ssot")
    ticket_hash = models.CharField(max_length=64, unique=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    redirect = models.CharField(max_length=2048, default="/")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)


# --- SCIM ----------------------------------------------------------------------------------


class ScimConfig(TenantModel):
    """The organization's provisioning token (digest only) and the highest role SCIM may
    grant through groups."""

    id = PublicIdField(prefix="scim")
    token_hash = models.CharField(max_length=64, unique=True, null=True, blank=True)
    token_last4 = models.CharField(max_length=4, blank=True)
    token_created_at = models.DateTimeField(null=True, blank=True)
    max_role = models.CharField(max_length=16, choices=Role.choices, default=Role.ADMIN)
    # Group displayName (case-insensitive) -> role, on top of groups named after a role.
    group_role_map = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization"], name="uniq_scim_config_per_org")
        ]
        verbose_name = "SCIM configuration"

    @property
    def enabled(self) -> bool:
        return bool(self.token_hash)


class ScimUser(TenantModel):
    """A user as the organization's identity provider sees it. The SCIM id is the user's id.

    `active` is tri-state: None when the provider removed the attribute (treated as active).
    `role` is the role the member has (remembered while deactivated, for reactivation)."""

    id = PublicIdField(prefix="scimu")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="scim_links"
    )
    user_name = models.CharField(max_length=512)
    external_id = models.CharField(max_length=512, null=True, blank=True)
    given_name = models.CharField(max_length=200, null=True, blank=True)
    family_name = models.CharField(max_length=200, null=True, blank=True)
    formatted_name = models.CharField(max_length=400, null=True, blank=True)
    display_name = models.CharField(max_length=400, null=True, blank=True)
    emails = models.JSONField(default=list, blank=True)
    active = models.BooleanField(null=True, default=True)
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "user"], name="uniq_scim_user"),
            models.UniqueConstraint("organization", Lower("user_name"), name="uniq_scim_user_name"),
        ]
        indexes = [models.Index(fields=["organization", "created_at"])]


class ScimGroup(TenantModel):
    """A group pushed by the identity provider. A group named after a role (owner, admin,
    developer, agent, viewer) or listed in `ScimConfig.group_role_map` grants that role."""

    id = PublicIdField(prefix="grp")
    display_name = models.CharField(max_length=400)
    external_id = models.CharField(max_length=512, null=True, blank=True)
    members = models.ManyToManyField(ScimUser, related_name="groups", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                "organization", Lower("display_name"), name="uniq_scim_group_name"
            ),
        ]
        indexes = [models.Index(fields=["organization", "created_at"])]
