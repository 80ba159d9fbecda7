"""Network-signal checks (Document 3, 4.8), base `/api/v1/numbers/network-apis`."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from messaging.numbers.network import services
from messaging.numbers.network.adapters import enabled
from platform_core.api.views import PlatformAPIView

from . import serializers as s

READ, WRITE = "numbers:read", "numbers:write"


class StatusView(PlatformAPIView):
    required_scopes = {"GET": READ}

    @extend_schema(operation_id="network_apis_status",
                   responses=s.NetworkStatusSerializer,
                   description="`{enabled}`: true in test mode (the sandbox operator) and in "
                               "live mode once operator credentials are configured.")
    def get(self, request):
        return Response({"enabled": enabled(self.organization)})


OPERATIONS = {
    "number-verification:verify": (s.NumberVerificationSerializer,
                                   "Result `devicePhoneNumberVerified` (only an explicit "
                                   "network match is true)."),
    "sim-swap:check": (s.SimSwapCheckSerializer, "Result `swapped` within `maxAge` hours."),
    "sim-swap:retrieve-date": (s.PhoneSerializer, "Result `latestSimChange`."),
    "kyc-match:match": (s.KycSerializer, "Per-attribute `<attribute>Match` results "
                                         "(`true`, `false`, `not_available`), never the data."),
    "device-location:verify": (s.LocationSerializer, "Result `verificationResult` (TRUE, "
                                                     "FALSE, PARTIAL, UNKNOWN), `matchRate`."),
    "device-status:reachability": (s.PhoneSerializer, "Result `reachabilityStatus`."),
    "age-verification:verify": (s.AgeSerializer, "Result `ageVerified`, `ageThreshold`, "
                                                 "`ageCheck`; fails closed."),
    "scam-signal:assess": (s.ScamSignalSerializer, "Result `scam_signal_detected`, "
                                                   "`risk_level`, `signals`."),
    "risk:score": (s.RiskSerializer, "Composite score: `decision` (allow, review, deny), "
                                     "`risk_score` 0-100, `risk_level`, `reason_codes`, "
                                     "per-signal breakdown; see docs/network-apis.md."),
}


def check_view(operation: str):
    serializer, description = OPERATIONS[operation]

    class CheckView(PlatformAPIView):
        required_scopes = {"POST": WRITE}
        idempotent_posts = False  # a query, not a creation

        @extend_schema(operation_id="network_apis_" + operation.replace("-", "_").replace(
            ":", "_"), request=serializer, responses=OpenApiTypes.OBJECT,
            description=description + " Without operator credentials (live): 503 "
                                      "SERVICE_UNAVAILABLE.")
        def post(self, request):
            services.adapter_for(self.organization)  # 503 first when not configured
            body = serializer(data=request.data)
            body.is_valid(raise_exception=True)
            return Response(services.run(self.organization, operation, body.validated_data))

    CheckView.__name__ = "Check" + operation.title().replace("-", "").replace(":", "") + "View"
    return CheckView


class ChargeView(PlatformAPIView):
    required_scopes = {"POST": WRITE}

    @extend_schema(operation_id="network_apis_carrier_billing_charge",
                   request=s.ChargeSerializer, responses={201: OpenApiTypes.OBJECT},
                   description="201 `{paymentId, status}`. Above the server cap: 422 "
                               "CARRIER_BILLING_AMOUNT_ABOVE_CAP before the operator is asked. "
                               "The same `idempotencyKey` answers the first charge (200); with "
                               "a different body, 409 IDEMPOTENCY_CONFLICT.")
    def post(self, request):
        services.adapter_for(self.organization)
        body = s.ChargeSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        charge, created = services.carrier_charge(principal=self.principal,
                                                  data=body.validated_data, request=request)
        return Response({"paymentId": charge.payment_id, "status": charge.status,
                         "amount": str(charge.amount), "currency": charge.currency,
                         "created_at": charge.created_at},
                        status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)
