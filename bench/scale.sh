#!/usr/bin/env bash
# terrane alone at growing sizes (issue 19: "cost per resource at 100k
# within 1.3x of its cost at 1k, peak memory under 1 GB"): for each size N
# it writes N terraform_data instances (N/10 resource blocks of count = 10,
# so per-block and per-instance work both grow), then runs, in order,
# plan (empty state), apply, no-op plan, `state list`, `show -json` and
# destroy, each once under /usr/bin/time -v. Reported per phase: wall
# seconds, microseconds per resource and peak RSS (MB) of terrane itself
# (the built-in provider runs in-process, so that is all of it).
#
# Usage: bench/scale.sh [TERRANE_BINARY]   (default: a release build of
#        this checkout, built first)
# Environment: SIZES="1000 10000" (add 100000 when there is time: it takes
#              minutes per phase), KEEP=1 keeps the work directory.
# Every run's exit status is checked (bench/lib.sh): a failure, or a no-op
# plan that finds changes, fails the benchmark. Runs on demand, not in CI.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/bench/lib.sh"
if [ ! -x /usr/bin/time ]; then
  echo "scale: needs GNU time: apt-get install -y time" >&2
  exit 1
fi
if [ -n "${1:-}" ]; then
  terrane=$(realpath "$1")
else
  (cd "$root" && cargo build --release -q -p terrane-cli)
  terrane="$root/target/release/terrane"
fi
sizes="${SIZES:-1000 10000}"
export CHECKPOINT_DISABLE=1
work=$(mktemp -d)
if [ "${KEEP:-}" != "1" ]; then trap 'rm -rf "$work"' EXIT; fi
: > "$work/cli.tfrc"
export TF_CLI_CONFIG_FILE="$work/cli.tfrc"

phases=(plan apply noop_plan state_list show_json destroy)

# workload N: N/10 blocks of ten counted terraform_data instances.
workload() {
  local n=$1 i
  for ((i = 0; i < n / 10; i++)); do
    printf 'resource "terraform_data" "r%s" {\n  count = 10\n  input = "value-%s-${count.index}"\n}\n\n' "$i" "$i"
  done
}

# measure N PHASE WANT ARGS...: one run of terrane ARGS in the size's
# directory, its wall time and peak RSS recorded.
declare -A secs rss
measure() {
  local n=$1 phase=$2 want=$3
  shift 3
  local dir="$work/$n"
  timed "$want" "$work/log" /usr/bin/time -v -o "$work/time" "$terrane" -chdir="$dir" "$@"
  secs[$n.$phase]=$last_secs
  rss[$n.$phase]=$(sed -n 's/.*Maximum resident set size (kbytes): \([0-9]*\).*/\1/p' "$work/time")
}

p=(-input=false -parallelism=10)
for n in $sizes; do
  dir="$work/$n"
  mkdir -p "$dir"
  workload "$n" > "$dir/main.tf"
  "$terrane" -chdir="$dir" init > /dev/null
  measure "$n" plan 0 plan "${p[@]}"
  measure "$n" apply 0 apply -auto-approve "${p[@]}"
  measure "$n" noop_plan 0 plan -detailed-exitcode "${p[@]}"
  measure "$n" state_list 0 state list
  count=$(wc -l < "$work/log.out")
  [ "$count" -eq "$n" ] || { echo "scale: state list printed $count lines, not $n" >&2; exit 1; }
  measure "$n" show_json 0 show -json
  measure "$n" destroy 0 destroy -auto-approve "${p[@]}"
  echo "size $n done" >&2
done

echo "## bench/scale.sh: terrane $("$terrane" version | head -n 1 | awk '{print $2}'), sizes: $sizes"
printf '%-11s' phase
for n in $sizes; do printf ' %28s' "N=$n s | us/res | MB"; done
echo
for phase in "${phases[@]}"; do
  printf '%-11s' "$phase"
  for n in $sizes; do
    s=${secs[$n.$phase]}
    us=$(echo "scale=1; $s * 1000000 / $n" | bc)
    printf ' %28s' "$s | $us | $((rss[$n.$phase] / 1024))"
  done
  echo
done
