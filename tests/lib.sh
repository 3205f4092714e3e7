# Shared by the tests/*/run.sh scripts and bench/run.sh: source it.

# An area that skips exits with this status (automake's): tests/run.sh counts it apart.
SKIPPED_STATUS=77

# skip_or_fail WHY: outside CI a tool that cannot be had skips the area with a loud notice
# (exit status SKIPPED_STATUS); in CI (CI=true) that is a failure.
skip_or_fail() {
  if [ "${CI:-}" = "true" ]; then
    echo "FAIL: $1 (CI=true: no test may be skipped)" >&2
    exit 1
  fi
  echo "!!!!!!!! SKIPPED: $1 !!!!!!!!" >&2
  exit "$SKIPPED_STATUS"
}

# ---- Results: every area closes with the one line `finish AREA` prints,
#   AREA: N passed, N failed
# (and ", N skipped" with a loud notice, outside CI only: in CI a skip is a failure). A check
# is a command: `check WHAT COMMAND...` passes when it succeeds; `pass WHAT` / `fail WHAT` /
# `skip WHAT` record what a script decides itself; `tally WHAT COMMAND...` runs a program
# that closes with its own "[name: ]N passed, M failed" line and adds up its counts.
RESULTS_PASSED=0
RESULTS_FAILED=0
RESULTS_SKIPPED=0
pass() {
  RESULTS_PASSED=$((RESULTS_PASSED + 1))
  echo "ok: $*"
}
fail() {
  RESULTS_FAILED=$((RESULTS_FAILED + 1))
  echo "FAIL: $*" >&2
}
skip() {
  if [ "${CI:-}" = "true" ]; then
    fail "$* (skipped, and CI=true: no test may be skipped)"
    return
  fi
  RESULTS_SKIPPED=$((RESULTS_SKIPPED + 1))
  echo "!!!!!!!! SKIPPED: $* !!!!!!!!" >&2
}
check() {
  local what="$1"
  shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}
tally() {
  local what="$1" log rc line p f errexit=0
  shift
  log="$(mktemp)"
  [[ $- == *e* ]] && errexit=1
  set +e
  "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  [ "$errexit" = 1 ] && set -e
  line="$(grep -E '^([A-Za-z0-9 _-]+: )?[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1 || true)"
  rm -f "$log"
  if [ -z "$line" ]; then
    fail "$what printed no closing 'N passed, M failed' line (exit $rc)"
    return 0
  fi
  line="${line##*: }"
  p="${line%% passed*}"
  f="${line#*passed, }"
  f="${f%% failed}"
  RESULTS_PASSED=$((RESULTS_PASSED + p))
  RESULTS_FAILED=$((RESULTS_FAILED + f))
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    fail "$what exited $rc"
  fi
}
# finish AREA: prints the area's closing line; returns 1 when anything failed, SKIPPED_STATUS
# when something was skipped (outside CI), else 0.
finish() {
  local line="$1: $RESULTS_PASSED passed, $RESULTS_FAILED failed"
  if [ "$RESULTS_SKIPPED" -gt 0 ]; then
    echo "!!!!!!!! $1: $RESULTS_SKIPPED skipped !!!!!!!!" >&2
    line="$line, $RESULTS_SKIPPED skipped"
  fi
  echo
  echo "$line"
  [ "$RESULTS_FAILED" -eq 0 ] || return 1
  [ "$RESULTS_SKIPPED" -eq 0 ] || return "$SKIPPED_STATUS"
}

ensure_cargo() {
  if ! command -v cargo >/dev/null 2>&1 && [ -x "${HOME:-/root}/.cargo/bin/cargo" ]; then
    export PATH="${HOME:-/root}/.cargo/bin:$PATH"
  fi
  command -v cargo >/dev/null 2>&1 || skip_or_fail "cargo is not installed"
}

# apt_install PKG...: installs Debian packages that are missing (root on these machines).
apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  apt_locked $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq \
    && apt_locked env DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${missing[@]}" >/dev/null
}
# apt_locked COMMAND...: one apt-get at a time (tests/run.sh runs two lanes of areas at once,
# and `apt-get update` fails at once when another holds the package lists: DPkg::Lock::Timeout
# waits for dpkg's lock only). -o: a service the install starts does not keep the lock.
apt_locked() {
  flock -o /tmp/flakery-apt.lock "$@"
}

