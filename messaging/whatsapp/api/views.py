"""WhatsApp connection, business profile, catalog and send endpoints (Document 2, 4.5),
base `/api/v1/whatsapp`. Calling, block list and flows are in views_calling / views_flows."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response

from platform_core.api.serialization import represent, validated_input
from platform_core.api.views import PlatformAPIView

from .. import selectors
from ..services import catalogs, connections, sends
from ..services.common import connection_get, default_connection
from . import serializers as s
from .common import READ, SEND, WRITE, get_or_404, paginated, sent

_TEST_MODE = ("In test mode the sandbox double answers as Meta does (see docs/whatsapp.md); "
              "live, the call goes to Meta's Graph API with the organization's token.")


class ConnectView(PlatformAPIView):
    required_scopes = {"POST": WRITE}

    @extend_schema(request=s.WhatsAppConnectSerializer, responses={201: s.WhatsAppConnectionSerializer(many=True)},
                   description="Exchange an embedded-signup `code` for a connection: every "
                               "number of `waba_id` becomes a connection (`phone_number_id` "
                               "the default one). The token is kept encrypted. " + _TEST_MODE)
    def post(self, request):
        body = validated_input(s.WhatsAppConnectSerializer, request.data).validated_data
        rows = connections.connect(organization=self.organization, principal=self.principal,
                                   code=body["code"], waba_id=body["waba_id"],
                                   phone_number_id=body.get("phone_number_id"),
                                   business_id=body.get("business_id", ""))
        return Response(represent(s.WhatsAppConnectionSerializer, rows, many=True),
                        status=status.HTTP_201_CREATED)


class StatusView(PlatformAPIView):
    required_scopes = {"GET": READ}

    @extend_schema(responses=s.WhatsAppStatusSerializer, description="Connection summary.")
    def get(self, request):
        return Response(selectors.status_summary(self.organization))


class ConnectionListView(PlatformAPIView):
    required_scopes = {"GET": READ}

    @extend_schema(responses=s.WhatsAppConnectionSerializer(many=True),
                   description="Connected phone numbers, cursor-paginated.")
    def get(self, request):
        return paginated(self, selectors.connections(self.organization), s.WhatsAppConnectionSerializer)


class ConnectionDefaultView(PlatformAPIView):
    required_scopes = {"PUT": WRITE}

    @extend_schema(request=None, responses=s.WhatsAppConnectionSerializer,
                   description="Make this number the default sender (the others lose it).")
    def put(self, request, phone_number_id: str):
        connection = connections.set_default(organization=self.organization,
                                             principal=self.principal,
                                             phone_number_id=phone_number_id)
        return Response(represent(s.WhatsAppConnectionSerializer, connection))


class ConnectionDetailView(PlatformAPIView):
    required_scopes = {"PATCH": WRITE, "DELETE": WRITE}

    @extend_schema(request=s.WhatsAppConnectionUpdateSerializer, responses=s.WhatsAppConnectionSerializer,
                   description="Update `display_name` (our label) or `routing` (queue, "
                               "agent_id, team_id, messaging_service_id).")
    def patch(self, request, phone_number_id: str):
        connection_get(self.organization, phone_number_id)
        body = validated_input(s.WhatsAppConnectionUpdateSerializer, request.data).validated_data
        connection = connections.update(organization=self.organization, principal=self.principal,
                                        phone_number_id=phone_number_id, changes=dict(body))
        return Response(represent(s.WhatsAppConnectionSerializer, connection))

    @extend_schema(responses={204: None}, description="Unlink one number (deregistered at "
                   "Meta). The last one unlinked also removes the credentials.")
    def delete(self, request, phone_number_id: str):
        connections.unlink(organization=self.organization, principal=self.principal,
                           phone_number_id=phone_number_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class DisconnectView(PlatformAPIView):
    required_scopes = {"DELETE": WRITE}

    @extend_schema(responses={204: None, 409: OpenApiResponse(
        description="WHATSAPP_NOT_CONNECTED")},
        description="Remove the entire connection: every number and the stored credentials.")
    def delete(self, request):
        connections.disconnect(organization=self.organization, principal=self.principal)
        return Response(status=status.HTTP_204_NO_CONTENT)


class BusinessProfileView(PlatformAPIView):
    required_scopes = {"GET": READ, "PUT": WRITE}

    @extend_schema(responses=s.WhatsAppProfileSerializer,
                   description="The default number's profile (query `phone_number_id` for "
                               "another); `review_status` pending_review while Meta reviews "
                               "an update, `pending` the changes.")
    def get(self, request):
        connection = default_connection(self.organization,
                                         request.query_params.get("phone_number_id"))
        profile = connections.profile_get(organization=self.organization, connection=connection)
        return Response(represent(s.WhatsAppProfileSerializer, profile))

    @extend_schema(request=s.WhatsAppProfileUpdateSerializer, responses={202: s.WhatsAppProfileSerializer},
                   description="Submit profile changes: 202, subject to Meta's review. "
                               + _TEST_MODE)
    def put(self, request):
        body = dict(validated_input(s.WhatsAppProfileUpdateSerializer, request.data).validated_data)
        connection = default_connection(self.organization, body.pop("phone_number_id", None))
        profile = connections.profile_update(organization=self.organization,
                                             principal=self.principal, connection=connection,
                                             changes=body)
        return Response(represent(s.WhatsAppProfileSerializer, profile), status=status.HTTP_202_ACCEPTED)


class BusinessCatalogsView(PlatformAPIView):
    required_scopes = {"GET": READ}

    @extend_schema(responses=s.WhatsAppBusinessCatalogSerializer(many=True),
                   description="Catalogs Meta holds on one of the connected businesses.")
    def get(self, request, business_id: str):
        rows = catalogs.business_catalogs(organization=self.organization,
                                          business_id=business_id)
        return Response(represent(s.WhatsAppBusinessCatalogSerializer, rows, many=True))


class CatalogListView(PlatformAPIView):
    required_scopes = {"GET": READ, "POST": WRITE}

    @extend_schema(responses=s.WhatsAppCatalogSerializer(many=True), description="Catalogs, paginated.")
    def get(self, request):
        return paginated(self, selectors.catalogs(self.organization), s.WhatsAppCatalogSerializer)

    @extend_schema(request=s.WhatsAppCatalogCreateSerializer, responses={201: s.WhatsAppCatalogSerializer},
                   description="Create a catalog on the business (default: the default "
                               "connection's `business_id`).")
    def post(self, request):
        body = validated_input(s.WhatsAppCatalogCreateSerializer, request.data).validated_data
        catalog = catalogs.catalog_create(organization=self.organization,
                                          principal=self.principal, name=body["name"],
                                          vertical=body["vertical"],
                                          business_id=body.get("business_id"))
        catalog.product_count = 0
        return Response(represent(s.WhatsAppCatalogSerializer, catalog), status=status.HTTP_201_CREATED)


class CatalogDetailView(PlatformAPIView):
    required_scopes = {"DELETE": WRITE}

    @extend_schema(responses={204: None}, description="Remove a catalog and its products.")
    def delete(self, request, catalog_id: str):
        catalog = get_or_404(selectors.catalogs(self.organization), catalog_id)
        catalogs.catalog_delete(organization=self.organization, principal=self.principal,
                                catalog=catalog)
        return Response(status=status.HTTP_204_NO_CONTENT)


class CatalogProductsView(PlatformAPIView):
    required_scopes = {"GET": READ, "POST": WRITE}

    def _catalog(self, catalog_id: str):
        from ..models import Catalog

        return get_or_404(Catalog.objects.for_organization(self.organization), catalog_id)

    @extend_schema(responses=s.WhatsAppProductSerializer(many=True), description="Products, paginated.")
    def get(self, request, catalog_id: str):
        catalog = self._catalog(catalog_id)
        return paginated(self, selectors.products(self.organization, catalog), s.WhatsAppProductSerializer)

    @extend_schema(request=s.WhatsAppProductWriteSerializer, responses={201: s.WhatsAppProductSerializer},
                   description="Add a product (`retailer_id` unique in the catalog: 409 "
                               "ALREADY_EXISTS).")
    def post(self, request, catalog_id: str):
        catalog = self._catalog(catalog_id)
        body = validated_input(s.WhatsAppProductWriteSerializer, request.data).validated_data
        product = catalogs.product_create(organization=self.organization,
                                          principal=self.principal, catalog=catalog,
                                          values=dict(body))
        return Response(represent(s.WhatsAppProductSerializer, product), status=status.HTTP_201_CREATED)


class ProductDetailView(PlatformAPIView):
    required_scopes = {"PUT": WRITE, "DELETE": WRITE}

    def _product(self, product_id: str):
        from ..models import Product

        return get_or_404(Product.objects.for_organization(self.organization), product_id)

    @extend_schema(request=s.WhatsAppProductWriteSerializer, responses=s.WhatsAppProductSerializer,
                   description="Replace a product's fields.")
    def put(self, request, product_id: str):
        product = self._product(product_id)
        body = validated_input(s.WhatsAppProductWriteSerializer, request.data).validated_data
        product = catalogs.product_update(organization=self.organization,
                                          principal=self.principal, product=product,
                                          values=dict(body))
        return Response(represent(s.WhatsAppProductSerializer, product))

    @extend_schema(responses={204: None}, description="Remove a product.")
    def delete(self, request, product_id: str):
        catalogs.product_delete(organization=self.organization, principal=self.principal,
                                product=self._product(product_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


_SESSION = ("Only inside the 24-hour window (the user wrote in the last 24 hours): else 422 "
            "WHATSAPP_OUTSIDE_WINDOW; a blocked user 422 WHATSAPP_USER_BLOCKED. 202: the "
            "message goes through the messaging pipeline (GET /api/v1/messages/{id}).")


class CatalogSendView(PlatformAPIView):
    required_scopes = {"POST": SEND}

    @extend_schema(request=s.WhatsAppProductSendSerializer, responses={202: s.WhatsAppSentSerializer},
                   description="Single-product message. " + _SESSION)
    def post(self, request):
        body = validated_input(s.WhatsAppProductSendSerializer, request.data).validated_data
        message = sends.send_product(organization=self.organization, principal=self.principal,
                                     **body)
        return Response(sent(message), status=status.HTTP_202_ACCEPTED)


class CatalogSendListView(PlatformAPIView):
    required_scopes = {"POST": SEND}

    @extend_schema(request=s.WhatsAppProductListSendSerializer, responses={202: s.WhatsAppSentSerializer},
                   description="Multi-product message: `header`, `body`, 1-10 titled "
                               "`sections` of `product_items`, at most 30 products. " + _SESSION)
    def post(self, request):
        body = validated_input(s.WhatsAppProductListSendSerializer, request.data).validated_data
        message = sends.send_product_list(organization=self.organization,
                                          principal=self.principal, **body)
        return Response(sent(message), status=status.HTTP_202_ACCEPTED)


class InteractiveSendView(PlatformAPIView):
    required_scopes = {"POST": SEND}

    @extend_schema(request=s.WhatsAppInteractiveSendSerializer, responses={202: s.WhatsAppSentSerializer},
                   description="Reply buttons (1-3, each `id` and `title` of at most 20 "
                               "characters) or a list menu (`button`, 1-10 `sections` of 1-10 "
                               "`rows`); every limit a 422 naming the field. Taps come back on "
                               "the inbound webhook as `button_reply` / `list_reply` "
                               "(message metadata `interactive_reply`). " + _SESSION)
    def post(self, request):
        body = validated_input(s.WhatsAppInteractiveSendSerializer, request.data).validated_data
        message = sends.send_interactive(organization=self.organization,
                                         principal=self.principal, **body)
        return Response(sent(message), status=status.HTTP_202_ACCEPTED)


class MarketingSendView(PlatformAPIView):
    required_scopes = {"POST": SEND}

    @extend_schema(request=s.WhatsAppMarketingSendSerializer, responses={202: s.WhatsAppMarketingSentSerializer},
                   description="Send an approved MARKETING-category WhatsApp template through "
                               "the Marketing Messages API (send-time optimization). Another "
                               "category: 422 WHATSAPP_TEMPLATE_NOT_MARKETING; unknown or not "
                               "approved: 422 INVALID_TEMPLATE. `tracking_id` is echoed on "
                               "every message.* status event.")
    def post(self, request):
        body = validated_input(s.WhatsAppMarketingSendSerializer, request.data).validated_data
        message = sends.send_marketing(organization=self.organization, principal=self.principal,
                                       to=body["to"], template_name=body["template_name"],
                                       language=body.get("language"),
                                       variables=body.get("variables"),
                                       tracking_id=body.get("tracking_id"))
        return Response({**sent(message), "tracking_id": body.get("tracking_id")},
                        status=status.HTTP_202_ACCEPTED)
