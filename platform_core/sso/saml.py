"""SAML helpers for djangosaml2: one service provider per organization, never a global IdP.

`config_loader` is djangosaml2's `SAML_CONFIG_LOADER`: the pysaml2 configuration is built for
each request from the organization's `SamlConfig` row (its IdP as inline metadata, its own SP
key pair). Signatures are verified by xmlsec1. The rest is what djangosaml2 does not cover:
IdP metadata parsing and the connection test of `settings/saml`, key generation, and the
mapping of pysaml2's refusals onto our registered error codes.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from defusedxml import ElementTree as SafeET
from django.conf import settings

from platform_core.errors import APIError

SAML_NS = "urn:oasis:names:tc:SAML:2.0:assertion"
SAMLP_NS = "urn:oasis:names:tc:SAML:2.0:protocol"
MD_NS = "urn:oasis:names:tc:SAML:2.0:metadata"
DS_NS = "http://www.w3.org/2000/09/xmldsig#"
BINDING_REDIRECT = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"
BINDING_POST = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"
NAMEID_EMAIL = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"
NAMEID_UNSPECIFIED = "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified"

# Seconds of clock skew tolerated on NotBefore / NotOnOrAfter.
CLOCK_SKEW_SECONDS = 60
# Attributes read for the email address when the NameID is not one.
EMAIL_ATTRIBUTES = (
    "email",
    "mail",
    "emailaddress",
    "emailAddress",
    "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress",
    "urn:oid:0.9.2342.19200300.100.1.3",
)
NAME_ATTRIBUTES = (
    "displayName",
    "http://schemas.microsoft.com/identity/claims/displayname",
    "cn",
)


# --- Addresses -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SpUrls:
    entity_id: str
    acs_url: str
    metadata_url: str
    slo_url: str
    login_url: str


def sp_urls(slug: str) -> SpUrls:
    base = f"{settings.PUBLIC_BASE_URL}/auth/saml/{slug}"
    return SpUrls(
        entity_id=f"{base}/metadata",
        acs_url=f"{base}/callback",
        metadata_url=f"{base}/metadata",
        slo_url=f"{base}/logout",
        login_url=f"{base}/login",
    )


def dashboard_sso_url() -> str:
    return getattr(settings, "SSO_DASHBOARD_URL", "") or f"{settings.PUBLIC_BASE_URL}/dashboard/sso"


def xmlsec_binary() -> str:
    path = getattr(settings, "SAML_XMLSEC_BINARY", "") or shutil.which("xmlsec1")
    if not path:
        raise APIError(
            "SERVICE_UNAVAILABLE", "SAML needs xmlsec1 on the server (Debian package `xmlsec1`)."
        )
    return path


# --- Certificates ------------------------------------------------------------------------------

_PEM_RE = re.compile(r"-----BEGIN CERTIFICATE-----(.+?)-----END CERTIFICATE-----", re.S)


def normalize_certificate(text: str) -> str:
    """A PEM certificate from PEM or from the bare base64 body IdP consoles often show.
    Raises ValueError when it is not a valid X.509 certificate."""
    text = (text or "").strip()
    if not text:
        raise ValueError("The certificate is empty.")
    match = _PEM_RE.search(text)
    body = match.group(1) if match else text
    body = "".join(body.split())
    try:
        der = base64.b64decode(body, validate=True)
        cert = x509.load_der_x509_certificate(der)
    except (ValueError, binascii.Error) as exc:
        raise ValueError("The certificate is not a valid X.509 certificate.") from exc
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def certificate_issues(pem: str) -> list[str]:
    """Problems that make a (parsable) certificate unusable for verifying signatures."""
    cert = x509.load_pem_x509_certificate(pem.encode())
    now = dt.datetime.now(dt.UTC)
    issues = []
    if cert.not_valid_after_utc < now:
        issues.append(f"The certificate expired on {cert.not_valid_after_utc:%Y-%m-%d}.")
    if cert.not_valid_before_utc > now + dt.timedelta(days=1):
        issues.append(f"The certificate is not valid before {cert.not_valid_before_utc:%Y-%m-%d}.")
    return issues


def certificate_body(pem: str) -> str:
    """The base64 DER body of a PEM certificate (for metadata KeyInfo)."""
    match = _PEM_RE.search(pem)
    return "".join((match.group(1) if match else pem).split())


def generate_keypair(common_name: str) -> tuple[str, str]:
    """An RSA-2048 key and a ten-year self-signed certificate, both PEM."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name[:64])])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=3650))
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    return key_pem, cert.public_bytes(serialization.Encoding.PEM).decode()


# --- IdP metadata ------------------------------------------------------------------------------


@dataclass(frozen=True)
class IdpDescription:
    entity_id: str
    sso_url: str
    slo_url: str
    certificate: str  # PEM


