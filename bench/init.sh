#!/usr/bin/env bash
# Times `init` of N providers and N modules (default 10 each) from a local
# HTTPS registry (the testkit's, as a process: crates/testkit/examples/
# local_registry.rs), terrane against real Terraform on the same registry,
# the same CLI configuration and the same CA file. The published provider
# is terrane's random provider (release build) under N names, signed as
# the registry protocol requires, so both tools download, verify and
# unpack N real-sized packages. The configuration also calls N registry
# modules (test/mI/null 1.0.0, Module Registry Protocol, .tar.gz through
# X-Terraform-Get), module mI requiring provider pI ">= 1.0", so each
# provider's constraints are solved across two modules.
#
# Scenarios, each REPEAT times (default 5) per tool, alternating tools:
#   cold   an empty working directory, no plugin cache
#   warm   init again in the directory just initialized (lock file and
#          installed tree present: nothing to download)
#   cache  a fresh directory with the lock file, TF_PLUGIN_CACHE_DIR
#          already holding every package (linked, not downloaded; the
#          modules are downloaded, as there is no module cache)
# Reported: median seconds with min-max, and terrane's speed-up
# (Terraform's median over terrane's; above 1 terrane is faster), also
# without the Terraform wrapper's start-up (bench/lib.sh). Every run's exit
# status is checked, and both tools must write the same lock file and the
# same module manifest (.terraform/modules/modules.json, as JSON values).
#
# terrane, the provider and the registry are release builds in their own
# target directory (CARGO_TARGET_DIR, default /work/target-bench), never
# the test build's; TERRANE_BIN=path times that terrane binary instead of
# building one (to compare two builds). Usage: bench/init.sh [N=10]. Runs
# on demand, not in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
source bench/lib.sh
n="${1:-10}"
REPEAT="${REPEAT:-5}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/work/target-bench}"
export CHECKPOINT_DISABLE=1
if [ -z "${TERRANE_BIN:-}" ]; then
  nice cargo build --release -q -p terrane-cli --bin terrane
fi
nice cargo build --release -q -p terrane-provider-random
nice cargo build --release -q -p terrane-testkit --features registry --example local_registry
bin="$CARGO_TARGET_DIR/release"
terrane="${TERRANE_BIN:-$bin/terrane}"
tf="$root/scripts/terraform"
work=$(mktemp -d)
regpid=""
cleanup() {
  if [ -n "$regpid" ]; then kill "$regpid" 2>/dev/null || true; fi
  exec 9>&- 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
# The registry serves until its standard input (a fifo we hold) closes.
mkfifo "$work/hold"
"$bin/examples/local_registry" "$bin/terraform-provider-random" "$n" "$work/env" \
  < "$work/hold" > "$work/registry.log" 2>&1 &
regpid=$!
exec 9> "$work/hold"
for _ in $(seq 1 3000); do
  [ -s "$work/env" ] && break
  kill -0 "$regpid" 2>/dev/null || { cat "$work/registry.log" >&2; exit 1; }
  sleep 0.1
done
[ -s "$work/env" ] || { echo "the local registry did not start" >&2; exit 1; }
while IFS='=' read -r k v; do export "$k=$v"; done < "$work/env"
size=$(stat -c %s "$bin/terraform-provider-random")
echo "providers=$n modules=$n package_binary_bytes=$size repeat=$REPEAT"
wrapper_startup "$tf"
{
  echo "terraform {"
  echo "  required_providers {"
  for ((i = 0; i < n; i++)); do
    echo "    p$i = { source = \"registry.terrane.test/test/p$i\" }"
  done
  echo "  }"
  echo "}"
  for ((i = 0; i < n; i++)); do
    echo "module \"m$i\" {"
    echo "  source  = \"registry.terrane.test/test/m$i/null\""
    echo "  version = \"1.0.0\""
    echo "}"
  done
} > "$work/main.tf"

declare -A times
run_tool() { # TOOL DIR ARGS...: runs one init, timed, into last_secs
  local tool=$1 dir=$2
  shift 2
  local exe=$terrane
  [ "$tool" = terraform ] && exe=$tf
  (cd "$dir" && timed 0 "$work/last" "$exe" init -input=false "$@")
}
for ((r = 0; r < REPEAT; r++)); do
  for tool in terrane terraform; do
    d="$work/$tool-$r"
    mkdir -p "$d"
    cp "$work/main.tf" "$d/"
    # cold
    start=$EPOCHREALTIME; run_tool "$tool" "$d"; end=$EPOCHREALTIME
    times[$tool.cold]+="$(echo "$end - $start" | bc) "
    # warm
    start=$EPOCHREALTIME; run_tool "$tool" "$d"; end=$EPOCHREALTIME
    times[$tool.warm]+="$(echo "$end - $start" | bc) "
    # cache: fill a cache once per tool and round (untimed), then time a
    # fresh directory holding only the configuration and the lock file.
    cache="$work/cache-$tool-$r"
    mkdir -p "$cache" "$d-fill" "$d-cache"
    cp "$work/main.tf" "$d/.terraform.lock.hcl" "$d-fill/"
    cp "$work/main.tf" "$d/.terraform.lock.hcl" "$d-cache/"
    TF_PLUGIN_CACHE_DIR="$cache" run_tool "$tool" "$d-fill"
    start=$EPOCHREALTIME; TF_PLUGIN_CACHE_DIR="$cache" run_tool "$tool" "$d-cache"; end=$EPOCHREALTIME
    times[$tool.cache]+="$(echo "$end - $start" | bc) "
    rm -rf "$d-fill" "$cache"
  done
  cmp "$work/terrane-$r/.terraform.lock.hcl" "$work/terraform-$r/.terraform.lock.hcl" \
    || { echo "benchmark failed: the two lock files differ" >&2; exit 1; }
  python3 -c 'import json, sys; a, b = (json.load(open(f)) for f in sys.argv[1:]); sys.exit(a != b)' \
    "$work/terrane-$r/.terraform/modules/modules.json" \
    "$work/terraform-$r/.terraform/modules/modules.json" \
    || { echo "benchmark failed: the two module manifests differ" >&2; exit 1; }
  rm -rf "$work/terrane-$r" "$work/terraform-$r" "$work/terrane-$r-cache" "$work/terraform-$r-cache"
done
printf '%-7s %-24s %-24s %-9s %s\n' scenario "terrane s (min-max)" "terraform s (min-max)" speed-up "speed-up without wrapper"
for s in cold warm cache; do
  read -r a amin amax <<< "$(median_spread "${times[terrane.$s]}")"
  read -r b bmin bmax <<< "$(median_spread "${times[terraform.$s]}")"
  printf '%-7s %-24s %-24s %-9s %s\n' "$s" "$a ($amin-$amax)" "$b ($bmin-$bmax)" \
    "$(speedup "$b" "$a")" "$(speedup_net "$b" "$a")"
done
