"""Request and response shapes of the WhatsApp endpoints. Request bodies the document
leaves open use the Graph API's own field names (waba_id, phone_number_id, retailer_id,
block_users[].user, flow_cta, flow_token...)."""

from __future__ import annotations

import re

from rest_framework import serializers

from ..models import FLOW_CATEGORIES, PROFILE_FIELDS, Availability

_DIGITS = re.compile(r"^\d{1,64}$")


def _meta_id(value: str) -> str:
    if not _DIGITS.match(value):
        raise serializers.ValidationError("A Meta id is a string of digits.")
    return value


# --- Connections ------------------------------------------------------------------------

class WhatsAppConnectSerializer(serializers.Serializer):
    code = serializers.CharField(max_length=2048, help_text="The embedded-signup code.")
    waba_id = serializers.CharField(max_length=64, validators=[_meta_id])
    phone_number_id = serializers.CharField(max_length=64, required=False,
                                            validators=[_meta_id],
                                            help_text="The number to make default.")
    business_id = serializers.CharField(max_length=64, required=False, validators=[_meta_id])


class WhatsAppConnectionSerializer(serializers.Serializer):
    id = serializers.CharField()
    phone_number_id = serializers.CharField()
    waba_id = serializers.CharField()
    business_id = serializers.CharField()
    display_phone_number = serializers.CharField()
    verified_name = serializers.CharField()
    display_name = serializers.CharField()
    quality_rating = serializers.CharField()
    routing = serializers.JSONField()
    is_default = serializers.BooleanField()
    calling_enabled = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


ROUTING_KEYS = {"queue": 100, "agent_id": 40, "team_id": 40, "messaging_service_id": 40}


class WhatsAppConnectionUpdateSerializer(serializers.Serializer):
    display_name = serializers.CharField(max_length=255, required=False, allow_blank=True)
    routing = serializers.JSONField(required=False,
                                    help_text="Object with any of queue, agent_id, team_id, "
                                              "messaging_service_id (strings or null).")

    def validate_routing(self, value):
        if not isinstance(value, dict):
            raise serializers.ValidationError("routing is an object.")
        unknown = sorted(set(value) - set(ROUTING_KEYS))
        if unknown:
            raise serializers.ValidationError(f"Unknown routing keys: {', '.join(unknown)}.")
        for key, item in value.items():
            if item is not None and (not isinstance(item, str) or len(item) > ROUTING_KEYS[key]):
                raise serializers.ValidationError(
                    f"{key} is a string of at most {ROUTING_KEYS[key]} characters or null.")
        return {k: v for k, v in value.items() if v is not None}

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError("Give display_name or routing.")
        return attrs


class WhatsAppStatusSerializer(serializers.Serializer):
    connected = serializers.BooleanField()
    mode = serializers.CharField()
    waba_ids = serializers.ListField(child=serializers.CharField())
    business_ids = serializers.ListField(child=serializers.CharField())
    connection_count = serializers.IntegerField()
    default_phone_number_id = serializers.CharField(allow_null=True)
    default_display_phone_number = serializers.CharField(allow_null=True)
    credentials_configured = serializers.BooleanField()
    calling_enabled_count = serializers.IntegerField()


# --- Business profile -----------------------------------------------------------------

VERTICALS = ("UNDEFINED", "OTHER", "AUTO", "BEAUTY", "APPAREL", "EDU", "ENTERTAIN",
             "EVENT_PLAN", "FINANCE", "GROCERY", "GOVT", "HOTEL", "HEALTH", "NONPROFIT",
             "PROF_SERVICES", "RETAIL", "TRAVEL", "RESTAURANT", "NOT_A_BIZ")


class WhatsAppProfileUpdateSerializer(serializers.Serializer):
    phone_number_id = serializers.CharField(max_length=64, required=False,
                                            validators=[_meta_id])
    about = serializers.CharField(max_length=139, required=False, allow_blank=True)
    address = serializers.CharField(max_length=256, required=False, allow_blank=True)
    description = serializers.CharField(max_length=512, required=False, allow_blank=True)
    email = serializers.EmailField(max_length=128, required=False, allow_blank=True)
    websites = serializers.ListField(child=serializers.URLField(max_length=256),
                                     max_length=2, required=False)
    vertical = serializers.ChoiceField(choices=VERTICALS, required=False)
    profile_picture_url = serializers.URLField(max_length=2048, required=False,
                                               allow_blank=True)

    def validate(self, attrs):
        if not any(k in attrs for k in PROFILE_FIELDS):
            raise serializers.ValidationError(f"Give at least one of {', '.join(PROFILE_FIELDS)}.")
        return attrs


