"""Outbound messages from acceptance to the provider's answer: `accept.py` (the API's
send and cancel), `senders.py`, `content.py`, `drain.py` (claim, send, write back in
batches) and `journal.py` (what a killed batch did at the provider)."""
