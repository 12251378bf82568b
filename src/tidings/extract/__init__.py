"""tidings.extract."""
