#!/usr/bin/env bash
# Runs every test of the project on a fresh machine: installs what is missing, builds, tests.
# Each area has its own script (tests/<area>/run.sh) that installs its own tools; this one
# runs them, prints how long each took (wall and CPU time), and fails if any fails. In CI
# (CI=true) no area may skip; elsewhere an area that cannot run here is counted apart, loudly.
#
# The areas share one cargo target directory (CARGO_TARGET_DIR, else target/) and reuse what
# the earlier ones built: tests/python installs the wheel that dist/build.sh builds once,
# tests/docs and bench/smoke.sh the Python package and Node addon of tests/python and
# tests/node (docs/development.md, "The tiers").
#
# The areas run in lanes, side by side: a lane runs its areas in turn, and the lanes run at
# once, so that one area's waits on servers and single-threaded links leave the cores to the
# others (docs/development.md, "The tiers"). What decides the lanes:
#   - an area after the one whose artifacts it uses (tests/python installs tests/dist's wheel;
#     tests/docs uses the package and addon of python and node, and runs after java): later in
#     the same lane, or after an "after:AREA" entry;
#   - cargo replaces a file it puts at the top of target/ (target/debug/flakery,
#     target/release/libflakery_node.so) when another feature unification builds it again:
#     every area builds such a file with the same command as the others that use it (then
#     cargo finds it fresh and leaves it), or runs once no area that uses it is running
#     (tests/node, after tests/dist). The debug graph is tests/rust's `cargo test --workspace`:
#     the other areas build from it with `--workspace` and a feature or a target named, so
#     that cargo unifies features alike and builds only what differs (a `-p` build unifies
#     them anew and compiles much of the graph again).
# The run ends when the last lane has: the lanes are balanced so that the cores stay busy to
# the end, not one lane alone for the last minutes.
# An area's output is kept apart and printed whole when it ends, with its wall and CPU time.
# FLAKERY_TEST_LANES=1 runs every area in one lane, in the order of the table at the end.
set -uo pipefail
cd "$(dirname "$0")/.."
export FLAKERY_REPO_ROOT="$PWD"
source tests/lib.sh
# What the areas build in this run is newer than this mark (built_this_run, tests/lib.sh).
FLAKERY_RUN_MARK="$(mktemp)"
export FLAKERY_RUN_MARK
run_dir="$(mktemp -d)"
lane_pids=()
stop_lanes() { # each lane is a process group of its own (set -m below): end it whole
  local pid
  for pid in "${lane_pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null; done
  exit 130
}
trap stop_lanes INT TERM
trap 'rm -rf "$FLAKERY_RUN_MARK" "$run_dir"' EXIT

# Five lanes, side by side. An entry "after:AREA" waits there until AREA has ended. The run
# is bound by its CPU time (half of it, on 2 cores) once the waits overlap: the lanes are
# laid out so that the areas that mostly wait (servers, installs) run beside the builds, and
# the chain at the end is short (docs/development.md, "The tiers").
lane_debug=(tests/rust/run.sh tests/security/run.sh)
# tests/server on its own from the start: it installs its tools and Python packages while the
# others build, then builds the CLI with tier 1's command (`cargo test --workspace --test
# cli --no-run`), which waits for tests/rust's clippy and builds what tier 1 finds fresh
# after it, and runs its tests beside tier 1's instead of after them.
# tests/model after it: its release build and its single-threaded search (a few minutes of
# CPU) in the lane that ends first, long before the others (ci: 428 s against 580 to 960 s).
lane_server=(tests/server/run.sh tests/model/run.sh)
# tests/client after tests/node: both run `npm ci` in the repository (which replaces
# node_modules and builds the addon), and it tests the Node Client of that addon.
# bench/smoke.sh installs the wheel of tests/dist and uses the addon of tests/node, both ended
# by then; its CLI is tier 1's target/debug/flakery (bench/run.sh, the smoke run's build).
lane_release=(tests/dist/run.sh tests/node/run.sh tests/client/run.sh bench/smoke.sh)
# The areas that wait on servers first: tests/zookeeper builds in a target directory of its
# own (zookeeper_tests_target_dir, tests/lib.sh), so it waits on no other lane's build.
# tests/python once tests/dist has built the wheel it installs.
lane_servers=(tests/zookeeper/run.sh tests/partition/run.sh tests/db/run.sh tests/fuzz/run.sh
  after:tests/dist/run.sh tests/python/run.sh)
# tests/postgres first: its release build of the extension (postgres/target) is the one that
# tests/dist's tarball takes; run last, dist waited for it on the critical path.
# tests/java after tests/dist: both run Maven in java/ (dist packages the release jar there),
# and two Maven runs in one project directory at once would pack each other's files.
# tests/docs last: it runs its blocks against the package of tests/python, the addon of
# tests/node and the jar of tests/java (which has run Maven in java/ by then), and not beside
# tests/client, whose `npm ci` replaces node_modules and the addon under its Node blocks.
lane_native=(tests/postgres/run.sh tests/c/run.sh tests/go/run.sh
  after:tests/dist/run.sh tests/java/run.sh
  after:tests/python/run.sh after:tests/client/run.sh tests/docs/run.sh)