def idp_metadata_from_fields(entity_id: str, sso_url: str, slo_url: str, certificate: str) -> str:
    """IdP metadata XML equivalent to the three fields, so pysaml2 sees one shape."""
    body = certificate_body(certificate)
    slo = ""
    if slo_url:
        slo = (
            f'<md:SingleLogoutService Binding="{BINDING_REDIRECT}" Location={quoteattr(slo_url)}/>'
        )
    return (
        f'<md:EntityDescriptor xmlns:md="{MD_NS}" xmlns:ds="{DS_NS}" '
        f"entityID={quoteattr(entity_id)}>"
        f'<md:IDPSSODescriptor WantAuthnRequestsSigned="false" '
        f'protocolSupportEnumeration="{SAMLP_NS}">'
        f'<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>'
        f"{escape(body)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>"
        f"{slo}"
        f"<md:NameIDFormat>{NAMEID_EMAIL}</md:NameIDFormat>"
        f'<md:SingleSignOnService Binding="{BINDING_REDIRECT}" Location={quoteattr(sso_url)}/>'
        f"</md:IDPSSODescriptor></md:EntityDescriptor>"
    )


def _first_location(descriptor, tag: str) -> str:
    services = descriptor.findall(f"{{{MD_NS}}}{tag}")
    for binding in (BINDING_REDIRECT, BINDING_POST):
        for service in services:
            if service.get("Binding") == binding and service.get("Location"):
                return service.get("Location").strip()
    return ""


def parse_idp_metadata(xml: str) -> IdpDescription:
    """Read one identity provider out of metadata XML. Raises ValueError with a reason."""
    try:
        root = SafeET.fromstring(xml.encode() if isinstance(xml, str) else xml)
    except Exception as exc:  # defusedxml raises several types (DTD, entities, syntax)
        raise ValueError(f"The metadata is not well-formed XML: {exc}") from exc
    if root.tag == f"{{{MD_NS}}}EntityDescriptor":
        entities = [root]
    elif root.tag == f"{{{MD_NS}}}EntitiesDescriptor":
        entities = root.findall(f".//{{{MD_NS}}}EntityDescriptor")
    else:
        raise ValueError("The metadata has no md:EntityDescriptor.")
    idps = [(e, e.find(f"{{{MD_NS}}}IDPSSODescriptor")) for e in entities]
    idps = [(e, d) for e, d in idps if d is not None]
    if len(idps) != 1:
        raise ValueError(
            f"The metadata must describe exactly one identity provider (found {len(idps)})."
        )
    entity, descriptor = idps[0]
    entity_id = (entity.get("entityID") or "").strip()
    if not entity_id:
        raise ValueError("The identity provider has no entityID.")
    sso_url = _first_location(descriptor, "SingleSignOnService")
    if not sso_url:
        raise ValueError(
            "The identity provider has no HTTP-Redirect or HTTP-POST SingleSignOnService."
        )
    certificate = ""
    for key in descriptor.findall(f"{{{MD_NS}}}KeyDescriptor"):
        if key.get("use") not in (None, "", "signing"):
            continue
        node = key.find(f".//{{{DS_NS}}}X509Certificate")
        if node is not None and (node.text or "").strip():
            certificate = normalize_certificate(node.text)
            break
    if not certificate:
        raise ValueError("The identity provider publishes no signing certificate.")
    return IdpDescription(
        entity_id, sso_url, _first_location(descriptor, "SingleLogoutService"), certificate
    )


def _is_url(value: str) -> bool:
    return bool(re.match(r"^https?://[^\s/$.?#][^\s]*$", value or "", re.I))


def connection_test(
    *,
    idp_entity_id: str,
    idp_sso_url: str,
    idp_slo_url: str,
    idp_x509_cert: str,
    idp_metadata_xml: str,
) -> list[dict[str, str]]:
    """Issues (`[{field, message}]`) that keep these IdP settings from working; [] when the
    data parses, the certificate is a valid, current X.509 certificate and pysaml2 loads it."""
    issues: list[dict[str, str]] = []
    if idp_metadata_xml:
        try:
            idp = parse_idp_metadata(idp_metadata_xml)
        except ValueError as exc:
            return [{"field": "idp_metadata_xml", "message": str(exc)}]
        field = "idp_metadata_xml"
    else:
        if not idp_entity_id:
            issues.append({"field": "idp_entity_id", "message": "The IdP entity id is required."})
        if not _is_url(idp_sso_url):
            issues.append(
                {"field": "idp_sso_url", "message": "The IdP SSO URL must be an http(s) URL."}
            )
        if idp_slo_url and not _is_url(idp_slo_url):
            issues.append(
                {"field": "idp_slo_url", "message": "The IdP SLO URL must be an http(s) URL."}
            )
        try:
            cert = normalize_certificate(idp_x509_cert)
        except ValueError as exc:
            issues.append({"field": "idp_x509_cert", "message": str(exc)})
            cert = ""
        if issues:
            return issues
        idp = IdpDescription(idp_entity_id, idp_sso_url, idp_slo_url, cert)
        field = "idp_x509_cert"
    issues.extend({"field": field, "message": m} for m in certificate_issues(idp.certificate))
    if not issues:
        try:
            _load_metadata_store(
                idp_metadata_from_fields(idp.entity_id, idp.sso_url, idp.slo_url, idp.certificate)
            )
        except Exception as exc:  # pysaml2 raises assorted errors on bad metadata
            issues.append({"field": field, "message": f"pysaml2 cannot load the IdP: {exc}"})
    return issues


