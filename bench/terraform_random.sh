#!/usr/bin/env bash
# Times real Terraform applying N random_id resources through terrane's
# random provider plugin (release build), then a no-change plan and destroy.
# One untimed plan warms up first; every run's exit status is checked (the
# no-change plan must find nothing: -detailed-exitcode 0). The wrapper's
# start-up (scripts/terraform version) is printed apart, and each time also
# without it (_net_s).
# Usage: bench/terraform_random.sh [N=1000]. Runs on demand, not in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
n="${1:-1000}"
cargo build --release -q -p terrane-provider-random
work=$(mktemp -d)
mkdir -p "$work/plugins"
cp target/release/terraform-provider-random "$work/plugins/"
cat > "$work/dev.tfrc" <<RC
provider_installation {
  dev_overrides {
    "registry.terraform.io/terrane/random" = "$work/plugins"
  }
  direct {}
}
RC
cat > "$work/main.tf" <<TF
terraform {
  required_providers {
    random = { source = "terrane/random" }
  }
}
resource "random_id" "r" {
  count       = $n
  byte_length = 8
}
TF
export TF_CLI_CONFIG_FILE="$work/dev.tfrc"
tf="$(pwd)/scripts/terraform"
wrapper_startup "$tf"
echo "wrapper_startup_s=$wrapper_s"
cd "$work"
net() { echo "$1 - $wrapper_s" | bc; }
timed 0 "$work/warm" "$tf" plan -input=false -parallelism=10
timed 0 "$work/apply" "$tf" apply -auto-approve -input=false -parallelism=10
echo "apply_${n}_s=$last_secs apply_${n}_net_s=$(net "$last_secs")"
timed 0 "$work/noop" "$tf" plan -input=false -detailed-exitcode
echo "noop_plan_${n}_s=$last_secs noop_plan_${n}_net_s=$(net "$last_secs")"
timed 0 "$work/destroy" "$tf" destroy -auto-approve -input=false
echo "destroy_${n}_s=$last_secs destroy_${n}_net_s=$(net "$last_secs")"
cd /
rm -rf "$work"
