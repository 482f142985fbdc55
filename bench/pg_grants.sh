#!/usr/bin/env bash
# Times planning N postgresql_grant resources with refresh (every grant
# read back from the server's ACLs), side by side: real Terraform and
# terrane (release builds), both running terrane's postgresql provider
# plugin through dev_overrides, and terrane once more with the provider
# built in (in-process, no dev override). Against the loopback test
# server of scripts/pg. Each grant is SELECT on its own table, so every
# refresh reads a different ACL. Apply and destroy are timed too; each
# tool applies, plans and destroys in turn on the same tables.
# Every tool first runs one untimed round (which also warms the server),
# then ROUNDS=3 timed rounds in turn (the order rotates each round); the
# median and min-max of each phase are reported, and terrane's speed-up
# over Terraform (Terraform's median over terrane's), also without the
# Terraform wrapper's start-up (bench/lib.sh). Every run's exit status is
# checked; a refreshed plan after apply that finds changes fails the
# benchmark.
# Usage: bench/pg_grants.sh [N=500]. Runs on demand, not in CI. Uses the
# server TERRANE_TEST_PG_URL names, else starts (and stops) its own.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
n="${1:-500}"
rounds="${ROUNDS:-3}"
own_server=""
if [ -z "${TERRANE_TEST_PG_URL:-}" ]; then
  eval "$(./scripts/pg start)"
  own_server=1
fi
url="$TERRANE_TEST_PG_URL"
cargo build --release -q -p terrane-provider-postgresql -p terrane-cli --bins
work=$(mktemp -d)
sfx="b$$"
db="bench_$sfx"
role="bench_reader_$sfx"
cleanup() {
  psql "$url" -qAt -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" -c "DROP ROLE IF EXISTS \"$role\"" >/dev/null 2>&1 || true
  rm -rf "$work"
  if [ -n "$own_server" ]; then ./scripts/pg stop; fi
}
trap cleanup EXIT
mkdir -p "$work/plugins"
cp target/release/terraform-provider-postgresql "$work/plugins/"
cat > "$work/dev.tfrc" <<RC
provider_installation {
  dev_overrides {
    "registry.terraform.io/terrane/postgresql" = "$work/plugins"
  }
  direct {}
}
RC

# The tables exist before Terraform runs; Terraform manages the grants.
psql "$url" -qAt -c "CREATE DATABASE \"$db\"" -c "CREATE ROLE \"$role\""
psql "${url%/*}/$db" -qAt -c "DO \$\$ BEGIN FOR i IN 0..$((n - 1)) LOOP EXECUTE format('CREATE TABLE public.t%s (id int)', i); END LOOP; END \$\$"

# postgres://user:password@host:port/database
rest="${url#*://}"; auth="${rest%@*}"; hostpart="${rest#*@}"
user="${auth%%:*}"; password="${auth#*:}"
hostport="${hostpart%%/*}"; host="${hostport%:*}"; port="${hostport#*:}"
cat > "$work/main.tf" <<TF
terraform {
  required_providers {
    postgresql = { source = "terrane/postgresql" }
  }
}
provider "postgresql" {
  host     = "$host"
  port     = $port
  username = "$user"
  password = "$password"
  database = "$db"
  sslmode  = "disable"
}
resource "postgresql_grant" "g" {
  count       = $n
  role        = "$role"
  database    = "$db"
  schema      = "public"
  object_type = "table"
  objects     = ["t\${count.index}"]
  privileges  = ["SELECT"]
}
TF
tf="$(pwd)/scripts/terraform"
terrane="$(pwd)/target/release/terrane"
wrapper_startup "$tf"
# run NAME PROGRAM RC [warm-up]: apply, refreshed plan (-detailed-exitcode:
# it must find nothing to change), destroy, in a working directory of its
# own; the times are recorded unless it is the warm-up.
declare -A times
run() {
  local name="$1" prog="$2" rc="$3" warm="${4:-}" dir="$work/$1"
  mkdir -p "$dir" && cp "$work/main.tf" "$dir/"
  local phase
  for phase in apply plan_refresh destroy; do
    local args
    case $phase in
      apply) args=(apply -auto-approve -input=false) ;;
      plan_refresh) args=(plan -input=false -refresh=true -detailed-exitcode) ;;
      destroy) args=(destroy -auto-approve -input=false) ;;
    esac
    local envs=(env -u TF_CLI_CONFIG_FILE)
    if [ -n "$rc" ]; then envs=(env TF_CLI_CONFIG_FILE="$rc"); fi
    cd "$dir"
    timed 0 "$dir/$phase" "${envs[@]}" "$prog" "${args[@]}"
    cd - > /dev/null
    if [ -z "$warm" ]; then times[$name.$phase]+="$last_secs "; fi
  done
}
tools=(terraform terrane terrane_inprocess)
progs=([0]="$tf" [1]="$terrane" [2]="$terrane")
rcs=([0]="$work/dev.tfrc" [1]="$work/dev.tfrc" [2]="")
for i in 0 1 2; do run "${tools[$i]}" "${progs[$i]}" "${rcs[$i]}" warm-up; done
for ((r = 0; r < rounds; r++)); do
  for j in 0 1 2; do
    i=$(((j + r) % 3))
    run "${tools[$i]}" "${progs[$i]}" "${rcs[$i]}"
  done
  echo "round $((r + 1))/$rounds done" >&2
done
echo "## pg_grants N=$n, $rounds rounds (median [min-max] seconds)"
echo "terraform wrapper start-up: ${wrapper_s} s (speedup_net subtracts it)"
printf '%-13s %-22s %-22s %-22s %9s %11s %9s %11s\n' phase terraform terrane terrane_inproc speedup speedup_net sp_inproc sp_net_inproc
for phase in apply plan_refresh destroy; do
  read -r a alo ahi <<< "$(median_spread "${times[terraform.$phase]}")"
  read -r b blo bhi <<< "$(median_spread "${times[terrane.$phase]}")"
  read -r c clo chi <<< "$(median_spread "${times[terrane_inprocess.$phase]}")"
  printf '%-13s %-22s %-22s %-22s %9s %11s %9s %11s\n' "$phase" "$a [$alo-$ahi]" "$b [$blo-$bhi]" "$c [$clo-$chi]" \
    "$(speedup "$a" "$b")" "$(speedup_net "$a" "$b")" "$(speedup "$a" "$c")" "$(speedup_net "$a" "$c")"
done
echo "(speedup = Terraform's median time over terrane's: terrane is that many times faster)"
