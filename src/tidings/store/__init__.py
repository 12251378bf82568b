"""Storage: the Storage protocol and its implementations. All SQL lives here."""
