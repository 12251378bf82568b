"""tidings.discovery."""
