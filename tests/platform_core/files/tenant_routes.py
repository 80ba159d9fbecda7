"""Files routes under the cross-tenant test (tests/cross_tenant.py)."""

from platform_core.files.models import StoredFile
from tests.cross_tenant import TenantRoute, register


def _file(tenant) -> str:
    # A metadata row is enough: reading it only signs a URL, nothing touches the storage.
    stored = StoredFile.objects.for_organization(tenant.org).create(
        organization=tenant.org, purpose="mms_attachment", filename="victim.txt",
        content_type="text/plain", size=6, sha256="0" * 64,
        storage_name=f"files/{tenant.org.pk}/victim.txt", created_by=tenant.key.pk,
    )
    return stored.pk


register(TenantRoute(
    name="files",
    list_url="/api/v1/files",
    detail_url="/api/v1/files/{id}",
    create=_file,
    methods=("GET", "DELETE"),
    sub_urls=("/api/v1/files/{id}/presign",),
))
