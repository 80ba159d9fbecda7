"""Recording routes under the cross-tenant test."""

from django.core.files.uploadedfile import SimpleUploadedFile

from platform_core.identity.principal import Principal
from platform_core.tenancy.context import tenant_context
from tests.cross_tenant import TenantRoute, register


def _recording(tenant) -> str:
    from recordings import services

    principal = Principal(kind="session", organization=tenant.org, role="owner",
                          user_id=tenant.owner.pk)
    with tenant_context(tenant.org):
        recording = services.recording_register_upload(
            principal=principal, kind="video",
            uploaded=SimpleUploadedFile("a.wav", b"abc", content_type="audio/wav"))
    return recording.pk


register(TenantRoute(name="recordings", list_url="/api/v1/recordings",
                     detail_url="/api/v1/recordings/{id}", create=_recording, methods=("GET",),
                     sub_urls=("/api/v1/recordings/{id}/legal-hold",
                               "/api/v1/recordings/{id}/integrity",
                               "/api/v1/recordings/{id}/integrity/verify")))
