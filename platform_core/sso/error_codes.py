"""Error codes of the SSO family: SAML sign-in (Document 1, 4.2) and SCIM provisioning (4.3).

SAML failures answer the error envelope; SCIM routes answer RFC 7644 error bodies and name
the platform code in the `X-Error-Code` header.
"""

from platform_core.errors import register

_CODES = [
    ("SAML_NOT_ENABLED", 404, "Single sign-on is not enabled for this organization."),
    (
        "SAML_CONNECTION_TEST_FAILED",
        422,
        "The identity provider settings did not pass the connection test; see details.issues.",
    ),
    (
        "SAML_RELAY_STATE_INVALID",
        400,
        "The RelayState is missing, tampered with or expired; start the sign-in again.",
    ),
    (
        "SAML_RESPONSE_INVALID",
        401,
        "The SAML response could not be verified; start the sign-in again.",
    ),
    (
        "SAML_SIGNATURE_INVALID",
        401,
        "The SAML response is not signed by the organization's identity provider.",
    ),
    ("SAML_AUDIENCE_MISMATCH", 401, "The SAML assertion is addressed to another service provider."),
    ("SAML_ASSERTION_EXPIRED", 401, "The SAML assertion is outside its validity window."),
    (
        "SAML_UNSOLICITED_RESPONSE",
        401,
        "The SAML response does not answer a sign-in request of this organization.",
    ),
    ("SAML_ASSERTION_REPLAYED", 401, "This SAML assertion was already used to sign in."),
    (
        "SAML_USER_NOT_IN_ORG",
        403,
        "The identity provider vouched for a person who is not a member of, or invited to, "
        "this organization.",
    ),
    (
        "SSO_TICKET_INVALID",
        401,
        "The sign-in ticket is unknown, expired or already used; sign in again.",
    ),
    (
        "SCIM_ROLE_CEILING_EXCEEDED",
        403,
        "This change would grant a role above the highest role SCIM may assign in this "
        "organization.",
    ),
    ("SCIM_NOT_IMPLEMENTED", 501, "This SCIM endpoint (/Bulk, /Me) is not supported."),
]

for code, status, message in _CODES:
    register(code, status, message, app="sso")
