"""Recall: tokens, the search index, ranking, usage counts and the prompt block.

Rule: uses `core.format` and `core.text`, never `core.writes` or `core.extract`.
"""
