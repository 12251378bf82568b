#!/bin/sh
# Set up tidings and run it: the web reader with its scheduler.
# Usage: sh scripts/run.sh [extra arguments for `tidings serve`]
set -eu
. "$(dirname "$0")/env.sh"
export TIDINGS_HOME="${TIDINGS_HOME:-$PWD/tidings-data}"
if [ ! -f "$TIDINGS_HOME/tidings.sqlite3" ]; then
    .venv/bin/tidings init
fi
exec .venv/bin/tidings serve "$@"
