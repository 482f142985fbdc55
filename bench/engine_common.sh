# Shared by bench/engine_*.sh (sourced, not run). Each benchmark writes the
# same main.tf into two directories, then times four phases with each tool
# (plan from an empty state, apply, no-op plan, destroy), recording wall
# time and peak memory (/usr/bin/time -v "Maximum resident set size" of the
# largest process: the tool itself, not its plugins), and prints the ratios.
#
# Environment:
#   TOOLS="terrane terraform"  which tools to run (both by default)
#   TF_CAP=600                 seconds after which a Terraform phase is cut
#                              off; its ratio is then a lower bound
#   KEEP=1                     keep the work directory
#   REPEAT=5                   runs of each read-only phase (plan, no-op
#                              plan) per tool; the median wall time is
#                              reported (the machines are shared and noisy).
#                              A phase stops repeating once its runs have
#                              taken 30 s, so long Terraform phases run once.
#
# When Terraform's apply is cut off, its no-op plan and destroy run against
# the complete state terrane's apply produced (`terrane state pull`, which
# writes Terraform's v4 state format), so those phases still compare equal
# work.

set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="${TOOLS:-terrane terraform}"
TF_CAP="${TF_CAP:-600}"
REPEAT="${REPEAT:-5}"
export CHECKPOINT_DISABLE=1
if [ ! -x /usr/bin/time ]; then
  echo "needs GNU time: apt-get install -y time" >&2
  exit 1
fi
(cd "$root" && cargo build --release -q -p terrane-cli)
terrane="$root/target/release/terrane"
terraform="$root/scripts/terraform"
work=$(mktemp -d)
if [ "${KEEP:-}" != "1" ]; then trap 'rm -rf "$work"' EXIT; fi
mkdir -p "$work/terrane" "$work/terraform"
# Terraform needs a CLI config file; the random benchmark adds dev_overrides.
: > "$work/cli.tfrc"
export TF_CLI_CONFIG_FILE="$work/cli.tfrc"
declare -A secs mem capped

# Writes main.tf (from stdin) into both tools' directories.
write_config() {
  cat > "$work/main.tf"
  cp "$work/main.tf" "$work/terrane/main.tf"
  cp "$work/main.tf" "$work/terraform/main.tf"
}

# measure TOOL PHASE CMD...: runs CMD in the tool's directory (plan and
# noop_plan up to REPEAT times: median wall time, largest peak memory).
measure() {
  local tool=$1 phase=$2
  shift 2
  local runs=1
  if [ "$phase" = plan ] || [ "$phase" = noop_plan ]; then runs=$REPEAT; fi
  local times=() peak=0 spent=0 i
  for ((i = 0; i < runs; i++)); do
    measure_once "$tool" "$phase" "$@" || return 1
    times+=("$last_secs")
    if [ "$last_mem" -gt "$peak" ]; then peak=$last_mem; fi
    spent=$(echo "$spent + $last_secs" | bc)
    if [ -n "${capped[$tool.$phase]:-}" ] || [ "$(echo "$spent > 30" | bc)" = 1 ]; then break; fi
  done
  secs[$tool.$phase]=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.3f", (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}')
  mem[$tool.$phase]=$peak
  printf '  %-9s %-9s %9.3f s %8d KB  (%d run%s)%s\n' "$tool" "$phase" "${secs[$tool.$phase]}" "$peak" "${#times[@]}" "$([ ${#times[@]} -gt 1 ] && echo s)" "${capped[$tool.$phase]:+  (cut off)}" >&2
}

