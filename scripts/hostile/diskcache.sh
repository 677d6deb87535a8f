#!/bin/bash
# diskcache.sh BIN CASE...: the hostile prompt-cache cases of issue 25
# (items 4 and 5) against the server binary BIN, each on a fresh cache
# directory and server: an entry whose checksum is sound but whose state
# is damaged (pos-1, huge-cells, layers, rowsize, truncated), and a FIFO,
# a directory or a symbolic link to /dev/zero named like an entry, at
# start (fifo-start, dir-start, symlink-start) or swapped in for the
# entries while serving (fifo-serving, ...). For each it prints: the
# time to listen, the request's status and time, /healthz, the peak RSS,
# how the process ended (SIGTERM-ignored: it needed SIGKILL after 20 s),
# a crash line from its log, whether the answer is the sound run's, and
# what was left in the cache. With no CASE, all of them. huge-cells runs
# under a 6 GiB address-space limit (prlimit), so that a build that
# allocates what the state claims fails there rather than exhausting the
# machine. MODEL defaults to ../shared/models/stories260K.gguf.
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$(realpath "$1"); shift
CASES=${*:-pos-1 huge-cells layers rowsize truncated fifo-start dir-start symlink-start fifo-serving dir-serving symlink-serving}
MODEL=${MODEL:-$HERE/../../../shared/models/stories260K.gguf}
ROOT=$(mktemp -d /tmp/inferkit-diskcache.XXXXXX)
for CASE in $CASES; do (
PRE=; [ "$CASE" = huge-cells ] && PRE="prlimit --as=6442450944"
W=$ROOT/$CASE; mkdir -p $W; DIR=$W/cache
PORT=$((20000 + RANDOM % 20000))
PROMPT=$(python3 -c 'print("Once upon a time there was a little girl named Lily. " * 30)')
BODY=$(python3 -c 'import json,sys; print(json.dumps({"model":"s","prompt":sys.argv[1],"max_tokens":8,"temperature":0}))' "$PROMPT")
ARGS="-addr 127.0.0.1:$PORT -model s=$MODEL -api-key sk-test-0123456789abcdef -cache-dir $DIR -ctx 512 -parallel 2 -threads 1 -keep-alive 0"
req() { curl -s -o $W/body.$1 -w '%{http_code} %{time_total}' -m ${2:-60} -H 'Authorization: Bearer sk-test-0123456789abcdef' -H 'Content-Type: application/json' -d "$BODY" http://127.0.0.1:$PORT/v1/completions; }
ready() { for i in $(seq 1 ${1:-300}); do curl -s -m 1 http://127.0.0.1:$PORT/healthz >/dev/null && return 0; sleep 0.2; done; return 1; }
stop() { # stop PID: SIGTERM, then 20 s, then SIGKILL
  kill -TERM $1 2>/dev/null
  for i in $(seq 1 100); do kill -0 $1 2>/dev/null || return 0; sleep 0.2; done
  echo -n " SIGTERM-ignored"; kill -KILL $1; return 1; }

# 1. entries from a sound run
$BIN $ARGS >$W/prep.log 2>&1 & P=$!
ready || { echo "$CASE: prep did not start"; exit 1; }
req prep >/dev/null; stop $P >/dev/null; wait $P 2>/dev/null
ls $DIR/*/*.kv >/dev/null 2>&1 || { echo "$CASE: no entry saved"; exit 1; }
KV=$(ls $DIR/*/*.kv)

odd() { # odd KIND PATH
  case $1 in fifo) mkfifo $2;; dir) mkdir $2;; symlink) ln -s /dev/zero $2;; esac; }
case $CASE in
  pos-1|huge-cells|layers|rowsize|truncated) python3 $HERE/diskcache_damage.py $DIR $CASE >$W/damage.log || exit 1;;
  fifo-start|dir-start|symlink-start) odd ${CASE%-start} $(dirname $(echo "$KV" | head -1))/abababababababababababababababab.kv;;
esac

md5sum $(find $DIR -name '*.kv' -type f) 2>/dev/null | cut -d' ' -f1 | sort > $W/damaged.md5
# 2. the measured run
START=$(date +%s.%N)
/usr/bin/time -f "%M %x" -o $W/time.out $PRE $BIN $ARGS >$W/run.log 2>&1 & T=$!
sleep 0.3; P=$(pgrep -P $T | head -1)
if ready 150; then UP=$(python3 -c "import time;print(f'{time.time()-$START:.2f}s')"); else UP="never(30s)"; fi
case $CASE in
  fifo-serving|dir-serving|symlink-serving) for k in $KV; do rm $k; odd ${CASE%-serving} $k; done;;
esac
if [ "$UP" != "never(30s)" ]; then R=$(req run 60); else R="- -"; fi
H=$(curl -s -o /dev/null -w '%{http_code}' -m 2 http://127.0.0.1:$PORT/healthz)
END=$(stop $P; echo -n)
wait $T 2>/dev/null
# unblock anything still waiting on a FIFO, then clean up
for f in $(find $DIR -type p); do timeout 1 bash -c "exec 3>$f" 2>/dev/null; done
read RSS EXIT < $W/time.out 2>/dev/null
CRASH=$(grep -m1 -E "Assertion|SIGABRT|SIGSEGV|panic:|bad_alloc|terminate" $W/run.log | cut -c1-90)
LEFT=$(find $DIR -name '*.kv' ! -type f | wc -l)
SAME=$(python3 -c 'import json,sys
def t(p):
  try: return json.load(open(p))["choices"][0]["text"]
  except Exception: return None
a,b=t(sys.argv[1]),t(sys.argv[2])
print("no-answer" if b is None else ("same-text" if a==b else "other-text"))' $W/body.prep $W/body.run)
LEFTDMG=0; case $CASE in pos-1|huge-cells|layers|rowsize|truncated) LEFTDMG=$(md5sum $(find $DIR -name '*.kv' -type f) 2>/dev/null | cut -d' ' -f1 | sort | comm -12 - $W/damaged.md5 | wc -l);; esac
REMOVED=$(grep -c "failed its check" $W/run.log)
echo "$CASE | up $UP | request $R (healthz $H) | peakRSS $((RSS/1024))MiB | exit ${EXIT:-?}$END | ${CRASH:-no crash} | output $SAME | non-regular left $LEFT | damaged left $LEFTDMG | refusals logged $REMOVED"
) done
