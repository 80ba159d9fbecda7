"""Ads (Document 3, 4.9): reads open to any role, writes to owners and admins."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.response import Response

from ads import services
from ads.models import AdAccount, AdAudience, AdCampaign
from platform_core.api.views import PlatformAPIView, TenantViewSet

from . import serializers as s

ADMINS = {"owner", "admin"}
ANY = {"GET": None, "POST": None, "PUT": None, "DELETE": None}
WRITERS = {"POST": ADMINS, "PUT": ADMINS, "DELETE": ADMINS}


class ConnectView(PlatformAPIView):
    required_scopes = ANY
    required_roles = WRITERS

    @extend_schema(operation_id="ads_connect", request=s.ConnectSerializer,
                   responses={201: s.AdsStatusSerializer},
                   description="Connect the organization's ad account with an access token "
                               "(checked against the account, kept encrypted, never returned). "
                               "A new connection replaces the previous one.")
    def post(self, request):
        body = s.ConnectSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        account = services.connect(principal=self.principal, request=request,
                                   **body.validated_data)
        return Response(status_data(account), status=status.HTTP_201_CREATED)


class OAuthExchangeView(PlatformAPIView):
    required_scopes = ANY
    required_roles = WRITERS

    @extend_schema(operation_id="ads_oauth_exchange", request=s.OAuthExchangeSerializer,
                   responses={201: s.AdsStatusSerializer},
                   description="Exchange the hosted OAuth `code` for a token and connect "
                               "`ad_account_id`. Live mode needs ADS_APP_ID / ADS_APP_SECRET "
                               "(else 503 SERVICE_UNAVAILABLE).")
    def post(self, request):
        body = s.OAuthExchangeSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        account = services.connect(principal=self.principal, request=request, code=data["code"],
                                   redirect_uri=data["redirect_uri"],
                                   ad_account_id=data["ad_account_id"])
        return Response(status_data(account), status=status.HTTP_201_CREATED)


def status_data(account: AdAccount | None) -> dict:
    if account is None:
        return {"connected": False, "ad_account_id": None, "name": None, "currency": None,
                "account_status": None, "dataset_id": None, "connected_via": None,
                "connected_at": None}
    return {"connected": True, "ad_account_id": account.ad_account_id, "name": account.name,
            "currency": account.currency, "account_status": account.account_status,
            "dataset_id": account.dataset_id or None, "connected_via": account.connected_via,
            "connected_at": account.connected_at}


class StatusView(PlatformAPIView):
    required_scopes = {"GET": None}

    @extend_schema(operation_id="ads_status", responses=s.AdsStatusSerializer)
    def get(self, request):
        account = services.connected_account(self.organization)
        return Response(s.AdsStatusSerializer(status_data(account)).data)


class CampaignViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantViewSet):
    model = AdCampaign
    serializer_class = s.CampaignSerializer
    required_scopes = ANY
    required_roles = WRITERS

    @extend_schema(request=s.CampaignInSerializer, responses={201: s.CampaignSerializer},
                   description="Create a click-to-chat campaign (WhatsApp, Messenger or "
                               "Instagram Direct); it is created paused. Not connected: 400 "
                               "CHANNEL_UNAVAILABLE.")
    def create(self, request):
        body = s.CampaignInSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        services.account_of(self.organization)
        campaign = services.campaign_create(principal=self.principal, request=request,
                                            **body.validated_data)
        return Response(s.CampaignSerializer(campaign).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=s.CampaignUpdateSerializer, responses=s.CampaignSerializer,
                   description="`status: active` starts the campaign, `paused` stops it.")
    def update(self, request, pk=None):
        campaign = self.get_object()
        body = s.CampaignUpdateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        campaign = services.campaign_update(principal=self.principal, campaign=campaign,
                                            request=request, **body.validated_data)
        return Response(s.CampaignSerializer(campaign).data)

    @extend_schema(responses={204: None})
    def destroy(self, request, pk=None):
        services.campaign_delete(principal=self.principal, campaign=self.get_object(),
                                 request=request)
        return Response(status=status.HTTP_204_NO_CONTENT)


class DatasetView(PlatformAPIView):
    required_scopes = {"PUT": None}
    required_roles = WRITERS

    @extend_schema(operation_id="ads_conversions_dataset", request=s.DatasetSerializer,
                   responses=s.AdsStatusSerializer)
    def put(self, request):
        body = s.DatasetSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        services.account_of(self.organization)
        account = services.dataset_set(principal=self.principal, request=request,
                                       **body.validated_data)
        return Response(status_data(account))


class ConversionTestView(PlatformAPIView):
    required_scopes = {"POST": None}
    required_roles = WRITERS
    idempotent_posts = False

    @extend_schema(operation_id="ads_conversions_test", request=None,
                   responses=OpenApiTypes.OBJECT,
                   description="Sends one test Lead event (test_event_code TEST_ENGAGE).")
    def post(self, request):
        services.account_of(self.organization, dataset=True)
        return Response(services.conversion_send(
            principal=self.principal, outcome="lead", user={"external_id": "engage-test-event"},
            event_time=None, channel="whatsapp", test_event_code="TEST_ENGAGE"))


class ConversionView(PlatformAPIView):
    required_scopes = {"POST": None}
    required_roles = WRITERS

    @extend_schema(operation_id="ads_conversions", request=s.ConversionSerializer,
                   responses=OpenApiTypes.OBJECT,
                   description="Forwards an outcome to the Conversions API; email and phone "
                               "are normalised and SHA-256 hashed before they leave.")
    def post(self, request):
        services.account_of(self.organization, dataset=True)
        body = s.ConversionSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        return Response(services.conversion_send(
            principal=self.principal, outcome=data["event"], user=data["user_data"],
            event_time=data.get("event_time"), channel=data["messaging_channel"],
            value=data.get("value"), currency=data.get("currency", ""),
            event_id=data.get("event_id", "")))


class LeadsIngestView(PlatformAPIView):
    required_scopes = {"POST": None}
    required_roles = WRITERS

    @extend_schema(operation_id="ads_leads_ingest", request=s.LeadsIngestSerializer,
                   responses=OpenApiTypes.OBJECT,
                   description="Counts: received, fetched, fetch_failures, skipped_no_contact, "
                               "created, updated, duplicates. A lead that cannot be fetched is "
                               "kept and fetched again later; the batch goes on.")
    def post(self, request):
        services.account_of(self.organization)
        body = s.LeadsIngestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        return Response(services.leads_ingest(organization=self.organization,
                                              batch=body.validated_data))


class AudienceViewSet(mixins.ListModelMixin, TenantViewSet):
    model = AdAudience
    serializer_class = s.AudienceSerializer
    lookup_url_kwarg = "audience_id"
    required_scopes = ANY
    required_roles = WRITERS

    @extend_schema(request=s.AudienceInSerializer, responses={201: s.AudienceSerializer})
    def create(self, request):
        body = s.AudienceInSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        services.account_of(self.organization)
        audience = services.audience_create(principal=self.principal, request=request,
                                            **body.validated_data)
        return Response(s.AudienceSerializer(audience).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=s.SyncSerializer, responses=OpenApiTypes.OBJECT,
                   description="Hashes the segment's emails and phones and adds (or removes) "
                               "them: at most 100,000 members per call, `truncated` beyond.")
    @action(detail=True, methods=["post"], url_path="sync")
    def sync(self, request, audience_id=None):
        audience = self.get_object()
        body = s.SyncSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        return Response(services.audience_sync(principal=self.principal, audience=audience,
                                               **body.validated_data))

    @extend_schema(responses={204: None})
    def destroy(self, request, audience_id=None):
        services.audience_delete(principal=self.principal, audience=self.get_object(),
                                 request=request)
        return Response(status=status.HTTP_204_NO_CONTENT)
