#!/usr/bin/env bash
# terrane against Terraform on N random_id resources served by the random
# provider plugin binary (target/release/terraform-provider-random), which
# both tools launch through dev_overrides in the same CLI config file:
# plan from an empty state, apply, no-op plan (with refresh: N ReadResource
# calls), destroy.
# Usage: bench/engine_random_plugin.sh [N=1000]. Runs on demand, not in CI.
# PROTOCOL=5 (or 6) has the plugin offer only that protocol version
# (TERRANE_PLUGIN_PROTOCOL, which both tools pass on to it), so both tools
# speak it; by default it offers both and each tool picks 6.
# See bench/engine_common.sh for TOOLS, TF_CAP and what is measured.
n="${1:-1000}"
if [ -n "${PROTOCOL:-}" ]; then export TERRANE_PLUGIN_PROTOCOL="$PROTOCOL"; fi
source "$(dirname "$0")/engine_common.sh"
(cd "$root" && cargo build --release -q -p terrane-provider-random)
mkdir -p "$work/plugins"
cp "$root/target/release/terraform-provider-random" "$work/plugins/"
cat > "$work/cli.tfrc" <<RC
provider_installation {
  dev_overrides {
    "registry.terraform.io/terrane/random" = "$work/plugins"
  }
  direct {}
}
RC
# With dev_overrides Terraform needs (and wants) no init.
NO_TF_INIT=1
write_config <<TF
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
run_all "engine_random_plugin N=$n${PROTOCOL:+ protocol $PROTOCOL}"
