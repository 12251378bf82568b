"""tidings.readers."""
