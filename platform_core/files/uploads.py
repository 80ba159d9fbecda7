"""Streaming multipart uploads with the 25 MB per-file limit (Document 2, section 8).

Django streams multipart file parts through its upload handlers: small files stay in
memory (FILE_UPLOAD_MAX_MEMORY_SIZE), larger ones go to a temporary file, chunk by chunk.
DATA_UPLOAD_MAX_MEMORY_SIZE only limits the non-file fields, so the file limit is enforced
here, by a handler placed first in the chain that counts and hashes every chunk on its way
to the next handler:

- a request whose declared Content-Length is beyond any acceptable upload is refused
  before a byte of the body is read;
- otherwise the first chunk that takes a file past the limit stops the upload: the partial
  temporary file is closed (and removed) and the request answers 413 FILE_TOO_LARGE.

The SHA-256 of each file is computed on the fly, so the bytes are read once.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler, StopUpload
from django.http.multipartparser import MultiPartParser as DjangoMultiPartParser
from django.http.multipartparser import MultiPartParserError
from rest_framework.exceptions import ParseError
from rest_framework.parsers import DataAndFiles, MultiPartParser, get_encoding

from platform_core.errors import APIError

# Room for the multipart framing and the small form fields next to the file.
_FRAMING_ALLOWANCE = 64 * 1024


def max_file_bytes() -> int:
    return settings.FILE_UPLOAD_MAX_BYTES


def too_large_error() -> APIError:
    limit = max_file_bytes()
    return APIError(
        "FILE_TOO_LARGE",
        f"The file is larger than the upload limit ({limit // (1024 * 1024)} MB).",
        details={"max_bytes": limit},
    )


class LimitedHashingUploadHandler(FileUploadHandler):
    """First handler of the chain: counts, limits and hashes each file's bytes."""

    def __init__(self, *, max_bytes: int, max_body_bytes: int) -> None:
        super().__init__()
        self.max_bytes = max_bytes
        self.max_body_bytes = max_body_bytes
        self.too_large = False
        self.digests: dict[str, list[str]] = {}
        self._hash = hashlib.sha256()
        self._size = 0

    def handle_raw_input(self, input_data, META, content_length, boundary, encoding=None):
        if content_length is not None and content_length > self.max_body_bytes:
            raise too_large_error()  # nothing read or opened yet
        return None

    def new_file(self, field_name, *args, **kwargs) -> None:
        super().new_file(field_name, *args, **kwargs)
        self._hash = hashlib.sha256()
        self._size = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self._size += len(raw_data)
        if self._size > self.max_bytes:
            self.too_large = True
            # Django closes the partial files; the rest of the (bounded) body is drained.
            raise StopUpload(connection_reset=False)
        self._hash.update(raw_data)
        return raw_data

    def file_complete(self, file_size: int) -> None:
        self.digests.setdefault(self.field_name, []).append(self._hash.hexdigest())
        return None  # the next handler (memory or temporary file) builds the file object


class LimitedMultiPartParser(MultiPartParser):
    """Multipart parser for uploads: per-file limit, and `sha256` set on each parsed file."""

    def parse(self, stream, media_type=None, parser_context=None):
        parser_context = parser_context or {}
        request = parser_context["request"]
        meta = request.META.copy()
        meta["CONTENT_TYPE"] = media_type
        fields_allowance = settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0
        limiter = LimitedHashingUploadHandler(
            max_bytes=max_file_bytes(),
            max_body_bytes=max_file_bytes() + fields_allowance + _FRAMING_ALLOWANCE,
        )
        handlers = [limiter, *request.upload_handlers]
        try:
            data, files = DjangoMultiPartParser(
                meta, stream, handlers, get_encoding(parser_context)
            ).parse()
        except MultiPartParserError as exc:
            raise ParseError(f"Multipart form parse error - {exc}") from exc
        if limiter.too_large:
            for _name, objects in files.lists():
                for obj in objects:
                    obj.close()
            raise too_large_error()
        for name, objects in files.lists():
            for obj, digest in zip(objects, limiter.digests.get(name, []), strict=False):
                obj.sha256 = digest
        return DataAndFiles(data, files)
