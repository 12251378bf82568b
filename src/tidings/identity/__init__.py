"""tidings.identity."""
