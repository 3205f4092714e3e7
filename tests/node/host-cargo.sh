#!/usr/bin/env bash
# CARGO for `napi build` in tests/node/run.sh. napi build always passes `--target` with the
# triple it builds for, the host's here, and cargo puts a build for an explicit target in a
# directory of its own (target/x86_64-unknown-linux-gnu/release/): the addon's whole release
# graph a second time, beside the one of target/release/ that tests/dist and `npm ci` built
# with the same command otherwise. This runs that command without `--target HOST` (cargo then
# builds again only flakery-node, whose macros write the type definitions napi asked for), and
# links the libraries where napi looks for them (TARGET_DIR/HOST/PROFILE/).
set -euo pipefail
host="$(rustc -vV | sed -n 's/^host: //p')"
args=()
profile=debug
while [ $# -gt 0 ]; do
  case "$1" in
    --target)
      if [ "${2:-}" = "$host" ]; then
        shift 2
        continue
      fi
      ;;
    --release) profile=release ;;
  esac
  args+=("$1")
  shift
done
cargo "${args[@]}"
target="${CARGO_TARGET_DIR:-target}" # napi runs cargo at the repository root
mkdir -p "$target/$host/$profile"
ln -f "$target/$profile"/lib*.so "$target/$host/$profile/"
