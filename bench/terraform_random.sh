#!/usr/bin/env bash
# Times real Terraform applying N random_id resources through terrane's
# random provider plugin (release build), then a no-change plan and destroy.
# Usage: bench/terraform_random.sh [N=1000]. Runs on demand, not in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
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
cd "$work"
t() { local s=$(date +%s.%N); "$@" >/dev/null; echo "$(echo "$(date +%s.%N) - $s" | bc)"; }
echo "apply_${n}_s=$(t "$tf" apply -auto-approve -input=false -parallelism=10)"
echo "noop_plan_${n}_s=$(t "$tf" plan -input=false)"
echo "destroy_${n}_s=$(t "$tf" destroy -auto-approve -input=false)"
rm -rf "$work"
