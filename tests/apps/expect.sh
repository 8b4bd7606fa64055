#!/usr/bin/env bash
# Runs a command and checks how it ended: its exit status, that it ended in time, and what it
# printed (stdout and stderr together).
#
#   expect.sh [--status N|nonzero] [--within SECONDS] [--match REGEX]... [--absent REGEX]... -- COMMAND...
#
#   --status   the exit status expected: a number, or "nonzero" (default 0)
#   --within   seconds the command may run (default 120); past them it is killed and the check fails
#   --match    an extended regular expression (grep -E) that some line of the output must match
#   --absent   one that no line may match
#
# The command runs in a process group of its own, which is killed when it ends, so that a rank
# left behind (a stopped one, say) never outlives the test. Prints the output and every failed
# check, and exits 1 when any check failed.
set -uo pipefail

status=0
within=120
matches=()
absents=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --status) status=$2; shift 2 ;;
    --within) within=$2; shift 2 ;;
    --match) matches+=("$2"); shift 2 ;;
    --absent) absents+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "expect.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[[ $# -gt 0 ]] || { echo "expect.sh: no command given" >&2; exit 2; }

output=$(mktemp)
trap 'rm -f "$output"' EXIT

started=$(date +%s%N)
setsid "$@" >"$output" 2>&1 </dev/null &
pid=$!
timed_out=0
deadline=$((started + within * 1000000000))
while kill -0 "$pid" 2>/dev/null; do
  if (($(date +%s%N) > deadline)); then
    timed_out=1
    kill -TERM -- "-$pid" 2>/dev/null
    sleep 2
    kill -KILL -- "-$pid" 2>/dev/null
    break
  fi
  sleep 0.1
done
wait "$pid"
got=$?
elapsed_ms=$((($(date +%s%N) - started) / 1000000))
# Whatever the command left in its group (a stopped rank) goes with it.
kill -KILL -- "-$pid" 2>/dev/null

cat "$output"
echo "---- expect.sh: exit status $got after $((elapsed_ms / 1000)).$((elapsed_ms % 1000 / 100)) s"

failed=0
fail() {
  echo "expect.sh: FAILED: $*"
  failed=1
}
if ((timed_out)); then
  fail "the command did not end within $within s"
elif [[ $status == nonzero ]]; then
  ((got != 0)) || fail "exit status 0, expected a failure"
elif ((got != status)); then
  fail "exit status $got, expected $status"
fi
for pattern in "${matches[@]}"; do
  grep -Eq -- "$pattern" "$output" || fail "no line matches: $pattern"
done
for pattern in "${absents[@]}"; do
  grep -Eq -- "$pattern" "$output" && fail "a line matches what must be absent: $pattern"
done
exit "$failed"
