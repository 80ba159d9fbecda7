"""Writes of the WhatsApp channel, one module per family (connections and profile,
catalogs, calling, block list, flows, sends)."""
