"""The shared CSV streamer: formula injection neutralized, output streamed in chunks."""

from __future__ import annotations

import csv
import io

from platform_core.exports import safe_cell, stream_csv


def test_formula_cells_are_neutralized():
    for payload in ("=1+1", "+cmd", "-2+3", "@SUM(A1)", "\tx", "\rx"):
        assert safe_cell(payload) == "'" + payload
    assert safe_cell("plain") == "plain"
    assert safe_cell("+14155550123") == "+14155550123"  # a phone number is not a formula
    assert safe_cell("+1415555012=3") == "'+1415555012=3"
    assert safe_cell(-5) == -5  # numbers stay numbers
    assert safe_cell(None) == ""


def test_stream_csv_round_trips_and_streams_in_chunks():
    rows = ([i, f"name {i}", "=HYPERLINK(\"http://x\")"] for i in range(5000))
    chunks = list(stream_csv(["id", "name", "note"], rows))
    assert len(chunks) > 2
    text = b"".join(chunks).decode("utf-8").lstrip("\ufeff")
    parsed = list(csv.reader(io.StringIO(text)))
    assert parsed[0] == ["id", "name", "note"]
    assert len(parsed) == 5001
    assert parsed[1][2].startswith("'=")
