"""Public ids sort by creation: a burst in one millisecond counts up; a clock that comes
back from far ahead (a test's time travel) starts afresh instead of stamping every later
id with the old future moment."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import time_machine

from platform_core.ids import new_id


def test_a_burst_of_ids_sorts_in_creation_order():
    ids = [new_id("msg") for _ in range(2000)]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)


def test_ids_follow_the_clock_again_after_coming_back_from_the_future():
    with time_machine.travel(datetime.now(UTC) + timedelta(days=1), tick=False):
        from_the_future = new_id("msg")
    now = new_id("msg")
    assert now < from_the_future  # made today: sorts before an id made "tomorrow"
    later = new_id("msg")
    assert now < later
