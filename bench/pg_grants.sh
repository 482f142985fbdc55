#!/usr/bin/env bash
# Times planning N postgresql_grant resources with refresh (every grant
# read back from the server's ACLs), side by side: real Terraform and
# terrane (release builds), both running terrane's postgresql provider
# plugin through dev_overrides, and terrane once more with the provider
# built in (in-process, no dev override). Against the loopback test
# server of scripts/pg. Each grant is SELECT on its own table, so every
# refresh reads a different ACL. Apply and destroy are timed too; each
# tool applies, plans and destroys in turn on the same tables.
# Usage: bench/pg_grants.sh [N=500]. Runs on demand, not in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-500}"
eval "$(./scripts/pg start)"
url="$TERRANE_TEST_PG_URL"
cargo build --release -q -p terrane-provider-postgresql -p terrane-cli --bins
work=$(mktemp -d)
sfx="b$$"
db="bench_$sfx"
role="bench_reader_$sfx"
cleanup() {
  psql "$url" -qAt -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" -c "DROP ROLE IF EXISTS \"$role\"" >/dev/null 2>&1 || true
  rm -rf "$work"
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
t() { local s=$(date +%s.%N); "$@" >/dev/null; echo "$(echo "$(date +%s.%N) - $s" | bc)"; }
# run NAME PROGRAM RC: apply, refreshed plan (-detailed-exitcode: 0 means
# nothing to change), destroy, in a working directory of its own.
declare -A plan_s
run() {
  local name="$1" prog="$2" rc="$3" dir="$work/$1"
  mkdir -p "$dir" && cp "$work/main.tf" "$dir/"
  (
    cd "$dir"
    if [ -n "$rc" ]; then export TF_CLI_CONFIG_FILE="$rc"; else unset TF_CLI_CONFIG_FILE; fi
    echo "${name}_apply_${n}_grants_s=$(t "$prog" apply -auto-approve -input=false)"
    s=$(date +%s.%N)
    "$prog" plan -input=false -refresh=true -detailed-exitcode >/dev/null
    echo "${name}_plan_refresh_${n}_grants_s=$(echo "$(date +%s.%N) - $s" | bc)"
    echo "${name}_destroy_${n}_grants_s=$(t "$prog" destroy -auto-approve -input=false)"
  ) | tee "$dir/times"
  plan_s[$name]=$(sed -n "s/^${name}_plan_refresh_${n}_grants_s=//p" "$dir/times")
}
run terraform "$tf" "$work/dev.tfrc"
run terrane "$terrane" "$work/dev.tfrc"
run terrane_inprocess "$terrane" ""
echo "plan_ratio_terrane_over_terraform=$(echo "scale=3; ${plan_s[terrane]} / ${plan_s[terraform]}" | bc)"
echo "plan_ratio_terrane_inprocess_over_terraform=$(echo "scale=3; ${plan_s[terrane_inprocess]} / ${plan_s[terraform]}" | bc)"
