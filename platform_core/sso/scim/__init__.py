"""SCIM 2.0 (RFC 7643/7644) per organization under /scim/v2/{orgSlug}/."""
