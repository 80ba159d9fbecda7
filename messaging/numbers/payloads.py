"""The representation of a porting request, shared by the API and its event."""

from __future__ import annotations

from typing import Any

from .models import PortingRequest


def porting_data(porting: PortingRequest) -> dict[str, Any]:
    from .api.serializers import PortingRequestSerializer

    return dict(PortingRequestSerializer(porting).data)
