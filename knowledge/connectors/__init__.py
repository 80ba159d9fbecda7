"""Knowledge connectors: pages of external content systems synced into a base's documents.

`catalog` lists the systems, `adapters` fetches pages (live HTTP clients and sandbox
doubles), `services` writes (create, update, delete, sync, the scheduled drain).
"""
