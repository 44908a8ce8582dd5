"""The `.memory/*.md` contract: categories, limits, the line format, what an entry's text may
hold, tags, the archive and merge markers.

Rule: depends on nothing in memd but `core.text`.
"""
