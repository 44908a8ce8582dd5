"""English stemmer (placeholder: identity until the Porter2 implementation lands)."""


def stem(word: str) -> str:
    """Return the stem of a lowercase ASCII word."""
    return word
