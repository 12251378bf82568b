"""tidings.net."""