# One run: sets last_secs and last_mem.
measure_once() {
  local tool=$1 phase=$2
  shift 2
  local log="$work/$tool.$phase"
  local cap=()
  if [ "$tool" = terraform ]; then cap=(timeout -k 30 "$TF_CAP"); fi
  local start end rc=0
  start=$(date +%s.%N)
  (cd "$work/$tool" && /usr/bin/time -v -o "$log.time" "${cap[@]}" "$@" > "$log.out" 2> "$log.err") || rc=$?
  end=$(date +%s.%N)
  last_secs=$(printf '%.3f' "$(echo "$end - $start" | bc)")
  last_mem=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log.time")
  if [ "$tool" = terraform ] && { [ $rc -eq 124 ] || [ $rc -eq 137 ]; }; then
    capped[$tool.$phase]=1
    echo "  $tool $phase: cut off after ${TF_CAP}s" >&2
  elif [ $rc -ne 0 ] && ! { [ "$phase" != apply ] && [ "$phase" != destroy ] && [ $rc -eq 2 ]; }; then
    echo "  $tool $phase failed (exit $rc):" >&2
    tail -n 20 "$log.err" >&2
    return 1
  fi
}

run_terrane() {
  local p=(-parallelism=10)
  "$terrane" -chdir="$work/terrane" init > /dev/null
  measure terrane plan "$terrane" plan -input=false "${p[@]}"
  measure terrane apply "$terrane" apply -auto-approve -input=false "${p[@]}"
  (cd "$work/terrane" && "$terrane" state pull > "$work/full.tfstate")
  measure terrane noop_plan "$terrane" plan -input=false -detailed-exitcode "${p[@]}"
  measure terrane destroy "$terrane" destroy -auto-approve -input=false "${p[@]}"
}

run_terraform() {
  local p=(-parallelism=10)
  if [ -z "${NO_TF_INIT:-}" ]; then (cd "$work/terraform" && "$terraform" init -input=false > /dev/null); fi
  measure terraform plan "$terraform" plan -input=false "${p[@]}"
  measure terraform apply "$terraform" apply -auto-approve -input=false "${p[@]}"
  if [ -n "${capped[terraform.apply]:-}" ]; then
    if [ -f "$work/full.tfstate" ]; then
      echo "  terraform: apply was cut off; no-op plan and destroy start from terrane's full state" >&2
      rm -f "$work/terraform/.terraform.tfstate.lock.info" "$work/terraform/terraform.tfstate.backup"
      cp "$work/full.tfstate" "$work/terraform/terraform.tfstate"
    else
      echo "  terraform: apply was cut off and there is no full state to continue from" >&2
    fi
  fi
  measure terraform noop_plan "$terraform" plan -input=false -detailed-exitcode "${p[@]}"
  measure terraform destroy "$terraform" destroy -auto-approve -input=false "${p[@]}"
}

run_all() {
  local name=$1
  echo "== $name" >&2
  for tool in $TOOLS; do
    "run_$tool"
  done
  report "$name"
}

report() {
  local name=$1
  echo
  echo "## $name"
  printf '%-10s %12s %12s %12s %12s %10s %10s\n' phase terraform_s terrane_s time_ratio terraform_MB terrane_MB mem_ratio
  for phase in plan apply noop_plan destroy; do
    local a=${secs[terraform.$phase]:-} b=${secs[terrane.$phase]:-}
    local ma=${mem[terraform.$phase]:-} mb=${mem[terrane.$phase]:-}
    local r="-" mr="-" bound=""
    if [ -n "${capped[terraform.$phase]:-}" ]; then bound=">="; fi
    if [ -n "$a" ] && [ -n "$b" ]; then r="$bound$(printf '%.1f' "$(echo "scale=3; $a / $b" | bc)")x"; fi
    # A cut-off run's peak memory is that of `timeout`, not of Terraform.
    if [ -n "${capped[terraform.$phase]:-}" ]; then ma=""; fi
    if [ -n "$ma" ] && [ -n "$mb" ]; then mr="$(printf '%.1f' "$(echo "scale=3; $ma / $mb" | bc)")x"; fi
    printf '%-10s %12s %12s %12s %12s %10s %10s\n' "$phase" "${a:-"-"}${bound:+ (cut)}" "${b:-"-"}" "$r" "$([ -n "$ma" ] && echo $((ma / 1024)) || echo -)" "$([ -n "$mb" ] && echo $((mb / 1024)) || echo -)" "$mr"
  done
  echo "(time_ratio = terraform/terrane wall time: terrane is that many times faster;"
  echo " mem_ratio = terraform/terrane peak RSS; '>=' marks a lower bound from a cut-off Terraform run)"
}
