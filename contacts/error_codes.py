"""Error codes of the contacts family (Document 1, section 7; Document 2, 4.1 and 8).

INVALID_PHONE_NUMBER and INVALID_EMAIL are shared: messaging reuses them from the registry.
"""

from platform_core.errors import register

register(
    "INVALID_PHONE_NUMBER", 422,
    "The phone number is not valid (E.164, or national for the organization's country).",
    app="contacts",
)
register("INVALID_EMAIL", 422, "The email address is not valid.", app="contacts")
register(
    "CONTACT_NOT_FOUND_FOR_IDENTIFIER", 404,
    "No contact matches this identifier (contact id, phone or email).",
    app="contacts",
)
register(
    "EXPORT_TOO_LARGE", 422,
    "The export would exceed 10,000 rows; use POST /api/v1/contacts/bulk/export.",
    app="contacts",
)
register(
    "IMPORT_TOO_LARGE", 422,
    "The CSV has more than 10,000 rows; split it into several imports.",
    app="contacts",
)
