"""Shapes of the ads API (Document 3, 2.5b and 4.9)."""

from __future__ import annotations

import re

from rest_framework import serializers

from ads.models import AdAudience, AdCampaign, CampaignChannel, SyncMode
from ads.services import EVENT_NAMES

ACCOUNT_ID = re.compile(r"(act_)?[0-9]{1,30}")
DATASET_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _account_id(value: str) -> str:
    if not ACCOUNT_ID.fullmatch(value):
        raise serializers.ValidationError("The ad account id: digits, optionally act_ first.")
    return value.removeprefix("act_")


class ConnectSerializer(serializers.Serializer):
    access_token = serializers.CharField(max_length=2048)
    ad_account_id = serializers.CharField(max_length=40, validators=[_account_id])


class OAuthExchangeSerializer(serializers.Serializer):
    code = serializers.CharField(max_length=2048)
    redirect_uri = serializers.URLField(max_length=2048)
    ad_account_id = serializers.CharField(max_length=40, validators=[_account_id])


class AdsStatusSerializer(serializers.Serializer):
    connected = serializers.BooleanField()
    ad_account_id = serializers.CharField(allow_null=True)
    name = serializers.CharField(allow_null=True)
    currency = serializers.CharField(allow_null=True)
    account_status = serializers.CharField(allow_null=True)
    dataset_id = serializers.CharField(allow_null=True)
    connected_via = serializers.CharField(allow_null=True)
    connected_at = serializers.DateTimeField(allow_null=True)


class CampaignInSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    channel = serializers.ChoiceField(choices=CampaignChannel.choices,
                                      default=CampaignChannel.WHATSAPP)
    daily_budget = serializers.IntegerField(min_value=100, max_value=10**11,
                                            help_text="Minor units of the account currency.")


class CampaignUpdateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200, required=False)
    status = serializers.ChoiceField(choices=["paused", "active"], required=False)
    daily_budget = serializers.IntegerField(min_value=100, max_value=10**11, required=False)


class CampaignSerializer(serializers.ModelSerializer):
    class Meta:
        model = AdCampaign
        fields = ["id", "name", "channel", "status", "daily_budget", "external_id",
                  "created_at", "updated_at"]


class DatasetSerializer(serializers.Serializer):
    dataset_id = serializers.CharField(max_length=64)

    def validate_dataset_id(self, value: str) -> str:
        if not DATASET_ID.fullmatch(value):
            raise serializers.ValidationError("Letters, digits, underscores and hyphens only.")
        return value


class UserDataSerializer(serializers.Serializer):
    phone = serializers.CharField(max_length=64, required=False, allow_blank=True)
    email = serializers.CharField(max_length=254, required=False, allow_blank=True)
    external_id = serializers.CharField(max_length=256, required=False, allow_blank=True)
    ctwa_clid = serializers.CharField(max_length=512, required=False, allow_blank=True)


class ConversionSerializer(serializers.Serializer):
    event = serializers.ChoiceField(choices=sorted(EVENT_NAMES), help_text=(
        "lead→Lead, purchase→Purchase, registration→CompleteRegistration, "
        "appointment→Schedule, contact→Contact."))
    user_data = UserDataSerializer()
    event_time = serializers.IntegerField(min_value=0, max_value=10**10, required=False)
    messaging_channel = serializers.ChoiceField(choices=["whatsapp", "messenger", "instagram"],
                                                default="whatsapp")
    value = serializers.DecimalField(max_digits=14, decimal_places=2, required=False,
                                     min_value=0)
    currency = serializers.RegexField(r"^[A-Z]{3}$", required=False)
    event_id = serializers.CharField(max_length=128, required=False)


class LeadsIngestSerializer(serializers.Serializer):
    entry = serializers.ListField(child=serializers.DictField(), max_length=1000,
                                  required=False, help_text="Meta's leadgen webhook entries.")
    leads = serializers.ListField(child=serializers.DictField(), max_length=1000,
                                  required=False, help_text="Or a plain list of leads.")


class AudienceInSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    segment_id = serializers.CharField(max_length=40)


class AudienceSerializer(serializers.ModelSerializer):
    class Meta:
        model = AdAudience
        fields = ["id", "name", "segment_id", "external_id", "last_synced_at", "last_sync",
                  "created_at"]


class SyncSerializer(serializers.Serializer):
    mode = serializers.ChoiceField(choices=SyncMode.choices, default="add")
    segment_id = serializers.CharField(max_length=40, required=False)
