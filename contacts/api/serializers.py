from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from contacts.models import Contact, ContactList, ExportFormat, ExportJob, ListMembership
from contacts.services import BULK_ADD_MAX


class ContactSerializer(serializers.ModelSerializer):
    phone = serializers.SerializerMethodField(help_text="E.164, or null.")
    email = serializers.SerializerMethodField(help_text="Lower-cased, or null.")
    custom_fields = serializers.JSONField(
        help_text="Object of string, number or boolean values.")
    tags = serializers.ListField(child=serializers.CharField())

    class Meta:
        model = Contact
        fields = ["id", "first_name", "last_name", "phone", "email", "custom_fields", "tags",
                  "created_at", "updated_at"]

    def get_phone(self, obj: Contact) -> str | None:
        return obj.phone or None

    def get_email(self, obj: Contact) -> str | None:
        return obj.email or None


@extend_schema_field(OpenApiTypes.OBJECT)
class _AnyJSON(serializers.JSONField):
    pass


class ContactWriteSerializer(serializers.Serializer):
    """Types only; the contacts services normalize and enforce the limits."""

    first_name = serializers.CharField(max_length=255, required=False, allow_blank=True,
                                       allow_null=True, trim_whitespace=True)
    last_name = serializers.CharField(max_length=255, required=False, allow_blank=True,
                                      allow_null=True, trim_whitespace=True)
    phone = serializers.CharField(
        max_length=40, required=False, allow_blank=True, allow_null=True,
        help_text="E.164 or national (read with the organization's default_country); "
                  "null or empty clears. Invalid: 422 INVALID_PHONE_NUMBER.")
    email = serializers.CharField(
        max_length=254, required=False, allow_blank=True, allow_null=True,
        help_text="Stored lower-cased; null or empty clears. Invalid: 422 INVALID_EMAIL.")
    custom_fields = _AnyJSON(
        required=False, allow_null=True,
        help_text="Up to 100 keys (1-64 chars of letters, digits, `_`, `-`); values are "
                  "strings (up to 2000 chars), numbers or booleans. On PATCH the keys are "
                  "merged and a null value removes a key.")
    tags = serializers.JSONField(
        required=False, allow_null=True,
        help_text="Up to 50 strings of 1-64 chars; replaces the whole list on PATCH.")


class ContactMergeSerializer(serializers.Serializer):
    source_id = serializers.CharField(
        max_length=64, help_text="The duplicate contact merged into this one and deleted.")


class ContactListSerializer(serializers.ModelSerializer):
    class Meta:
        model = ContactList
        fields = ["id", "name", "description", "contact_count", "created_at", "updated_at"]


class ContactListWriteSerializer(serializers.Serializer):
    name = serializers.CharField(min_length=1, max_length=255, trim_whitespace=True)
    description = serializers.CharField(max_length=1000, required=False, allow_null=True,
                                        allow_blank=True, trim_whitespace=False)


class ContactListDuplicateSerializer(serializers.Serializer):
    name = serializers.CharField(min_length=1, max_length=255, required=False,
                                 help_text='Default: "<name> (copy)".')


class ListStatsSerializer(serializers.Serializer):
    list_id = serializers.CharField()
    contact_count = serializers.IntegerField()
    with_phone = serializers.IntegerField()
    with_email = serializers.IntegerField()
    without_phone_or_email = serializers.IntegerField()
    added_last_7_days = serializers.IntegerField()
    added_last_30_days = serializers.IntegerField()


class ListMemberSerializer(serializers.ModelSerializer):
    """A member row (Document 2, 2.1): `id` and `contact_id` are both the contact's id."""

    id = serializers.CharField(source="contact_id")
    list_id = serializers.CharField(source="contact_list_id")
    contact_id = serializers.CharField()
    first_name = serializers.CharField(source="contact.first_name")
    last_name = serializers.CharField(source="contact.last_name")
    phone = serializers.SerializerMethodField()
    email = serializers.SerializerMethodField()

    class Meta:
        model = ListMembership
        fields = ["id", "list_id", "contact_id", "first_name", "last_name", "phone", "email",
                  "added_at"]

    def get_phone(self, obj: ListMembership) -> str | None:
        return obj.contact.phone or None

    def get_email(self, obj: ListMembership) -> str | None:
        return obj.contact.email or None


