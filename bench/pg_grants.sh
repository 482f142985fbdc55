#!/usr/bin/env bash
# Times real Terraform planning N postgresql_grant resources with refresh
# (every grant read back from the server's ACLs) through terrane's
# postgresql provider plugin (release build), against the loopback test
# server of scripts/pg. Each grant is SELECT on its own table, so every
# refresh reads a different ACL.
# Usage: bench/pg_grants.sh [N=500]. Runs on demand, not in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-500}"
eval "$(./scripts/pg start)"
url="$TERRANE_TEST_PG_URL"
cargo build --release -q -p terrane-provider-postgresql --bins
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
export TF_CLI_CONFIG_FILE="$work/dev.tfrc"
tf="$(pwd)/scripts/terraform"
cd "$work"
t() { local s=$(date +%s.%N); "$@" >/dev/null; echo "$(echo "$(date +%s.%N) - $s" | bc)"; }
echo "apply_${n}_grants_s=$(t "$tf" apply -auto-approve -input=false)"
# -detailed-exitcode: 0 means the refreshed plan found nothing to change.
s=$(date +%s.%N)
"$tf" plan -input=false -refresh=true -detailed-exitcode >/dev/null
echo "plan_refresh_${n}_grants_s=$(echo "$(date +%s.%N) - $s" | bc)"
echo "destroy_${n}_grants_s=$(t "$tf" destroy -auto-approve -input=false)"
