#!/usr/bin/env bash
# Two terrane binaries (A: before a change, B: after) compared by the
# instructions they execute, not by wall time: each phase of the workload
# runs under valgrind's callgrind, which counts instructions (Ir) whatever
# else the machine is doing. On a shared, noisy machine this is the measure
# that can say "no slower" with a spread of about 1%; bench/engine_ab.sh
# gives the wall times (and Terraform's) when the machine is quiet.
#
# Usage: bench/engine_ir.sh A_BINARY B_BINARY [independent|chain] [N=2000]
# Environment: ROUNDS=3 (runs per binary; Ir varies a little with thread
# scheduling, so the spread is reported).
#
# Each round runs plan (empty state), apply, no-op plan and destroy, each
# under callgrind, for A and then B. Every run's exit status is checked, and
# a no-op plan that finds changes fails the benchmark. Reported per phase:
# the median Ir of each binary with its min-max, in millions, and B/A.
# Runs on demand, not in CI (needs valgrind: apt-get install valgrind).
set -euo pipefail
a_bin=$(realpath "$1")
b_bin=$(realpath "$2")
shape="${3:-independent}"
n="${4:-2000}"
rounds="${ROUNDS:-3}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/bench/lib.sh"
command -v valgrind > /dev/null || { echo "engine_ir: valgrind is not installed" >&2; exit 1; }
export CHECKPOINT_DISABLE=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
: > "$work/cli.tfrc"
export TF_CLI_CONFIG_FILE="$work/cli.tfrc"

config=$(ab_workload "$shape" "$n")

phases=(plan apply noop_plan destroy)
declare -A irs

# run NAME BIN: one round of the four phases in a fresh directory, each
# phase's instruction count recorded under NAME.
run() {
  local name=$1 bin=$2 dir="$work/$1" p=(-input=false -parallelism=10)
  rm -rf "$dir" && mkdir -p "$dir" && printf '%s\n' "$config" > "$dir/main.tf"
  "$bin" -chdir="$dir" init > /dev/null
  local phase args want
  for phase in "${phases[@]}"; do
    want=0
    case $phase in
      plan) args=(plan "${p[@]}") ;;
      apply) args=(apply -auto-approve "${p[@]}") ;;
      noop_plan) args=(plan -detailed-exitcode "${p[@]}") ;;
      destroy) args=(destroy -auto-approve "${p[@]}") ;;
    esac
    (cd "$dir" && timed "$want" "$work/log" valgrind --tool=callgrind \
      --callgrind-out-file=/dev/null "$bin" "${args[@]}")
    local ir
    ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/log.err" | tail -n 1)
    [ -n "$ir" ] || { echo "engine_ir: no instruction count for $name $phase" >&2; exit 1; }
    irs[$name.$phase]+="$(echo "scale=3; $ir / 1000000" | bc) "
  done
}

for ((r = 0; r < rounds; r++)); do
  run A "$a_bin"
  run B "$b_bin"
  echo "round $((r + 1))/$rounds done" >&2
done

echo "## engine_ir $shape N=$n, $rounds rounds (median [min-max] million instructions)"
printf '%-10s %-30s %-30s %8s\n' phase A B B/A
for phase in "${phases[@]}"; do
  read -r am amin amax <<< "$(median_spread "${irs[A.$phase]}")"
  read -r bm bmin bmax <<< "$(median_spread "${irs[B.$phase]}")"
  printf '%-10s %-30s %-30s %8s\n' "$phase" "$am [$amin-$amax]" "$bm [$bmin-$bmax]" "$(printf '%.3f' "$(echo "$bm / $am" | bc -l)")"
done
