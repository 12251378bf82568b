"""X accounts through a paid SocialData-compatible search API (SPEC §6, R-X)."""
