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
# and then with B (the order flips every round). Reported per phase: the
# median wall time of each binary with its min-max, B/A, and Terraform's
# time over each binary's median. Runs on demand, not in CI.
set -euo pipefail
a_bin=$(realpath "$1")
b_bin=$(realpath "$2")
shape="${3:-independent}"
n="${4:-2000}"
rounds="${ROUNDS:-5}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
terraform="$root/scripts/terraform"
export CHECKPOINT_DISABLE=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
: > "$work/cli.tfrc"
export TF_CLI_CONFIG_FILE="$work/cli.tfrc"

case "$shape" in
  independent)
    config="resource \"terraform_data\" \"r\" {
  count = $n
  input = \"value-\${count.index}\"
}" ;;
  chain)
    config="resource \"terraform_data\" \"r0\" {
  input = \"start\"
}"
    for ((i = 1; i < n; i++)); do
      config+="
resource \"terraform_data\" \"r$i\" {
  input = terraform_data.r$((i - 1)).output
}"
    done ;;
  *) echo "shape: independent or chain" >&2; exit 2 ;;
esac

phases=(plan apply noop_plan destroy)
declare -A times

# run TOOL BIN: one round of the four phases in TOOL's own directory.
run() {
  local tool=$1 bin=$2 dir="$work/$1" p=(-input=false -parallelism=10)
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
    start=$(date +%s.%N)
    (cd "$dir" && "${cap[@]}" "$bin" "${args[@]}" > "$work/out" 2> "$work/err") || rc=$?
    end=$(date +%s.%N)
    if [ $rc -ne 0 ] && [ $rc -ne 2 ]; then
      echo "$tool $phase failed (exit $rc):" >&2
      tail -n 20 "$work/err" >&2
      exit 1
    fi
    times[$tool.$phase]+="$(echo "$end - $start" | bc) "
  done
}

for ((r = 0; r < rounds; r++)); do
  if ((r % 2 == 0)); then run A "$a_bin"; run B "$b_bin"; else run B "$b_bin"; run A "$a_bin"; fi
  echo "round $((r + 1))/$rounds done" >&2
done
if [ "${TF:-1}" != 0 ]; then run terraform "$terraform"; fi

# stat "t1 t2 ...": median min max
stat() { tr ' ' '\n' <<< "$1" | sed '/^$/d' | sort -n | awk '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.3f %.3f %.3f", m, a[1], a[NR]}'; }

echo "## engine_ab $shape N=$n, $rounds rounds (median [min-max] seconds)"
printf '%-10s %-26s %-26s %8s %12s %12s\n' phase A B B/A tf/A tf/B
for phase in "${phases[@]}"; do
  read -r am amin amax <<< "$(stat "${times[A.$phase]}")"
  read -r bm bmin bmax <<< "$(stat "${times[B.$phase]}")"
  tfa="-" tfb="-"
  if [ -n "${times[terraform.$phase]:-}" ]; then
    t=$(stat "${times[terraform.$phase]}" | cut -d' ' -f1)
    tfa=$(printf '%.1fx' "$(echo "$t / $am" | bc -l)") tfb=$(printf '%.1fx' "$(echo "$t / $bm" | bc -l)")
  fi
  printf '%-10s %-26s %-26s %8s %12s %12s\n' "$phase" "$am [$amin-$amax]" "$bm [$bmin-$bmax]" "$(printf '%.2f' "$(echo "$bm / $am" | bc -l)")" "$tfa" "$tfb"
done
