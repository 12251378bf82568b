"""tidings.pipeline."""
