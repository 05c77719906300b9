#!/usr/bin/env bash
# The long fuzz campaign of docs/security.md ("Fuzzing"): every input fuzzer of the test suite
# with large example counts (CI runs the same tests with small ones). Prints one pytest line
# per group and the wall time; fails when any fuzzer finds an input that breaks its property.
#
#   scripts/fuzz-long.sh [PYTEST ARGS...]   e.g. scripts/fuzz-long.sh -x
#
# Counts (examples per test; the SDK-response fuzzer has one test per response shape, the
# admission property one per entry point): set REGIO_FUZZ_LONG / REGIO_FUZZ_LONG_STATEFUL to
# change them.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-.venv/bin/python}
long=${REGIO_FUZZ_LONG:-2000}
stateful=${REGIO_FUZZ_LONG_STATEFUL:-300}

run() {
  local count=$1
  shift
  local start=$SECONDS
  REGIO_FUZZ_EXAMPLES=$count REGIO_FUZZ_STATE_EXAMPLES=$count \
    "$python" -m pytest -q -p no:cacheprovider "$@" | tail -n 1
  echo "  ($count examples per test, $((SECONDS - start)) s)"
}

# stateless input fuzzers: provider responses, streamed deltas, admitted text, state files,
# traces, blueprints, the agent's context-tool calls
run "$long" tests/test_sdk_response_fuzz.py tests/test_runtime_streaming_fuzz.py \
  tests/test_admission_text.py tests/test_persistence_corrupt.py tests/test_traces_fuzz.py \
  tests/test_blueprint_fuzz.py tests/test_tools_hostile_agent.py "${@}"
# sequences: the engine state machine (25 steps each) and store round trips
run "$stateful" tests/test_engine_state_machine.py tests/test_store_roundtrip_fuzz.py "${@}"
