"""Semantic search, the optional `semantic` extra: a local sentence-embedding model
(`embedder`) whose cosine similarities are fused with the lexical ranking
(`memd.core.search.fusion`). Nothing here is imported unless semantic search is used."""
