"""CSRF protection for the operator console only.

API credentials travel in headers (`X-API-Key`, `Authorization`), never in ambient
cookies, so a cross-site request cannot borrow them: the CSRF check has nothing to protect
under the API prefixes and must never decide an API answer (Django's HTML 403 page is not
the envelope). Every DRF view is CSRF-exempt already; this also covers what answers under
those prefixes without being a DRF view (the catch-all 404, SCIM, a failed resolution).
The admin console, whose session is a cookie, keeps Django's check unchanged.
"""

from __future__ import annotations

from django.middleware.csrf import CsrfViewMiddleware

# Every answer under these prefixes is the envelope (or SCIM JSON under /scim/).
API_PREFIXES = ("/api/", "/scim/", "/auth/")


def is_api_path(path: str) -> bool:
    return path.startswith(API_PREFIXES)


class ConsoleCsrfViewMiddleware(CsrfViewMiddleware):
    def process_view(self, request, callback, callback_args, callback_kwargs):
        if is_api_path(request.path_info):
            return None
        return super().process_view(request, callback, callback_args, callback_kwargs)
