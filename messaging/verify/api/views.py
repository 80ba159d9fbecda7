"""Verify endpoints (Document 2, 4.7; 0-conventions.md section 8), base `/api/v1/verify`."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.response import Response

from messaging.verify import conf, factors, selectors, services
from messaging.verify.models import TotpFactor, Verification, VerifyProfile
from platform_core.api import ratelimit
from platform_core.api.ratelimit import RateLimit
from platform_core.api.serialization import represent, validated_input
from platform_core.api.views import PlatformAPIView, TenantViewSet
from platform_core.errors import APIError

from . import serializers as s

READ, WRITE = "verify:read", "verify:write"
TOTP_VERIFY_PER_MINUTE = 10

_SEND_DESCRIPTION = (
    "Issue a one-time code: 201 `{verification_id, status: pending, channel, ...}`; the "
    "status moves to `sent` when the message is handed to the carrier and to `failed` when "
    "its delivery (and every fallback) fails. In test mode the code is answered as "
    "`test_code` (never in live mode). Channels, each through the messaging pipeline: sms, "
    "whatsapp, voice (a call reading the digits), email, rcs, viber, telegram (Telegram "
    "Gateway), flashcall (a missed call: the code is the trailing digits of the caller id); "
    "`magic_link` with `link_url`: a signed single-use link (`link_url?token=...`) by email "
    "for an address or sms for a phone, checked with `POST /verify/check {token}` (test "
    "mode: `test_link`, and the token as `test_code`); `fallback` lists channels tried "
    "after it (one "
    "without a provider is skipped: rcs then sms works without RCS). A live channel with no "
    "provider: 503 PROVIDER_NOT_WIRED. `sna` (alias `silent`) with `device_token`: the "
    "network confirms the number and the answer is `verified` (or `failed`), no code; "
    "without a token 503 PROVIDER_NOT_WIRED (test mode: the token `sandbox-mismatch` does "
    "not match). `totp`, `push`, `backup_code`: 422 VERIFY_USE_FACTOR_ENDPOINT. A new send "
    "to the same recipient cancels the open one (`cancel_reason: superseded`). Fraud guard: "
    "429 VERIFY_RECIPIENT_LIMIT (default 5 sends per recipient per 10 minutes), 429 "
    "VERIFY_PREFIX_LIMIT (1000 per destination prefix per hour), 403 VERIFY_PREFIX_BLOCKED "
    "(a prefix with 30+ settled sends in 24 h converting below 20%); operators override "
    "them per organization. Recipient errors: 422 INVALID_PHONE_NUMBER / INVALID_EMAIL. "
    "Events: verification.pending, verification.sent, verification.verified, "
    "verification.failed, "
    "verification.expired, verification.canceled."
)


def _outcome_data(outcome: services.Outcome) -> dict:
    data = {"verification_id": outcome.verification.pk,
            **represent(s.VerificationSerializer, outcome.verification)}
    if outcome.test_code is not None:
        data["test_code"] = outcome.test_code
    if outcome.test_link is not None:
        data["test_link"] = outcome.test_link
    return data


class VerificationViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantViewSet):
    """Verifications: list, read, cancel."""

    model = Verification
    serializer_class = s.VerificationSerializer
    required_scopes = {"GET": READ, "POST": WRITE}

    def scope_queryset(self, queryset):
        if self.action == "list":
            queryset = selectors.verifications_filtered(queryset, self.request.query_params)
        return queryset

    @extend_schema(parameters=[
        OpenApiParameter("status", OpenApiTypes.STR, description="Comma list of statuses "
                         "(a lapsed open code reads as expired)."),
        OpenApiParameter("channel", OpenApiTypes.STR), OpenApiParameter("to", OpenApiTypes.STR),
        OpenApiParameter("profile_id", OpenApiTypes.STR)])
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    @extend_schema(request=None, responses=s.VerificationSerializer,
                   description="Cancel a pending or sent verification; a verified, expired, "
                               "failed or canceled one answers its registered code.")
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        verification = services.verification_cancel(verification=self.get_object(),
                                                    principal=self.principal)
        return Response(represent(s.VerificationSerializer, verification))


class SendView(PlatformAPIView):
    required_scopes = {"POST": WRITE}

    @extend_schema(request=s.SendSerializer, responses={201: s.SendResultSerializer},
                   description=_SEND_DESCRIPTION)
    def post(self, request):
        body = validated_input(s.SendSerializer, request.data)
        options = body.options(device_token=body.validated_data.get("device_token"))
        (outcome,) = services.verifications_send(
            organization=self.organization, principal=self.principal,
            recipients=[body.validated_data["to"]], options=options)
        if outcome.error is not None:
            raise outcome.error
        return Response(_outcome_data(outcome), status=status.HTTP_201_CREATED)


class BulkView(PlatformAPIView):
    required_scopes = {"POST": WRITE}

    def get_rate_limits(self, method: str) -> list[RateLimit]:
        limits = super().get_rate_limits(method)
        if method == "POST" and self.request.auth is not None:
            allowed = conf.limits_for(self.request.auth.organization.pk)
            limits.append(RateLimit("verify_bulk", allowed.bulk_requests_per_minute, 60,
                                    per="organization"))
        return limits

    @extend_schema(
        request=s.BulkSerializer,
        responses={201: s.BulkResultSerializer, 207: s.BulkResultSerializer},
        description="1-1000 recipients (phones, or emails on the email channel), deduplicated "
                    "keeping the first; each goes through the single-send pipeline and one "
                    "failure never aborts the batch. Rows in submission order: `{recipient, "
                    "status: sent, verification_id, channel[, test_code]}` or `{recipient, "
                    "status: failed, error{code, message}}` (INVALID_RECIPIENT, fraud-guard "
                    "codes...). 201 all sent, 207 some failed, 400 VERIFY_BULK_ALL_FAILED when "
                    "every row failed (the rows in `error.details.results`). 2 requests "
                    "per minute per organization (429 RATE_LIMITED; operators override).")
    def post(self, request):
        body = validated_input(s.BulkSerializer, request.data)
        options = body.options(country=body.validated_data.get("country"))
        outcomes = services.verifications_send(
            organization=self.organization, principal=self.principal,
            recipients=list(body.validated_data["recipients"]), options=options, bulk=True)
        results = []
        for outcome in outcomes:
            if outcome.error is None:
                row = {"recipient": outcome.recipient, "status": "sent",
                       "verification_id": outcome.verification.pk,
                       "channel": outcome.verification.channel}
                if outcome.test_code is not None:
                    row["test_code"] = outcome.test_code
                if outcome.test_link is not None:
                    row["test_link"] = outcome.test_link
            else:
                row = {"recipient": outcome.recipient, "status": "failed",
                       "error": {"code": outcome.error.code,
                                 "message": outcome.error.message}}
            results.append(row)
        sent = sum(1 for r in results if r["status"] == "sent")
        summary = {"total": len(results), "sent": sent, "failed": len(results) - sent,
                   "results": results}
        if not sent:  # an error answer: the rows travel in error.details
            raise APIError("VERIFY_BULK_ALL_FAILED", details=summary)
        return Response(summary, status=status.HTTP_201_CREATED
                        if sent == len(results) else status.HTTP_207_MULTI_STATUS)


class CheckView(PlatformAPIView):
    required_scopes = {"POST": WRITE}
    idempotent_posts = False

    @extend_schema(request=s.CheckSerializer, responses=s.CheckResultSerializer, description=(
        "Check a code (`verification_id` or `to`, and `code`), or a magic link (`token`, "
        "the link's token parameter; a forged or altered one answers 400 "
        "VERIFY_LINK_INVALID): 200 `{valid, status, ...}`. A wrong code counts an attempt "
        "(`valid: false`); the last one fails the verification. A verified, expired, failed "
        "or canceled verification answers 409 VERIFICATION_ALREADY_VERIFIED, 410 "
        "VERIFICATION_EXPIRED, 409 VERIFICATION_MAX_ATTEMPTS or 409 VERIFICATION_CANCELED."))
    def post(self, request):
        body = validated_input(s.CheckSerializer, request.data).validated_data
        to = body.get("to")
        if to and not body.get("verification_id"):
            to = to.strip().lower() if "@" in to else services.normalize_recipient(
                "sms", to, country=self.organization.default_country)
        verification, valid = services.verification_check(
            organization=self.organization, code=body.get("code"),
            verification_id=body.get("verification_id"), to=to, token=body.get("token"))
        return Response({**represent(s.VerificationSerializer, verification), "valid": valid})


class AnalyticsView(PlatformAPIView):
    required_scopes = {"GET": READ}

    @extend_schema(parameters=[OpenApiParameter("window_days", OpenApiTypes.INT,
                                                description="Default 30, clamped to 1-90.")],
                   responses=s.VerifyAnalyticsSerializer)
    def get(self, request):
        days = selectors.window_days(request.query_params)
        return Response(selectors.analytics(self.organization, days=days))


class ConversionAnomalyView(PlatformAPIView):
    required_scopes = {"GET": READ}

    @extend_schema(parameters=[OpenApiParameter("window_days", OpenApiTypes.INT,
                                                description="1-90, default 30.")],
                   responses=s.VerifyConversionAnomalySerializer,
                   description="Per destination prefix: sent, verified, conversion_rate, "
                               "score (how far below the organization's baseline, 0-1), band "
                               "(low, medium, high), anomaly, estimated_spend_at_risk_usd "
                               "(unverified sends priced per message on flagged prefixes).")
    def get(self, request):
        days = selectors.window_days(request.query_params, clamp=False)
        return Response(selectors.conversion_anomaly(self.organization, days=days))


class ProfileViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantViewSet):
    """Verify profiles (also served at `/verify/configs`)."""

    model = VerifyProfile
    serializer_class = s.ProfileSerializer
    required_scopes = {"GET": READ, "POST": WRITE, "PATCH": WRITE, "DELETE": WRITE}

    @extend_schema(request=s.ProfileWriteSerializer, responses={201: s.ProfileSerializer})
    def create(self, request):
        body = s.ProfileWriteSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        profile = services.profile_create(organization=self.organization,
                                          principal=self.principal, request=request,
                                          **body.validated_data)
        return Response(represent(s.ProfileSerializer, profile), status=status.HTTP_201_CREATED)

    @extend_schema(request=s.ProfileWriteSerializer, responses=s.ProfileSerializer)
    def partial_update(self, request, pk=None):
        profile = self.get_object()
        body = s.ProfileWriteSerializer(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        profile = services.profile_update(profile=profile, principal=self.principal,
                                          request=request, **body.validated_data)
        return Response(represent(s.ProfileSerializer, profile))

    @extend_schema(responses={204: None})
    def destroy(self, request, pk=None):
        services.profile_delete(profile=self.get_object(), principal=self.principal,
                                request=request)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TotpFactorViewSet(mixins.ListModelMixin, TenantViewSet):
    """TOTP factors: API keys only (factors are API-only), scope verify:write throughout."""

    model = TotpFactor
    serializer_class = s.FactorSerializer
    required_scopes = {"GET": WRITE, "POST": WRITE, "DELETE": WRITE}
    api_key_only = True

    @extend_schema(request=s.FactorCreateSerializer, responses={201: s.FactorCreatedSerializer},
                   description=(
        "Create a TOTP factor: 201 with `secret` (base32) and `uri` (`otpauth://totp/...`, "
        "issuer = the organization's name; also `otpauth_uri`), shown this once."))
    def create(self, request):
        body = s.FactorCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        factor = factors.factor_create(organization=self.organization,
                                       principal=self.principal, request=request,
                                       **body.validated_data)
        uri = factors.provisioning_uri(factor)
        return Response({**represent(s.FactorSerializer, factor), "secret": factor.secret,
                         "uri": uri, "otpauth_uri": uri}, status=status.HTTP_201_CREATED)

    @extend_schema(request=s.FactorVerifySerializer, responses=s.FactorCheckSerializer,
                   description=(
        "Check a 6-digit code (current 30-second step or one either side): 200 `{valid}`; "
        "a code of a step already used answers 409 TOTP_CODE_REPLAYED. 10 checks per "
        "minute per factor (429 RATE_LIMITED)."))
    @action(detail=True, methods=["post"])
    def verify(self, request, pk=None):
        factor = self.get_object()
        ratelimit.enforce([RateLimit("verify_totp", TOTP_VERIFY_PER_MINUTE, 60, per="factor")],
                          {"factor": factor.pk})
        code = validated_input(s.FactorVerifySerializer, request.data).validated_data["code"]
        factor, valid = factors.factor_verify(factor=factor, code=code)
        return Response({**represent(s.FactorSerializer, factor), "factor_id": factor.pk,
                         "valid": valid})

    @extend_schema(responses={204: None})
    def destroy(self, request, pk=None):
        factors.factor_delete(factor=self.get_object(), principal=self.principal,
                              request=request)
        return Response(status=status.HTTP_204_NO_CONTENT)
