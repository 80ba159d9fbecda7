"""Content negotiation of download endpoints (files, contact and segment exports)."""

from __future__ import annotations

from rest_framework.negotiation import BaseContentNegotiation


class DownloadNegotiation(BaseContentNegotiation):
    """A download answers its bytes whatever `Accept` says (its first renderer); errors
    still answer the JSON envelope. A request body is parsed by the parser of its
    Content-Type, else the first one."""

    def select_parser(self, request, parsers):
        content_type = (request.content_type or "").split(";")[0]
        for parser in parsers:
            if parser.media_type.split(";")[0] == content_type:
                return parser
        return parsers[0] if parsers else None

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type