# The order of the table (and of FLAKERY_TEST_LANES=1).
areas=(
  tests/rust/run.sh
  tests/security/run.sh
  tests/dist/run.sh
  tests/python/run.sh
  tests/node/run.sh
  tests/c/run.sh
  tests/go/run.sh
  tests/zookeeper/run.sh
  tests/partition/run.sh
  tests/db/run.sh
  tests/server/run.sh
  tests/client/run.sh
  tests/fuzz/run.sh
  tests/model/run.sh
  tests/java/run.sh
  tests/postgres/run.sh
  tests/docs/run.sh
  bench/smoke.sh
)

# Every area in exactly one lane.
if [ "$(printf '%s\n' "${areas[@]}" | sort)" != \
  "$(printf '%s\n' "${lane_debug[@]}" "${lane_server[@]}" "${lane_release[@]}" "${lane_servers[@]}" \
    "${lane_native[@]}" \
    | grep -v '^after:' | sort)" ]; then
  echo "FAIL: tests/run.sh: the lanes do not hold each area of the table exactly once" >&2
  exit 1
fi

# run_area SCRIPT: runs one area with its output in a file of its own, then prints that output
# whole (one area at a time: the lock) and records "status wall cpu" in $run_dir.
run_area() {
  local script="$1" name status=0 took cpu began_at
  name="${script//\//_}"
  began_at=$(($(date +%s) - run_began))
  echo "--- started $script (at $began_at s)"
  local TIMEFORMAT='%R %U %S'
  {
    time {
      if [ -f "$script" ]; then
        bash "$script" >"$run_dir/$name.log" 2>&1 || status=$?
      else
        status=1
        echo "FAIL: $script is missing" >"$run_dir/$name.log"
      fi
    }
  } 2>"$run_dir/$name.time"
  # wall seconds, and CPU seconds (user + system) of the area's processes
  read -r took cpu < <(awk '{ printf "%d %d\n", $1 + 0.5, $2 + $3 + 0.5 }' "$run_dir/$name.time")
  echo "$status $took $cpu $began_at" >"$run_dir/$name.result"
  {
    flock 9
    echo "=== $script"
    cat "$run_dir/$name.log"
    echo "=== $script: exit $status, $took s, $cpu s of CPU"
  } 9>"$run_dir/print.lock"
}
run_lane() {
  local script area
  for script in "$@"; do
    case "$script" in
      after:*) # until that area's result is written (run_area writes it whatever the outcome)
        area="${script#after:}"
        until [ -f "$run_dir/${area//\//_}.result" ]; do sleep 1; done ;;
      *) run_area "$script" ;;
    esac
  done
}

began=$SECONDS
run_began=$(date +%s)
if [ "${FLAKERY_TEST_LANES:-}" = 1 ]; then
  run_lane "${areas[@]}"
else
  # Job control on: each lane gets a process group of its own, and its programs the signal
  # dispositions of a foreground command (a background job of a script without it ignores
  # SIGINT and SIGQUIT, and so would every test process it starts). No lane reads a terminal.
  set -m
  start_lane() {
    run_lane "$@" </dev/null &
    lane_pids+=($!)
  }
  wait_lanes() {
    wait "${lane_pids[@]}"
    lane_pids=()
  }
  start_lane "${lane_debug[@]}"
  start_lane "${lane_server[@]}"
  start_lane "${lane_release[@]}"
  start_lane "${lane_servers[@]}"
  start_lane "${lane_native[@]}"
  wait_lanes
  set +m
fi
total=$((SECONDS - began))

echo
rows=()
cpu_total=0
cpu_later=0 # of the areas that came after the 20-minute goal (docs/development.md, "The tiers")
for script in "${areas[@]}"; do
  status=1 took=0 cpu=0 began_at=0
  result="$run_dir/${script//\//_}.result"
  [ -f "$result" ] && read -r status took cpu began_at <"$result"
  cpu_total=$((cpu_total + cpu))
  case "$script" in tests/java/* | tests/postgres/* | tests/client/*) cpu_later=$((cpu_later + cpu)) ;; esac
  rows+=("$(printf '%6d s %6d s %6d s  %s' "$took" "$cpu" "$began_at" "$script")")
  case "$status" in
    0) pass "$script ($took s)" ;;
    "$SKIPPED_STATUS") skip "$script ($took s)" ;;
    *) fail "$script ($took s, exit $status)" ;;
  esac
done
echo
echo "--- time per area: wall, CPU (user + system of its processes), started (s after the run's start)"
printf '%s\n' "${rows[@]}"
printf '%6d s %6d s           in all (the wall time of the whole run; the lanes overlap)\n' "$total" "$cpu_total"
printf '         %6d s           of it in tests/java, tests/postgres and tests/client, the areas added after the other 14\n' "$cpu_later"
# The failures again, last: a CI report that keeps only the end of the output still says what
# failed, not only where.
for script in "${areas[@]}"; do
  result="$run_dir/${script//\//_}.result"
  status=1
  [ -f "$result" ] && read -r status _ <"$result"
  case "$status" in 0 | "$SKIPPED_STATUS") continue ;; esac
  echo
  echo "--- what failed in $script (its FAIL lines and panics, the last 15)"
  grep -aE "^FAIL|FAILED|panicked at|^test .* \.\.\. FAILED|^not ok|AssertionError|^E  " \
    "$run_dir/${script//\//_}.log" 2>/dev/null | cut -c1-400 | tail -n 15 || true
done
finish areas
