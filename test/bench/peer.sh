#!/usr/bin/env bash
# Side-by-side: ama-rpc and pi's RPC mode (the peer) on the same work: a
# loopback OpenAI-compatible mock server streaming a 10,000-delta reply.
# Uses ../shared/bench (mock_openai.py, drive.py); installs the peer from
# npm into bench-out/peer on first use. Prints one JSON line per run.
set -euo pipefail
cd "$(dirname "$0")/../.."
KIT=${BENCH_KIT:-../shared/bench}
RUNS=${RUNS:-3}
DELTAS=${DELTAS:-10000}
PORT=${PORT:-18080}
OUT=bench-out
if [ ! -f "$KIT/mock_openai.py" ]; then
  echo "bench-peer: $KIT/mock_openai.py not found (set BENCH_KIT)" >&2
  exit 1
fi
mkdir -p "$OUT/peer/home/.pi/agent" "$OUT/home"
if [ ! -f "$OUT/peer/pi/node_modules/@mariozechner/pi-coding-agent/dist/cli.js" ]; then
  (cd "$OUT/peer" && mkdir -p pi && cd pi && npm install --no-audit --no-fund --loglevel=error @mariozechner/pi-coding-agent@0.73.1 >/dev/null)
fi
cat > "$OUT/peer/home/.pi/agent/models.json" <<JSON
{"providers":{"mock":{"baseUrl":"http://127.0.0.1:$PORT/v1","api":"openai-completions","apiKey":"x",
 "compat":{"supportsDeveloperRole":false,"supportsReasoningEffort":false},"models":[{"id":"mock"}]}}}
JSON
make -s build
python3 "$KIT/mock_openai.py" "$PORT" & MOCK=$!
trap 'kill $MOCK 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 0.2)" 2>/dev/null && break
  python3 -c "import time; time.sleep(0.1)"
done
for i in $(seq "$RUNS"); do
  printf 'ama-rpc run %s: ' "$i"
  python3 "$KIT/drive.py" --settle agent_settled --prompt "bench:$DELTAS" \
    --env HOME="$PWD/$OUT/home" --env OPENAI_BASE_URL="http://127.0.0.1:$PORT/v1" --env OPENAI_API_KEY=x \
    --cmd "$PWD/bin/ama-rpc --mode rpc --model openai/mock --no-session"
done
for i in $(seq "$RUNS"); do
  printf 'pi run %s:      ' "$i"
  python3 "$KIT/drive.py" --settle agent_end --prompt "bench:$DELTAS" \
    --env HOME="$PWD/$OUT/peer/home" --env PI_OFFLINE=1 \
    --cmd "node $PWD/$OUT/peer/pi/node_modules/@mariozechner/pi-coding-agent/dist/cli.js --mode rpc --provider mock --model mock --no-session"
done
