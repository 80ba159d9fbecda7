from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

UPLOAD = "/api/v1/files/upload"
PORTING = "/api/v1/numbers/porting"


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    root = tmp_path / "media"
    root.mkdir()
    settings.MEDIA_ROOT = str(root)
    return root


def upload_loa(client, *, query: str = "") -> dict:
    response = client.post(
        f"{UPLOAD}{query}",
        {"file": SimpleUploadedFile("loa.pdf", b"%PDF-1.4 signed letter",
                                    content_type="application/pdf"), "purpose": "loa"},
        format="multipart",
    )
    assert response.status_code == 201, response.content
    return response.json()["data"]


def porting_body(loa_url: str, **overrides) -> dict:
    body = {
        "numbers": ["+14155550123", "+14155550124"],
        "currentCarrier": "Verizon",
        "country": "US",
        "authorizedSigner": "Ann Lee",
        "accountNumber": "ACCT-998877",
        "accountPin": "4321",
        "loaFileUrl": loa_url,
    }
    body.update(overrides)
    return body