class MemberAddSerializer(serializers.Serializer):
    identifier = serializers.CharField(
        max_length=254, help_text="Contact id, phone (national or E.164) or email.")


class MemberAddResultSerializer(serializers.Serializer):
    list_id = serializers.CharField()
    contact_id = serializers.CharField()
    already_member = serializers.BooleanField()


class BulkAddSerializer(serializers.Serializer):
    contact_ids = serializers.ListField(
        child=serializers.CharField(max_length=255), allow_empty=False,
        max_length=BULK_ADD_MAX, help_text=f"Up to {BULK_ADD_MAX} contact ids.")


class BulkAddResultSerializer(serializers.Serializer):
    added = serializers.IntegerField(help_text="Memberships created by this call.")
    failed_contact_ids = serializers.ListField(
        child=serializers.CharField(), help_text="Ids that name no contact of this organization.")


class ExportFilterSerializer(serializers.Serializer):
    """The export body: every given filter must match (AND)."""

    list_id = serializers.CharField(max_length=64, required=False, allow_null=True,
                                    allow_blank=True, help_text="Only members of this list.")
    q = serializers.CharField(max_length=500, required=False, allow_blank=True,
                              allow_null=True, help_text="As `q` of GET /contacts.")
    tags = serializers.ListField(child=serializers.CharField(max_length=64), required=False,
                                 max_length=50, help_text="Contacts carrying every tag.")
    contact_ids = serializers.ListField(child=serializers.CharField(max_length=64),
                                        required=False, max_length=10_000,
                                        help_text="Only these contacts.")


class BulkExportSerializer(ExportFilterSerializer):
    format = serializers.ChoiceField(choices=ExportFormat.choices, required=False,
                                     default=ExportFormat.CSV)
    filename = serializers.CharField(max_length=200, required=False, allow_blank=True)


class ExportJobSerializer(serializers.ModelSerializer):
    status = serializers.CharField(help_text="queued, running, succeeded or failed.")
    format = serializers.CharField(help_text="csv or xlsx.")
    progress = serializers.SerializerMethodField(help_text="rows_done / rows_total, 0..1.")
    download_url = serializers.SerializerMethodField(
        help_text="Signed URL of the file once the job has succeeded.")
    download_expires_at = serializers.SerializerMethodField()
    file_id = serializers.CharField(allow_null=True)
    error = serializers.SerializerMethodField()

    class Meta:
        model = ExportJob
        fields = ["id", "status", "format", "filename", "filters", "rows_done", "rows_total",
                  "progress", "file_id", "download_url", "download_expires_at", "error",
                  "created_at", "started_at", "finished_at"]

    def _signed(self, obj: ExportJob):
        if obj.status != "succeeded" or obj.file is None:
            return None
        cache = self.context.setdefault("_signed", {})
        if obj.pk not in cache:
            from platform_core.files.signed_urls import signed_url

            cache[obj.pk] = signed_url(obj.file)
        return cache[obj.pk]

    def get_progress(self, obj: ExportJob) -> float | None:
        if obj.status == "succeeded":
            return 1.0
        if not obj.rows_total:
            return 0.0 if obj.rows_total == 0 else None
        return round(min(obj.rows_done / obj.rows_total, 1.0), 4)

    def get_download_url(self, obj: ExportJob) -> str | None:
        signed = self._signed(obj)
        return signed.url if signed else None

    def get_download_expires_at(self, obj: ExportJob) -> str | None:
        signed = self._signed(obj)
        return serializers.DateTimeField().to_representation(signed.expires_at) if signed else None

    def get_error(self, obj: ExportJob) -> str | None:
        return obj.error or None
