"""Provenance: who wrote each memory, when, and what it replaced (pure rules; the sidecar that
keeps them is `memd.server.workspaces.provenance_store`).

Rule: uses `core.format` only; no files, no clock (times are passed in).
"""