class WhatsAppProfileSerializer(serializers.Serializer):
    phone_number_id = serializers.CharField(source="connection.phone_number_id")
    about = serializers.CharField()
    address = serializers.CharField()
    description = serializers.CharField()
    email = serializers.CharField()
    websites = serializers.JSONField()
    vertical = serializers.CharField()
    profile_picture_url = serializers.CharField()
    review_status = serializers.CharField()
    pending = serializers.JSONField(help_text="Changes under Meta's review.")
    submitted_at = serializers.DateTimeField(allow_null=True)
    updated_at = serializers.DateTimeField()


# --- Catalogs and products -------------------------------------------------------------

class WhatsAppCatalogCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=255)
    vertical = serializers.ChoiceField(choices=("commerce", "hotels", "flights",
                                                "destinations", "home_listings", "vehicles"),
                                       default="commerce")
    business_id = serializers.CharField(max_length=64, required=False, validators=[_meta_id])


class WhatsAppCatalogSerializer(serializers.Serializer):
    id = serializers.CharField()
    meta_catalog_id = serializers.CharField()
    business_id = serializers.CharField()
    name = serializers.CharField()
    vertical = serializers.CharField()
    product_count = serializers.IntegerField(required=False)
    created_at = serializers.DateTimeField()


class WhatsAppBusinessCatalogSerializer(serializers.Serializer):
    id = serializers.CharField(allow_null=True, help_text="Ours, null when not created here.")
    meta_catalog_id = serializers.CharField()
    business_id = serializers.CharField()
    name = serializers.CharField(allow_null=True)
    vertical = serializers.CharField(allow_null=True)
    product_count = serializers.IntegerField(allow_null=True)


_CURRENCY = re.compile(r"^[A-Z]{3}$")


class WhatsAppProductWriteSerializer(serializers.Serializer):
    retailer_id = serializers.CharField(max_length=100, help_text="The SKU.")
    name = serializers.CharField(max_length=150)
    description = serializers.CharField(max_length=5000, required=False, allow_blank=True)
    price = serializers.IntegerField(min_value=0, max_value=10**12,
                                     help_text="Minor units (cents), as Graph takes it.")
    currency = serializers.RegexField(_CURRENCY, help_text="ISO 4217, e.g. USD.")
    image_url = serializers.URLField(max_length=2048)
    url = serializers.URLField(max_length=2048, required=False, allow_blank=True)
    availability = serializers.ChoiceField(choices=Availability.values,
                                           default=Availability.IN_STOCK)


class WhatsAppProductSerializer(serializers.Serializer):
    id = serializers.CharField()
    catalog_id = serializers.CharField()
    meta_product_id = serializers.CharField()
    retailer_id = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField()
    price = serializers.IntegerField()
    currency = serializers.CharField()
    image_url = serializers.CharField()
    url = serializers.CharField()
    availability = serializers.CharField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class WhatsAppProductSendSerializer(serializers.Serializer):
    to = serializers.CharField(max_length=64, help_text="Phone number or contact id.")
    catalog_id = serializers.CharField(max_length=64, help_text="Ours (wct_) or Meta's.")
    product_retailer_id = serializers.CharField(max_length=100)
    body = serializers.CharField(required=False, allow_blank=True, max_length=4096)
    footer = serializers.CharField(required=False, allow_blank=True, max_length=4096)


class WhatsAppProductListSendSerializer(serializers.Serializer):
    to = serializers.CharField(max_length=64)
    catalog_id = serializers.CharField(max_length=64)
    header = serializers.CharField(max_length=4096)
    body = serializers.CharField(max_length=4096)
    footer = serializers.CharField(required=False, allow_blank=True, max_length=4096)
    sections = serializers.JSONField(help_text='[{"title", "product_items": '
                                               '[{"product_retailer_id"}]}], 1-10 sections, '
                                               'at most 30 products.')


class WhatsAppSentSerializer(serializers.Serializer):
    message_id = serializers.CharField()
    status = serializers.CharField()
    channel = serializers.CharField()
    to = serializers.CharField()


# --- Calling ------------------------------------------------------------------------------

class WhatsAppCallingStateSerializer(serializers.Serializer):
    phone_number_id = serializers.CharField()
    status = serializers.CharField()
    settings = serializers.JSONField()
    calls_webhook_registered = serializers.BooleanField()
    fetched_at = serializers.CharField()
    cached = serializers.BooleanField()


class WhatsAppCallStartSerializer(serializers.Serializer):
    to = serializers.CharField(max_length=64, help_text="Phone number or contact id.")
    phone_number_id = serializers.CharField(max_length=64, required=False,
                                            validators=[_meta_id])
    session = serializers.JSONField(required=False, help_text='WebRTC offer: {"sdp_type": '
                                                              '"offer", "sdp": "..."}')

    def validate_session(self, value):
        if value is None:
            return None
        if not isinstance(value, dict) or not isinstance(value.get("sdp"), str) or \
                value.get("sdp_type") not in ("offer", "answer"):
            raise serializers.ValidationError('session is {"sdp_type", "sdp"}.')
        if len(value["sdp"]) > 20_000:
            raise serializers.ValidationError("sdp is at most 20000 characters.")
        return {"sdp_type": value["sdp_type"], "sdp": value["sdp"]}