def _load_metadata_store(xml: str) -> None:
    from saml2.config import SPConfig

    conf = SPConfig().load(
        {
            "entityid": "urn:connection-test",
            "metadata": {"inline": [xml]},
            "xmlsec_binary": xmlsec_binary(),
        }
    )
    if not list(conf.metadata.identity_providers()):
        raise ValueError("no identity provider in the metadata")


def describe_idp(config) -> IdpDescription:
    """The IdP of a stored configuration (its metadata XML wins over the fields)."""
    if config.idp_metadata_xml:
        return parse_idp_metadata(config.idp_metadata_xml)
    return IdpDescription(
        config.idp_entity_id,
        config.idp_sso_url,
        config.idp_slo_url,
        normalize_certificate(config.idp_x509_cert),
    )


# --- The service provider (djangosaml2's SAML_CONFIG_LOADER) -----------------------------------


def _key_files(config) -> tuple[str, str]:
    """Paths of the SP key pair. pysaml2 and xmlsec1 read keys from files only, and
    djangosaml2 keeps the loaded config for the whole request, so the pair is written once
    per key (named by its digest, mode 0600, in a private per-user folder) and reused."""
    folder = os.path.join(tempfile.gettempdir(), f"engage-saml-sp-{os.getuid()}")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    digest = hashlib.sha256(config.sp_private_key.encode()).hexdigest()[:40]
    key_file = os.path.join(folder, f"{digest}.key")
    cert_file = os.path.join(folder, f"{digest}.crt")
    for path, text in ((key_file, config.sp_private_key), (cert_file, config.sp_certificate)):
        if not os.path.exists(path):
            fd, tmp = tempfile.mkstemp(dir=folder)  # created 0600
            with os.fdopen(fd, "w") as handle:
                handle.write(text)
            os.replace(tmp, path)
    return key_file, cert_file


def sp_config(config, slug: str) -> Any:
    """The pysaml2 SPConfig of this organization's SP, built from its `SamlConfig` row. An
    SP without an IdP yet still loads (its metadata is what the admin imports first)."""
    from saml2 import xmldsig
    from saml2.config import SPConfig

    urls = sp_urls(slug)
    key_file, cert_file = _key_files(config)
    metadata: dict[str, list[str]] = {}
    if config.idp_metadata_xml or config.idp_x509_cert:
        idp = describe_idp(config)
        metadata = {
            "inline": [
                idp_metadata_from_fields(idp.entity_id, idp.sso_url, idp.slo_url, idp.certificate)
            ]
        }
    return SPConfig().load(
        {
            "entityid": urls.entity_id,
            "xmlsec_binary": xmlsec_binary(),
            "key_file": key_file,
            "cert_file": cert_file,
            "encryption_keypairs": [{"key_file": key_file, "cert_file": cert_file}],
            "metadata": metadata,
            "accepted_time_diff": CLOCK_SKEW_SECONDS,
            # Signatures verify only against the configured IdP certificate, never a
            # certificate the response carries in its own KeyInfo.
            "only_use_keys_in_metadata": True,
            "allow_unknown_attributes": True,
            "service": {
                "sp": {
                    "name": slug,
                    "endpoints": {
                        "assertion_consumer_service": [(urls.acs_url, BINDING_POST)],
                        "single_logout_service": [(urls.slo_url, BINDING_REDIRECT)],
                    },
                    "allow_unsolicited": False,
                    "authn_requests_signed": True,
                    "logout_requests_signed": True,
                    "want_assertions_signed": False,
                    "want_response_signed": False,
                    "want_assertions_or_response_signed": True,
                    "name_id_format": [NAMEID_EMAIL],
                    "signing_algorithm": xmldsig.SIG_RSA_SHA256,
                    "digest_algorithm": xmldsig.DIGEST_SHA256,
                }
            },
        }
    )


