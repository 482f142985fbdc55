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
#                              plan) per tool, after one untimed warm-up plan
#                              per tool; the median wall time is reported
#                              with its min-max (the machines are shared and
#                              noisy). A phase stops repeating once its runs
#                              have taken 30 s, so long Terraform phases run
#                              once. Apply and destroy change the state, so
#                              they run once each.
#
# Every run's exit status is checked (bench/lib.sh): a failure, or a no-op
# plan that finds changes, fails the benchmark. Terraform's wrapper start-up
# (scripts/terraform version) is measured first and reported apart; the
# report gives terrane's speed-up with and without it.
#
# When Terraform's apply is cut off, its no-op plan and destroy run against
# the complete state terrane's apply produced (`terrane state pull`, which
# writes Terraform's v4 state format), so those phases still compare equal
# work.

set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/bench/lib.sh"
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
declare -A secs spread mem capped
case " $TOOLS " in *" terraform "*) wrapper_startup "$terraform" ;; esac

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
  local median lo hi
  read -r median lo hi <<< "$(median_spread "${times[*]}")"
  secs[$tool.$phase]=$median
  spread[$tool.$phase]="$lo-$hi"
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
  start=$EPOCHREALTIME
  (cd "$work/$tool" && /usr/bin/time -v -o "$log.time" "${cap[@]}" "$@" > "$log.out" 2> "$log.err") || rc=$?
  end=$EPOCHREALTIME
  last_secs=$(printf '%.3f' "$(echo "$end - $start" | bc)")
  last_mem=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log.time")
  if [ "$tool" = terraform ] && { [ $rc -eq 124 ] || [ $rc -eq 137 ]; }; then
    capped[$tool.$phase]=1
    echo "  $tool $phase: cut off after ${TF_CAP}s" >&2
  elif [ $rc -eq 2 ] && [ "$phase" = noop_plan ]; then
    echo "benchmark failed: $tool's no-op plan found changes:" >&2
    grep -E '^(Plan:|  # )' "$log.out" | head -n 20 >&2 || true
    exit 1
  elif [ $rc -ne 0 ]; then
    echo "benchmark failed: $tool $phase exited $rc:" >&2
    tail -n 20 "$log.err" >&2
    exit 1
  fi
}

# warm_up TOOL CMD...: one untimed run (file cache, binary pages); a failed
# run fails the benchmark, a cut-off one (Terraform past TF_CAP) is noted.
warm_up() {
  local tool=$1 rc=0
  shift
  (cd "$work/$tool" && "$@" > "$work/$tool.warmup.out" 2> "$work/$tool.warmup.err") || rc=$?
  case $rc in
    0) ;;
    124 | 137) echo "  $tool warm-up cut off after ${TF_CAP}s" >&2 ;;
    *)
      echo "benchmark failed: $tool warm-up ($*) exited $rc:" >&2
      tail -n 20 "$work/$tool.warmup.err" >&2
      exit 1
      ;;
  esac
}

run_terrane() {
  local p=(-parallelism=10)
  "$terrane" -chdir="$work/terrane" init > /dev/null
  warm_up terrane "$terrane" plan -input=false "${p[@]}"
  measure terrane plan "$terrane" plan -input=false "${p[@]}"
  measure terrane apply "$terrane" apply -auto-approve -input=false "${p[@]}"
  (cd "$work/terrane" && "$terrane" state pull > "$work/full.tfstate")
  measure terrane noop_plan "$terrane" plan -input=false -detailed-exitcode "${p[@]}"
  measure terrane destroy "$terrane" destroy -auto-approve -input=false "${p[@]}"
}

run_terraform() {
  local p=(-parallelism=10)
  if [ -z "${NO_TF_INIT:-}" ]; then (cd "$work/terraform" && "$terraform" init -input=false > /dev/null); fi
  warm_up terraform timeout -k 30 "$TF_CAP" "$terraform" plan -input=false "${p[@]}"
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
  if [ -n "${wrapper_s:-}" ]; then
    echo "terraform wrapper start-up: ${wrapper_s} s, $((wrapper_kb / 1024)) MB (scripts/terraform version, median)"
  fi
  printf '%-10s %12s %16s %22s %9s %11s %12s %10s %9s %9s\n' phase terraform_s terraform_spread terrane_s speedup speedup_net terraform_MB terrane_MB mem_ratio mem_net
  for phase in plan apply noop_plan destroy; do
    local a=${secs[terraform.$phase]:-} b=${secs[terrane.$phase]:-}
    local ma=${mem[terraform.$phase]:-} mb=${mem[terrane.$phase]:-}
    local r="-" rn="-" mr="-" mrn="-" bound=""
    if [ -n "${capped[terraform.$phase]:-}" ]; then bound=">="; fi
    if [ -n "$a" ] && [ -n "$b" ]; then r="$bound$(speedup "$a" "$b")" rn="$bound$(speedup_net "$a" "$b")"; fi
    # A cut-off run's peak memory is that of `timeout`, not of Terraform.
    if [ -n "${capped[terraform.$phase]:-}" ]; then ma=""; fi
    if [ -n "$ma" ] && [ -n "$mb" ]; then
      mr="$(printf '%.1f' "$(echo "scale=3; $ma / $mb" | bc)")x"
      if [ -n "${wrapper_kb:-}" ] && [ "$ma" -gt "$wrapper_kb" ]; then
        mrn="$(printf '%.1f' "$(echo "scale=3; ($ma - $wrapper_kb) / $mb" | bc)")x"
      fi
    fi
    printf '%-10s %12s %16s %22s %9s %11s %12s %10s %9s %9s\n' "$phase" "${a:-"-"}${bound:+ (cut)}" "${spread[terraform.$phase]:-"-"}" "${b:-"-"}${spread[terrane.$phase]:+ [${spread[terrane.$phase]}]}" "$r" "$rn" "$([ -n "$ma" ] && echo $((ma / 1024)) || echo -)" "$([ -n "$mb" ] && echo $((mb / 1024)) || echo -)" "$mr" "$mrn"
  done
  echo "(speedup = terraform/terrane wall time (median): terrane is that many times faster; speedup_net"
  echo " subtracts the wrapper's start-up from Terraform's time first. mem_ratio = terraform/terrane"
  echo " peak RSS; mem_net subtracts the wrapper's own peak first. '>=' marks a lower bound from a"
  echo " cut-off Terraform run; [min-max] is the spread of repeated runs)"
}
