"""Every write decision: stores, deletes and cleanups applied to a catalog, duplicate judging,
slugs and the size cap.

Rule: uses `core.format` and `core.text`, never `core.search` or `core.extract`.
"""
