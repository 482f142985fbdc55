#!/usr/bin/env bash
# Two terrane binaries (A: before a change, B: after) on the same workload,
# run alternately so that the noise of a shared machine falls on both
# alike, plus real Terraform once on the same workload for the ratio.
#
# Usage: bench/engine_ab.sh A_BINARY B_BINARY [independent|chain] [N=2000]
# Environment: ROUNDS=5 (alternating rounds per binary), TF=0 to skip
# Terraform, TF_CAP=600 (seconds after which a Terraform phase is cut off).
#
# Each round runs plan (empty state), apply, no-op plan and destroy with A
# and then with B (the order flips every round), after one untimed warm-up
# round of each (Terraform: one untimed round too). Every run's exit status
# is checked, and a no-op plan that finds changes fails the benchmark.
# Reported per phase: the median wall time of each binary with its min-max,
# B/A, and terrane's speed-up over Terraform for each binary (Terraform's
# median over the binary's), also without the Terraform wrapper's start-up
# (bench/lib.sh). Runs on demand, not in CI.
set -euo pipefail
a_bin=$(realpath "$1")
b_bin=$(realpath "$2")
shape="${3:-independent}"
n="${4:-2000}"
rounds="${ROUNDS:-5}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/bench/lib.sh"
terraform="$root/scripts/terraform"
export CHECKPOINT_DISABLE=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
: > "$work/cli.tfrc"
export TF_CLI_CONFIG_FILE="$work/cli.tfrc"

config=$(ab_workload "$shape" "$n")

phases=(plan apply noop_plan destroy)
declare -A times

# run TOOL BIN [warm-up]: one round of the four phases in TOOL's own
# directory, its times recorded unless it is the warm-up.
run() {
  local tool=$1 bin=$2 dir="$work/$1" p=(-input=false -parallelism=10) warm=${3:-}
  rm -rf "$dir" && mkdir -p "$dir" && printf '%s\n' "$config" > "$dir/main.tf"
  if [ "$tool" = terraform ]; then (cd "$dir" && "$bin" init -input=false > /dev/null); else "$bin" -chdir="$dir" init > /dev/null; fi
  local phase args
  for phase in "${phases[@]}"; do
    case $phase in
      plan) args=(plan "${p[@]}") ;;
      apply) args=(apply -auto-approve "${p[@]}") ;;
      noop_plan) args=(plan -detailed-exitcode "${p[@]}") ;;
      destroy) args=(destroy -auto-approve "${p[@]}") ;;
    esac
    local cap=() start end rc=0
    if [ "$tool" = terraform ]; then cap=(timeout -k 30 "${TF_CAP:-600}"); fi
    start=$EPOCHREALTIME
    (cd "$dir" && "${cap[@]}" "$bin" "${args[@]}" > "$work/out" 2> "$work/err") || rc=$?
    end=$EPOCHREALTIME
    if [ $rc -eq 2 ] && [ "$phase" = noop_plan ]; then
      echo "benchmark failed: $tool's no-op plan found changes:" >&2
      grep -E '^(Plan:|  # )' "$work/out" | head -n 20 >&2 || true
      exit 1
    elif [ $rc -ne 0 ]; then
      echo "benchmark failed: $tool $phase exited $rc:" >&2
      tail -n 20 "$work/err" >&2
      exit 1
    fi
    if [ -z "$warm" ]; then times[$tool.$phase]+="$(echo "$end - $start" | bc) "; fi
  done
}

run A "$a_bin" warm-up
run B "$b_bin" warm-up
for ((r = 0; r < rounds; r++)); do
  if ((r % 2 == 0)); then run A "$a_bin"; run B "$b_bin"; else run B "$b_bin"; run A "$a_bin"; fi
  echo "round $((r + 1))/$rounds done" >&2
done
if [ "${TF:-1}" != 0 ]; then
  wrapper_startup "$terraform"
  run terraform "$terraform" warm-up
  run terraform "$terraform"
fi

stat() { median_spread "$1"; }

echo "## engine_ab $shape N=$n, $rounds rounds (median [min-max] seconds)"
if [ -n "${wrapper_s:-}" ]; then echo "terraform wrapper start-up: ${wrapper_s} s (speedup_net columns subtract it)"; fi
printf '%-10s %-26s %-26s %8s %12s %12s %12s %12s\n' phase A B B/A speedup_A speedup_B speedup_net_A speedup_net_B
for phase in "${phases[@]}"; do
  read -r am amin amax <<< "$(stat "${times[A.$phase]}")"
  read -r bm bmin bmax <<< "$(stat "${times[B.$phase]}")"
  t=""
  if [ -n "${times[terraform.$phase]:-}" ]; then t=$(stat "${times[terraform.$phase]}" | cut -d' ' -f1); fi
  printf '%-10s %-26s %-26s %8s %12s %12s %12s %12s\n' "$phase" "$am [$amin-$amax]" "$bm [$bmin-$bmax]" "$(printf '%.2f' "$(echo "$bm / $am" | bc -l)")" "$(speedup "$t" "$am")" "$(speedup "$t" "$bm")" "$(speedup_net "$t" "$am")" "$(speedup_net "$t" "$bm")"
done
