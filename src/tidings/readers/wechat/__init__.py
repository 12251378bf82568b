"""WeChat official accounts through a paid Dajiala-compatible API (SPEC §6, R-WX)."""
