"""Finding memories in free text: sentences, rules and the pipeline.

Rule: uses `core.format` and `core.text`, never `core.writes` or `core.search`.
"""