# need TOOL [PKG...]: TOOL on PATH, installing the Debian packages PKG when it is missing;
# skip_or_fail when it still cannot be had.
need() {
  local tool="$1"
  shift
  command -v "$tool" >/dev/null 2>&1 && return 0
  [ $# -gt 0 ] && { apt_install "$@" || true; }
  command -v "$tool" >/dev/null 2>&1 || skip_or_fail "$tool is not installed"
}

# quiet CMD...: runs a command, showing its output only when it fails (and then returns 1,
# which ends a script under set -e).
quiet() {
  local log
  log="$(mktemp)"
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    echo "FAIL: $*" >&2
    return 1
  fi
  rm -f "$log"
}

# target_dir: cargo's target directory, as an absolute path.
target_dir() {
  local target="${CARGO_TARGET_DIR:-target}"
  case "$target" in /*) ;; *) target="$PWD/$target" ;; esac
  echo "$target"
}

# zookeeper_tests_target_dir: the target directory of flakery-zookeeper's system tests
# (tests/zookeeper, tests/partition), inside target_dir. One of their own: their build
# shares almost nothing with the workspace's (another feature unification: 39 of its 46
# crates were compiled again in the shared one), and in the shared one it and every `cargo
# test --test NAME` waited for the workspace's clippy and test builds (9 of the area's 11
# minutes in a fresh-clone run; docs/development.md, "The tiers").
zookeeper_tests_target_dir() {
  echo "$(target_dir)/zookeeper-tests"
}

# What a program linking libflakery.a needs beside it: the system libraries of Rust's
# standard library (`cargo rustc -p flakery-c --release --crate-type staticlib -- --print
# native-static-libs`, Linux with glibc).
FLAKERY_STATIC_LIBS=(-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc)

# The tests choose their own node IDs and layouts: none may come from the caller's shell.
unset_flakery_env() {
  unset FLAKERY_LAYOUT FLAKERY_WORKER_ID FLAKERY_DATACENTER_ID FLAKERY_ZOOKEEPER \
    FLAKERY_NAMESPACE FLAKERY_LEASE_DIR FLAKERY_SESSION_TIMEOUT_MS \
    FLAKERY_DATABASE_URL FLAKERY_DATABASE_MODE
}

# built_this_run FILE: FILE was made during this run of tests/run.sh (it is newer than the
# run's start mark, FLAKERY_RUN_MARK), so an area may install it rather than build it again.
# Run alone, an area builds what it needs itself.
built_this_run() {
  [ -n "${FLAKERY_RUN_MARK:-}" ] && [ -f "$1" ] && [ "$1" -nt "$FLAKERY_RUN_MARK" ]
}

# pytest_run PYTHON PATH...: pytest -q on PATH; collecting no test at all is a failure too.
pytest_run() {
  local py="$1" status=0
  shift
  "$py" -m pytest -q -p no:cacheprovider "$@" || status=$?
  [ "$status" -ne 5 ] || echo "FAIL: pytest collected no tests in $*" >&2
  return "$status"
}

# cargo_tests_side_by_side [--each-test] CARGO_TEST_ARGS...: the test targets of `cargo test
# CARGO_TEST_ARGS` (the unit tests, the doctests and each tests/*.rs), built once, then run all
# at once; each one's output is printed whole when all have ended, and each is a check. For
# areas whose test binaries spend their time waiting on servers they start themselves
# (tests/db, tests/zookeeper): `cargo test` runs them one after another. The test binaries
# run as cargo runs them (in their package's directory), but without cargo: a `cargo test
# --test NAME` takes the target directory's lock, if only to find its binary fresh, and
# waits while another area builds there. The doctests need cargo (rustdoc builds them). With
# --each-test, every test of a tests/*.rs target runs in a process of its own (`--exact
# TEST`), all side by side: for targets whose tests each start their own server and take
# turns within one process (tests/zookeeper: a process-wide log of events).
cargo_tests_side_by_side() {
  local targets kind name exe dir tests test i rc each=0 out
  local labels=() pids=()
  if [ "${1:-}" = --each-test ]; then
    each=1
    shift
  fi
  # One line a test binary: KIND NAME EXECUTABLE PACKAGE_DIRECTORY (lib or test).
  targets="$(cargo test "$@" --no-run --message-format=json | python3 -c 'import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        kind = "lib" if "lib" in m["target"]["kind"] else "test"
        print(kind, m["target"]["name"], m["executable"], os.path.dirname(m["manifest_path"]))')" || {
    fail "cargo test $* --no-run"
    return 0
  }
  # The label of each binary: the arguments without the `--test NAME` that select targets.
  local selection=() skip_next=0 arg
  for arg in "$@"; do
    if [ "$skip_next" = 1 ]; then skip_next=0; continue; fi
    if [ "$arg" = --test ]; then skip_next=1; continue; fi
    selection+=("$arg")
  done
  out="$(mktemp -d)"
  # run_one LABEL DIRECTORY COMMAND...: in the background, its output in a file of its own.
  run_one() {
    local label="$1" where="$2"
    shift 2
    (cd "$where" && "$@") >"$out/${#labels[@]}.log" 2>&1 &
    labels+=("$label")
    pids+=($!)
  }
  while read -r kind name exe dir; do
    [ -n "$kind" ] || continue
    if [ "$kind" = lib ]; then
      run_one "${selection[*]} --lib" "$dir" "$exe"
      run_one "$* --doc" "$PWD" cargo test "$@" --doc
    elif [ "$each" = 1 ]; then
      tests="$(cd "$dir" && "$exe" --list --format=terse | sed -n 's/: test$//p')"
      [ -n "$tests" ] || fail "${selection[*]} --test $name --list: no test listed"
      for test in $tests; do
        run_one "${selection[*]} --test $name --exact $test" "$dir" "$exe" --exact "$test"
      done
    else
      run_one "${selection[*]} --test $name" "$dir" "$exe"
    fi
  done <<<"$targets"
  for i in "${!pids[@]}"; do
    rc=0
    wait "${pids[$i]}" || rc=$?
    echo "--- cargo test ${labels[$i]}"
    cat "$out/$i.log"
    if [ "$rc" -eq 0 ]; then
      pass "cargo test ${labels[$i]}"
    else
      fail "cargo test ${labels[$i]} (exit $rc)"
    fi
  done
  rm -rf "$out"
}
