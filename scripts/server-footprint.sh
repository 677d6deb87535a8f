#!/bin/sh
# server-footprint.sh MODEL [FLAGS...] starts bin/inferkit-server on MODEL
# (a GGUF path) with FLAGS, streams one greedy chat completion of 64 tokens,
# and prints the server's resident memory afterwards (VmRSS) and the decode
# speed the client saw (tokens after the first, over the time they took).
# BENCHMARKS.md's server figures come from it; `make build` first.
set -eu
model=$1
shift
port=${PORT:-18931}
key=sk-footprint
./bin/inferkit-server -addr 127.0.0.1:$port -model core-2-5-mini="$model" -api-key "$key" -metrics=false "$@" >/tmp/footprint.log 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
i=0
until curl -fsS http://127.0.0.1:$port/readyz >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 600 ] || { echo "server did not start" >&2; cat /tmp/footprint.log >&2; exit 1; }
	sleep 0.1
done
curl -fsSN http://127.0.0.1:$port/v1/chat/completions -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
	-d '{"model":"core-2-5-mini","stream":true,"max_tokens":64,"temperature":0,"ignore_eos":true,"messages":[{"role":"user","content":"Count from one to one hundred."}]}' |
	while IFS= read -r line; do
		case $line in data:*'"content":'*) date +%s.%N ;; esac
	done >/tmp/footprint.times
rss=$(awk '/VmRSS/ {print $2}' /proc/$pid/status)
awk -v rss="$rss" 'NR == 1 {first = $1} {last = $1; n = NR}
	END {printf "resident %.0f MiB, decode %.1f tok/s over %d tokens\n", rss / 1024, (n - 1) / (last - first), n}' /tmp/footprint.times
