"""The connector catalog (`/ai/kb/connectors`): the five external content systems a base
can sync from, with the configuration and credential fields each one needs.

`status` in the catalog is per organization: `connected` when the organization has at
least one connector of that system, else `available`.
"""

from __future__ import annotations

from dataclasses import dataclass

CATEGORIES = ("wiki", "file_storage", "help_center")
STATUSES = ("available", "connected")


@dataclass(frozen=True)
class CatalogEntry:
    id: str
    name: str
    category: str
    description: str
    config_fields: tuple[str, ...]
    optional_config_fields: tuple[str, ...]
    credential_fields: tuple[str, ...]
    docs_url: str


ENTRIES: tuple[CatalogEntry, ...] = (
    CatalogEntry("confluence", "Confluence", "wiki",
                 "Pages of one Confluence Cloud space (REST API v2, storage format).",
                 ("site_url", "space_id"), (), ("email", "api_token"),
                 "https://developer.atlassian.com/cloud/confluence/rest/v2/"),
    CatalogEntry("notion", "Notion", "wiki",
                 "Pages shared with a Notion internal integration (search, block children).",
                 (), (), ("token",), "https://developers.notion.com/reference"),
    CatalogEntry("google_drive", "Google Drive", "file_storage",
                 "Google Docs and text files of one Drive folder (Drive API v3, export).",
                 ("folder_id",), (), ("access_token",),
                 "https://developers.google.com/drive/api/reference/rest/v3"),
    CatalogEntry("sharepoint", "SharePoint", "file_storage",
                 "Site pages of one SharePoint Online site (Microsoft Graph, app-only).",
                 ("site_id",), (), ("tenant_id", "client_id", "client_secret"),
                 "https://learn.microsoft.com/graph/api/resources/sitepage"),
    CatalogEntry("zendesk_guide", "Zendesk Guide", "help_center",
                 "Published articles of a Zendesk help center (Help Center API).",
                 ("subdomain",), ("locale",), ("email", "api_token"),
                 "https://developer.zendesk.com/api-reference/help_center/"),
)
BY_ID = {entry.id: entry for entry in ENTRIES}


def entries(*, connected: set[str], category: str | None = None, status: str | None = None,
            search: str | None = None) -> list[dict]:
    found = []
    needle = (search or "").strip().lower()
    for entry in ENTRIES:
        state = "connected" if entry.id in connected else "available"
        if category and entry.category != category:
            continue
        if status and state != status:
            continue
        if needle and needle not in f"{entry.id} {entry.name} {entry.description}".lower():
            continue
        found.append(as_dict(entry, state))
    return found


def as_dict(entry: CatalogEntry, state: str) -> dict:
    return {"id": entry.id, "name": entry.name, "category": entry.category,
            "description": entry.description, "status": state,
            "config_fields": list(entry.config_fields),
            "optional_config_fields": list(entry.optional_config_fields),
            "credential_fields": list(entry.credential_fields), "docs_url": entry.docs_url}
