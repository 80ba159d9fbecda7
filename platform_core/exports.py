"""Streaming CSV for exports: constant memory, safe against spreadsheet formula injection.

`stream_csv(header, rows)` yields encoded lines as `rows` (any iterator, e.g. a queryset's
`.iterator(chunk_size=...)`) is consumed, so a StreamingHttpResponse of 50,000 rows never
holds them all. Every cell passes through `safe_cell`: a text value that a spreadsheet
would evaluate (starting with =, +, -, @, tab or carriage return) is prefixed with a
single quote (OWASP's recommendation), so `=HYPERLINK(...)` arrives as text.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Iterator
from typing import Any

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
# A bare E.164 number cannot carry a formula; exports are full of them, keep them readable.
_E164 = re.compile(r"^\+\d{7,15}$")


def safe_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool | int | float):
        return value
    text = str(value)
    if text.startswith(_FORMULA_START) and not _E164.match(text):
        return "'" + text
    return text


def stream_csv(header: list[str], rows: Iterable[Iterable[Any]]) -> Iterator[bytes]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def flush() -> bytes:
        data = buffer.getvalue().encode("utf-8")
        buffer.seek(0)
        buffer.truncate(0)
        return data

    buffer.write("\ufeff")  # BOM: spreadsheets then read the file as UTF-8
    writer.writerow([safe_cell(h) for h in header])
    yield flush()
    for row in rows:
        writer.writerow([safe_cell(v) for v in row])
        if buffer.tell() > 64 * 1024:
            yield flush()
    tail = flush()
    if tail:
        yield tail
