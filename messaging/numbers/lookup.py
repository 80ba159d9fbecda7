"""Offline number lookup with `phonenumbers` (Document 2, 4.4): validity, type, country,
carrier and time zones where the library's metadata knows them.

An answer is always produced (the Twilio Lookup way): a number that cannot be parsed or is
not valid answers `valid: false` with `validation_errors` saying why, so a pre-send check
reads one shape. National input is read with the organization's `default_country`.
Carrier names come from the library's prefix data: the original carrier of the range,
known for mobile ranges of many countries; ported numbers keep the original name, and
countries with number portability across ranges (the US, Canada) have none.
"""

from __future__ import annotations

from typing import Any

import phonenumbers
from phonenumbers import PhoneNumberType, carrier, geocoder
from phonenumbers import timezone as number_timezones
from phonenumbers.phonenumberutil import ValidationResult

NUMBER_TYPES = {
    PhoneNumberType.FIXED_LINE: "fixed_line",
    PhoneNumberType.MOBILE: "mobile",
    PhoneNumberType.FIXED_LINE_OR_MOBILE: "fixed_line_or_mobile",
    PhoneNumberType.TOLL_FREE: "toll_free",
    PhoneNumberType.PREMIUM_RATE: "premium_rate",
    PhoneNumberType.SHARED_COST: "shared_cost",
    PhoneNumberType.VOIP: "voip",
    PhoneNumberType.PERSONAL_NUMBER: "personal",
    PhoneNumberType.PAGER: "pager",
    PhoneNumberType.UAN: "uan",
    PhoneNumberType.VOICEMAIL: "voicemail",
    PhoneNumberType.UNKNOWN: "unknown",
}

_POSSIBILITY_ERRORS = {
    ValidationResult.INVALID_COUNTRY_CODE: "INVALID_COUNTRY_CODE",
    ValidationResult.TOO_SHORT: "TOO_SHORT",
    ValidationResult.TOO_LONG: "TOO_LONG",
    ValidationResult.INVALID_LENGTH: "INVALID_LENGTH",
}

_PARSE_ERRORS = {
    phonenumbers.NumberParseException.INVALID_COUNTRY_CODE: "INVALID_COUNTRY_CODE",
    phonenumbers.NumberParseException.NOT_A_NUMBER: "NOT_A_NUMBER",
    phonenumbers.NumberParseException.TOO_SHORT_AFTER_IDD: "TOO_SHORT",
    phonenumbers.NumberParseException.TOO_SHORT_NSN: "TOO_SHORT",
    phonenumbers.NumberParseException.TOO_LONG: "TOO_LONG",
}

MAX_INPUT_LENGTH = 64
LOCALE = "en"


def _empty(raw: str, errors: list[str]) -> dict[str, Any]:
    return {
        "phone_number": raw, "valid": False, "possible": False, "validation_errors": errors,
        "e164": None, "national_format": None, "international_format": None,
        "country_code": None, "region": None, "location": None, "type": None,
        "carrier": None, "time_zones": [],
    }


def lookup(raw: str, *, default_country: str) -> dict[str, Any]:
    """The lookup record of `raw` (E.164, or national for `default_country`)."""
    text = (raw or "").strip()
    try:
        number = phonenumbers.parse(text, (default_country or "US").upper())
    except phonenumbers.NumberParseException as exc:
        return _empty(text, [_PARSE_ERRORS.get(exc.error_type, "NOT_A_NUMBER")])
    valid = phonenumbers.is_valid_number(number)
    possibility = phonenumbers.is_possible_number_with_reason(number)
    errors: list[str] = []
    if possibility in _POSSIBILITY_ERRORS:
        errors.append(_POSSIBILITY_ERRORS[possibility])
    elif not valid:
        errors.append("INVALID_NUMBER")
    region = phonenumbers.region_code_for_number(number)
    kind = phonenumbers.number_type(number) if valid else None
    carrier_name = carrier.name_for_number(number, LOCALE) if valid else ""
    zones = [z for z in number_timezones.time_zones_for_number(number)
             if z != number_timezones.UNKNOWN_TIMEZONE] if valid else []
    location = geocoder.description_for_number(number, LOCALE) if valid else ""
    return {
        "phone_number": text,
        "valid": valid,
        "possible": possibility in (ValidationResult.IS_POSSIBLE,
                                    ValidationResult.IS_POSSIBLE_LOCAL_ONLY),
        "validation_errors": errors,
        "e164": phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
        if valid else None,
        "national_format": phonenumbers.format_number(
            number, phonenumbers.PhoneNumberFormat.NATIONAL) if valid else None,
        "international_format": phonenumbers.format_number(
            number, phonenumbers.PhoneNumberFormat.INTERNATIONAL) if valid else None,
        "country_code": number.country_code,
        "region": region if region and region != phonenumbers.UNKNOWN_REGION else None,
        "location": location or None,
        "type": NUMBER_TYPES.get(kind, "unknown") if kind is not None else None,
        "carrier": carrier_name or None,
        "time_zones": zones,
    }
