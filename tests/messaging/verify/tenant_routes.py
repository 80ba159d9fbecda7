"""Verify routes under the cross-tenant test: verifications (read, cancel), profiles and
their /configs alias, TOTP factors (verify, delete). The check, keyed by a body field, is
covered in test_check.py."""

from platform_core.tenancy.context import tenant_context
from tests.cross_tenant import TenantRoute, register


def _verification(tenant) -> str:
    from messaging.verify import services

    with tenant_context(tenant.org):
        (outcome,) = services.verifications_send(
            organization=tenant.org, principal=None, recipients=["+14155550123"],
            options=services.SendOptions(channel="sms"))
    return outcome.verification.pk


def _profile(tenant) -> str:
    from messaging.verify import services

    with tenant_context(tenant.org):
        return services.profile_create(organization=tenant.org, principal=None,
                                       name="Login").pk


def _factor(tenant) -> str:
    from messaging.verify import factors

    with tenant_context(tenant.org):
        return factors.factor_create(organization=tenant.org, principal=None,
                                     identity="user-1").pk


register(TenantRoute(name="verifications", list_url="/api/v1/verify",
                     detail_url="/api/v1/verify/{id}", create=_verification, methods=("GET",)))
register(TenantRoute(name="verification-cancel", detail_url="/api/v1/verify/{id}/cancel",
                     create=_verification, methods=("POST",)))
for base in ("profiles", "configs"):
    register(TenantRoute(name=f"verify-{base}", list_url=f"/api/v1/verify/{base}",
                         detail_url=f"/api/v1/verify/{base}/{{id}}", create=_profile,
                         patch_body={"name": "Hijacked"}, methods=("GET", "PATCH", "DELETE")))
register(TenantRoute(name="verify-totp-factors", list_url="/api/v1/verify/factors/totp",
                     detail_url="/api/v1/verify/factors/totp/{id}", create=_factor,
                     methods=("DELETE",)))
register(TenantRoute(name="verify-totp-verify",
                     detail_url="/api/v1/verify/factors/totp/{id}/verify", create=_factor,
                     patch_body={"code": "123456"}, methods=("POST",)))
