"""tidings.schedule."""