class WhatsAppCallAnswerSerializer(serializers.Serializer):
    session = serializers.JSONField(required=False)
    validate_session = WhatsAppCallStartSerializer.validate_session


class WhatsAppCallSerializer(serializers.Serializer):
    id = serializers.CharField()
    meta_call_id = serializers.CharField()
    phone_number_id = serializers.SerializerMethodField()
    direction = serializers.CharField()
    from_ = serializers.SerializerMethodField()
    to = serializers.SerializerMethodField()
    contact_id = serializers.CharField(allow_null=True)
    status = serializers.CharField()
    answered_at = serializers.DateTimeField(allow_null=True)
    ended_at = serializers.DateTimeField(allow_null=True)
    duration_seconds = serializers.IntegerField()
    cost = serializers.DecimalField(max_digits=12, decimal_places=4)
    created_at = serializers.DateTimeField()

    def get_phone_number_id(self, obj) -> str | None:
        return obj.connection.phone_number_id if obj.connection_id else None

    def _number(self, value: str) -> str:
        if self.context.get("mask"):
            from contacts.segments.masking import mask_phone

            return mask_phone(value)
        return value

    def get_from_(self, obj) -> str:
        return self._number(obj.from_number)

    def get_to(self, obj) -> str:
        return self._number(obj.to_number)

    def to_representation(self, instance):
        data = super().to_representation(instance)
        data["from"] = data.pop("from_")
        return data


# --- Block list -----------------------------------------------------------------------

class WhatsAppBlockSerializer(serializers.Serializer):
    block_users = serializers.JSONField(help_text='[{"user": "+14155550123" | "cnt_..."}], '
                                                  "at most 100.")


class WhatsAppBlockedUserSerializer(serializers.Serializer):
    id = serializers.CharField()
    user = serializers.CharField(source="phone")
    contact_id = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()


# --- Sends --------------------------------------------------------------------------------

class WhatsAppInteractiveSendSerializer(serializers.Serializer):
    to = serializers.CharField(max_length=64)
    body = serializers.CharField(max_length=4096)
    header = serializers.CharField(required=False, allow_blank=True, max_length=4096)
    footer = serializers.CharField(required=False, allow_blank=True, max_length=4096)
    action = serializers.JSONField(help_text='{"buttons": [{"id", "title"}]} (1-3) or '
                                             '{"button", "sections": [{"title", "rows": '
                                             '[{"id", "title", "description"?}]}]} (10 x 10).')


class WhatsAppFlowSendSerializer(serializers.Serializer):
    to = serializers.CharField(max_length=64)
    flow_id = serializers.CharField(max_length=40)
    flow_cta = serializers.CharField(max_length=4096)
    body = serializers.CharField(max_length=4096)
    header = serializers.CharField(required=False, allow_blank=True, max_length=4096)
    footer = serializers.CharField(required=False, allow_blank=True, max_length=4096)
    flow_token = serializers.CharField(required=False, max_length=4096)
    flow_action = serializers.CharField(required=False, max_length=32)
    screen = serializers.CharField(required=False, max_length=64)
    data = serializers.JSONField(required=False)


class WhatsAppFlowSentSerializer(WhatsAppSentSerializer):
    flow_id = serializers.CharField()
    flow_token = serializers.CharField()


class WhatsAppMarketingSendSerializer(serializers.Serializer):
    to = serializers.CharField(max_length=64)
    template_name = serializers.CharField(max_length=512)
    language = serializers.CharField(max_length=35, required=False)
    variables = serializers.JSONField(required=False)
    tracking_id = serializers.CharField(max_length=512, required=False)


class WhatsAppMarketingSentSerializer(WhatsAppSentSerializer):
    tracking_id = serializers.CharField(allow_null=True)


# --- Flows --------------------------------------------------------------------------------

class WhatsAppFlowCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    categories = serializers.ListField(child=serializers.ChoiceField(choices=FLOW_CATEGORIES),
                                       min_length=1, max_length=len(FLOW_CATEGORIES))

    def validate_categories(self, value):
        return list(dict.fromkeys(value))


class WhatsAppFlowAssetsSerializer(serializers.Serializer):
    flow_json = serializers.JSONField(help_text="The flow JSON definition (version, screens).")


class WhatsAppFlowSerializer(serializers.Serializer):
    id = serializers.CharField()
    meta_flow_id = serializers.CharField()
    waba_id = serializers.CharField()
    name = serializers.CharField()
    categories = serializers.JSONField()
    status = serializers.CharField()
    json_version = serializers.CharField()
    has_assets = serializers.SerializerMethodField()
    published_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    def get_has_assets(self, obj) -> bool:
        return obj.definition is not None


class WhatsAppFlowDetailSerializer(WhatsAppFlowSerializer):
    flow_json = serializers.JSONField(source="definition", allow_null=True)
