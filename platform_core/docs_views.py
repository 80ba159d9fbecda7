"""Error documentation: `/errors/<CODE>` redirects (307) to its anchor on the listing page."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render

from platform_core import errors


class TemporaryRedirect(HttpResponseRedirect):
    status_code = 307


def error_code_redirect(request: HttpRequest, code: str) -> HttpResponse:
    return TemporaryRedirect(f"/reference/error-codes#{code.upper()}")


def error_code_listing(request: HttpRequest) -> HttpResponse:
    return render(request, "platform_core/error_codes.html", {"codes": errors.all_codes()})