def config_loader(request) -> Any:
    """djangosaml2's `SAML_CONFIG_LOADER`: one SP per organization, never a global one. The
    SAML views resolve the organization (and refuse unknown or disabled ones) before
    djangosaml2 asks for the config, and leave the row on the request."""
    org, config = request.saml_organization
    return sp_config(config, org.slug)


def logout_request_location(
    sp_conf,
    config,
    *,
    name_id: str,
    name_id_format: str,
    relay_state: str,
) -> str | None:
    """A signed LogoutRequest to the IdP's SLO URL (HTTP-Redirect), or None when it has none.
    (djangosaml2's LogoutInitView needs a Django cookie session holding the subject id; our
    sessions are bearer tokens, so the request is built on the same loaded SP config.)"""
    from saml2.client import Saml2Client
    from saml2.saml import NameID

    idp = describe_idp(config)
    if not idp.slo_url:
        return None
    client = Saml2Client(config=sp_conf)
    _request_id, request = client.create_logout_request(
        idp.slo_url,
        idp.entity_id,
        name_id=NameID(format=name_id_format or NAMEID_EMAIL, text=name_id),
        session_indexes=None,
        sign=False,
    )
    info = client.apply_binding(
        BINDING_REDIRECT,
        str(request),
        idp.slo_url,
        relay_state,
        sigalg=client.config.getattr("signing_algorithm", "sp"),
        sign=True,
    )
    return dict(info["headers"])["Location"]


# --- Reading a verified response ----------------------------------------------------------


def email_of(name_id, attributes: Mapping[str, list]) -> str | None:
    """The member's address: an email NameID, else the first email-like attribute."""
    text = (getattr(name_id, "text", "") or "").strip()
    fmt = getattr(name_id, "format", "") or ""
    if fmt in (NAMEID_EMAIL, NAMEID_UNSPECIFIED, "") and "@" in text:
        return text.lower()
    lowered = {k.lower(): v for k, v in attributes.items()}
    for name in EMAIL_ATTRIBUTES:
        values = lowered.get(name.lower())
        if values and "@" in str(values[0]):
            return str(values[0]).strip().lower()
    return None


def display_name_of(attributes: Mapping[str, list]) -> str:
    lowered = {k.lower(): v for k, v in attributes.items()}
    for name in NAME_ATTRIBUTES:
        values = lowered.get(name.lower())
        if values:
            return str(values[0]).strip()
    given = (lowered.get("givenname") or [""])[0]
    surname = (lowered.get("sn") or lowered.get("surname") or [""])[0]
    return f"{given} {surname}".strip()


def decode_response(saml_response: str) -> bytes:
    try:
        return base64.b64decode(saml_response or "", validate=False)
    except (ValueError, binascii.Error):
        raise APIError("SAML_RESPONSE_INVALID", "SAMLResponse is not base64.") from None


def count_assertions(xml: bytes) -> int:
    """Every saml:Assertion and EncryptedAssertion anywhere in the document. A second one is
    how signature wrapping smuggles in an unsigned assertion, so the callback refuses it."""
    try:
        root = SafeET.fromstring(xml)
    except Exception:
        raise APIError(
            "SAML_RESPONSE_INVALID", "The SAML response is not well-formed XML."
        ) from None
    if root.tag != f"{{{SAMLP_NS}}}Response":
        raise APIError("SAML_RESPONSE_INVALID", "The document is not a SAML Response.")
    return sum(
        1
        for node in root.iter()
        if node.tag in (f"{{{SAML_NS}}}Assertion", f"{{{SAML_NS}}}EncryptedAssertion")
    )


def classify(exc: Exception) -> APIError:
    """Our registered code for a refusal pysaml2 (inside djangosaml2's ACS) raised."""
    from saml2.response import IncorrectlySigned, InvalidAssertion, UnsolicitedResponse
    from saml2.sigver import BadSignature, MissingKey, SignatureError, SigverError
    from saml2.validate import ResponseLifetimeExceed, ToEarly

    text = str(exc)
    if isinstance(
        exc, SignatureError | IncorrectlySigned | MissingKey | BadSignature | SigverError
    ):
        return APIError("SAML_SIGNATURE_INVALID")
    if isinstance(exc, ResponseLifetimeExceed | ToEarly):
        return APIError("SAML_ASSERTION_EXPIRED")
    if isinstance(exc, UnsolicitedResponse):
        return APIError("SAML_UNSOLICITED_RESPONSE")
    if "AudienceRestriction" in text:
        return APIError("SAML_AUDIENCE_MISMATCH")
    if isinstance(exc, InvalidAssertion) and "number of assertions" in text:
        return APIError(
            "SAML_SIGNATURE_INVALID", "The SAML response must carry exactly one assertion."
        )
    if "not signed" in text.lower() or "signature" in text.lower():
        return APIError("SAML_SIGNATURE_INVALID")
    return APIError("SAML_RESPONSE_INVALID")
