#!/usr/bin/env bash
# The C ABI (bindings-c, include/flakery.h): builds libflakery, checks that the committed header
# is what cbindgen generates, then builds and runs
#   - tests/c/test.c with tests/c/test_*.c (one program, its tests in a file per idea) as C11
#     (-Wall -Wextra -Werror -pedantic) under ASan + UBSan, linked statically with the link line
#     of docs/c.md;
#   - tests/c/test.cpp as C++17 (-Wall -Wextra -Werror -pedantic) under ASan + UBSan;
#   - tests/c/versions.c as C11 under ASan + UBSan: struct_size across versions (an older and
#     a newer flakery_options against this library);
#   - that program again, against an installed copy through pkg-config: shared and static.
# Closes with "c: N passed, M failed" (tests/lib.sh: the sum of every program's own closing
# line, and the checks made here).
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
ensure_cargo

need cc gcc libc6-dev
need g++ g++
need pkg-config pkg-config

root="$PWD"
target="$(target_dir)"
work="$target/c-test"
mkdir -p "$work"

unset_flakery_env
export FLAKERY_LEASE_DIR="$work/leases"
mkdir -p "$FLAKERY_LEASE_DIR"

# test_leases.c leases from a real PostgreSQL (Debian's package), started here and stopped on exit.
# Without one (outside CI only) it skips that test loudly and runs the rest.
json_field() { python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
if bash tests/db/install.sh && db="$(python3 tests/db/dbserver.py start postgres)"; then
  db_dir="$(json_field dir <<<"$db")"
  trap 'python3 tests/db/dbserver.py stop "$db_dir" >/dev/null 2>&1 || true' EXIT
  C_TEST_DATABASE_URL="$(json_field url <<<"$db")"
  C_TEST_DATABASE_PASSWORD="$(json_field password <<<"$db")"
  export C_TEST_DATABASE_URL C_TEST_DATABASE_PASSWORD
elif [ "${CI:-}" = "true" ]; then
  echo "FAIL: cannot install or start PostgreSQL (CI=true: no test may be skipped)" >&2
  exit 1
fi

echo "--- cargo build --release -p flakery-c"
cargo build --release --locked -p flakery-c
echo "--- include/flakery.h is what cbindgen generates"
# tests/rust's command line with a filter: in tests/run.sh its test binaries are built already
# (a `-p flakery-c` of its own would unify features anew and build the core once more; `--lib`
# would build the Python, Node and Java bindings' libraries as tests, which `--workspace` leaves
# out: they set test = false).
header_is_generated() {
  local out
  out="$(cargo test --workspace --locked --tests -- --exact header_test::header_is_up_to_date 2>&1)" \
    || { printf '%s\n' "$out"; return 1; }
  grep -q '^test header_test::header_is_up_to_date ... ok$' <<<"$out" \
    || { printf '%s\n' "$out"; echo "the header test did not run" >&2; return 1; }
}
check "include/flakery.h is what cbindgen generates" header_is_generated

# test_client_options.c and test_generator_options.c check the C structs against the options
# tables as the docs show them (rendered from core/src/option_table/), one line each:
# - the client's (docs/client.md#options): each numeric row as "member=default";
# - the generator's numeric members without a has_* flag (docs/spec.md#generator-options):
#   "member=least:default", least the smallest value the table's values allow (0 or 1),
#   default the table's number or "-" (none of its own: from the environment).
{ read -r FLAKERY_TEST_CLIENT_TABLE; read -r FLAKERY_TEST_GENERATOR_TABLE; } < <(python3 - <<'PY'
import re

def rows(path, heading):
    """The cells of each row of the table after heading."""
    text = open(path).read().split(heading, 1)[1]
    seen = False
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 10 and line.startswith("| `"):
            seen = True
            yield cells
        elif seen and not line.startswith("|"):
            return

client = [f"{c[3].strip('`')}={m.group(1)}" for c in rows("docs/client.md", "## Options")
          if (m := re.fullmatch(r"(\d+)( ms)?", c[8]))]
generator = []
for c in rows("docs/spec.md", "### Generator options"):
    if c[2].strip("`").endswith("_ms"):
        least = re.match(r"(\d+) to ", c[7])
        default = c[8] if re.fullmatch(r"\d+", c[8]) else "-"
        generator.append(f"{c[2].strip('`')}={least.group(1) if least else '?'}:{default}")
print(",".join(client))
print(",".join(generator))
PY
)
export FLAKERY_TEST_CLIENT_TABLE FLAKERY_TEST_GENERATOR_TABLE
echo "client options table (docs/client.md): $FLAKERY_TEST_CLIENT_TABLE"
echo "generator options table (docs/spec.md): $FLAKERY_TEST_GENERATOR_TABLE"

# The link line of docs/c.md: the archive, then FLAKERY_STATIC_LIBS.
sanitize=(-g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all)
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

run() { # run NAME PROGRAM: runs a test program and adds up its closing "N passed, M failed".
  echo "--- $1"
  tally "$@"
}

c_test=(tests/c/test.c tests/c/test_*.c) # one program, its tests in a file per idea
echo "--- build: C11 + ASan/UBSan, static"
cc -std=c11 -Wall -Wextra -Werror -pedantic "${sanitize[@]}" -Iinclude "${c_test[@]}" \
  "$target/release/libflakery.a" "${FLAKERY_STATIC_LIBS[@]}" -o "$work/test_c_static"
echo "--- build: C++17 + ASan/UBSan, static"
g++ -std=c++17 -Wall -Wextra -Werror -pedantic "${sanitize[@]}" -Iinclude tests/c/test.cpp \
  "$target/release/libflakery.a" "${FLAKERY_STATIC_LIBS[@]}" -o "$work/test_cpp_static"
echo "--- build: struct_size across versions, C11 + ASan/UBSan, static"
cc -std=c11 -Wall -Wextra -Werror -pedantic "${sanitize[@]}" -Iinclude tests/c/versions.c \
  "$target/release/libflakery.a" "${FLAKERY_STATIC_LIBS[@]}" -o "$work/test_versions"

run "C test (static, ASan+UBSan)" "$work/test_c_static"
run "C++ test (static, ASan+UBSan)" "$work/test_cpp_static"
run "struct_size across versions (static, ASan+UBSan)" "$work/test_versions"

echo "--- install into a scratch prefix; build through pkg-config"
prefix="$work/prefix"
rm -rf "$prefix"
bash bindings-c/install.sh "$prefix"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror -pedantic "${c_test[@]}" $(pkg-config --cflags --libs flakery) \
  -Wl,-rpath,"$(pkg-config --variable=libdir flakery)" -o "$work/test_c_shared"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror -pedantic $(pkg-config --cflags flakery-static) "${c_test[@]}" \
  $(pkg-config --libs flakery-static) -o "$work/test_c_pkgconfig_static"
# (ldd's output is kept first: `ldd | grep -q` can fail under pipefail when grep exits early.)
shared_deps="$(ldd "$work/test_c_shared")"
static_deps="$(ldd "$work/test_c_pkgconfig_static")"
check "test_c_shared loads libflakery.so" grep -q libflakery.so <<<"$shared_deps"
check "test_c_pkgconfig_static does not load libflakery.so" \
  bash -c '! grep -q libflakery.so <<<"$1"' _ "$static_deps"
run "C test (shared, pkg-config flakery)" "$work/test_c_shared"
run "C test (static, pkg-config flakery-static)" "$work/test_c_pkgconfig_static"
finish c
