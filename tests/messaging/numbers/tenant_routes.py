"""Numbers routes under the cross-tenant test."""

from messaging.numbers.models import PortingRequest
from tests.cross_tenant import TenantRoute, register


def _porting(tenant) -> str:
    porting = PortingRequest.objects.for_organization(tenant.org).create(
        organization=tenant.org, numbers=["+14155550100"], current_carrier="AT&T",
        country="US", authorized_signer="Ann", account_number="1234", account_pin="9999",
        loa_file_id="fil_X", loa_file_url="http://localhost:8000/api/v1/files/fil_X/content",
        estimated_completion_earliest="2030-01-01", estimated_completion_latest="2030-01-10",
    )
    return porting.pk


register(TenantRoute(name="numbers-porting", list_url="/api/v1/numbers/porting",
                     detail_url="/api/v1/numbers/porting/{id}", create=_porting,
                     methods=("GET",)))
