#!/bin/sh
# Set up and run the whole test suite: lint, types, layer contracts, tests.
# Usage: sh scripts/test.sh [extra pytest arguments]
set -eu
EXTRAS=dev
. "$(dirname "$0")/env.sh"
.venv/bin/ruff check src tests benchmarks
.venv/bin/mypy
.venv/bin/lint-imports
exec .venv/bin/python -m pytest "$@"
