#!/bin/sh
# Property fuzzing of the parsers facing hostile input, for a bounded time (not in CI).
# Usage: sh scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#   targets: feeds opml charset urls sanitizer search (default: all), 60 s each.
# A failure prints the shrunk input; make it a regression test (tests/test_*hostile*.py).
set -eu
EXTRAS=dev
. "$(dirname "$0")/env.sh"
seconds=${1:-60}
[ $# -gt 0 ] && shift
cd tests
exec ../.venv/bin/python fuzz_campaign.py --seconds "$seconds" "$@"
