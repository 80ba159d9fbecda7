"""Numbers (Document 2, 4.4): offline lookup and port-in requests."""

from __future__ import annotations

import phonenumbers
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status
from rest_framework.response import Response

from messaging.numbers import services
from messaging.numbers.lookup import MAX_INPUT_LENGTH, lookup
from messaging.numbers.models import PortingRequest, PortingStatus
from platform_core.api.views import PlatformAPIView, TenantViewSet
from platform_core.errors import APIError, validation_error

from . import serializers as s

READ, WRITE = "numbers:read", "numbers:write"
PORTING_ROLES = {"owner", "admin", "developer"}


class NumberLookupView(PlatformAPIView):
    required_scopes = {"GET": READ}

    @extend_schema(
        operation_id="numbers_lookup",
        parameters=[OpenApiParameter(
            "phone_number", OpenApiTypes.STR, OpenApiParameter.PATH,
            description="E.164 (`+14155550123`, URL-encode the `+` as `%2B` if your client "
                        "rewrites it) or a national number of the organization's "
                        "`default_country`.")],
        responses=s.LookupSerializer,
        description=(
            "Offline lookup for pre-send validation: validity, possibility, formats, calling "
            "code and region, number type, the original carrier of the range and the time "
            "zones where the numbering metadata knows them. An invalid number answers 200 "
            "with `valid: false` and `validation_errors` (never 422), so one shape serves "
            "every check. Input longer than 64 characters: 422 VALIDATION_ERROR."
        ),
    )
    def get(self, request, phone_number: str):
        if len(phone_number) > MAX_INPUT_LENGTH:
            raise validation_error("phone_number",
                                   f"At most {MAX_INPUT_LENGTH} characters.")
        return Response(lookup(phone_number, default_country=self.organization.default_country))


def _e164_numbers(raw_numbers: list[str], *, country: str) -> list[str]:
    calling_code = phonenumbers.country_code_for_region(country)
    numbers: list[str] = []
    for index, raw in enumerate(raw_numbers):
        field = f"numbers[{index}]"
        text = raw.strip()
        try:
            number = phonenumbers.parse(text, None) if text.startswith("+") else None
        except phonenumbers.NumberParseException:
            number = None
        if number is None or not phonenumbers.is_valid_number(number):
            raise APIError(
                "INVALID_PHONE_NUMBER", f"{field} is not a valid E.164 number.",
                details={"field": field,
                         "issues": [{"field": field, "message": "Not a valid E.164 number."}]})
        if number.country_code != calling_code:
            raise validation_error(field, f"The number is not a number of {country}.")
        e164 = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
        if e164 not in numbers:
            numbers.append(e164)
    return numbers


class PortingRequestViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantViewSet):
    model = PortingRequest
    serializer_class = s.PortingRequestSerializer
    required_scopes = {"GET": READ, "POST": WRITE}
    required_roles = {"POST": PORTING_ROLES}

    def scope_queryset(self, queryset):
        if self.action == "list":
            wanted = self.request.query_params.get("status")
            if wanted:
                if wanted not in PortingStatus.values:
                    raise validation_error(
                        "status", f"status must be one of {', '.join(PortingStatus.values)}.",
                        status=400)
                queryset = queryset.filter(status=wanted)
        return queryset

    @extend_schema(parameters=[OpenApiParameter("status", OpenApiTypes.STR,
                                                enum=PortingStatus.values)])
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    @extend_schema(
        request=s.PortingCreateSerializer, responses={201: s.PortingRequestSerializer},
        description=(
            "Submit a port-in request. `numbers`: 1-100 E.164 numbers of `country` (an "
            "invalid one: 422 INVALID_PHONE_NUMBER naming `numbers[i]`). `loaFileUrl` must "
            "be a current signed URL returned by `POST /api/v1/files/upload` (or the file's "
            "presign) for a file of this organization; any other origin, path, signature or "
            "file: 422 LOA_URL_INVALID_ORIGIN with `details.reason`. `accountPin` is stored "
            "encrypted and never returned. A number already in an active request: 409 "
            "CONFLICT. Answers the request with status `submitted` and its estimated "
            "completion, 7 to 14 business days ahead. Emits `number.porting.submitted`."
        ),
    )
    def create(self, request):
        body = s.PortingCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        numbers = _e164_numbers(data["numbers"], country=data["country"])
        porting = services.porting_request_submit(
            principal=self.principal, numbers=numbers,
            current_carrier=data["currentCarrier"], country=data["country"],
            authorized_signer=data["authorizedSigner"], account_number=data["accountNumber"],
            account_pin=data.get("accountPin") or "", loa_file_url=data["loaFileUrl"],
            request=request,
        )
        return Response(s.PortingRequestSerializer(porting).data, status=status.HTTP_201_CREATED)
