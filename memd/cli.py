"""memd command line (placeholder)."""


def main() -> int:
    """Run the CLI."""
    return 0
