#!/usr/bin/env bash
# terrane against Terraform on N independent terraform_data resources
# (count = N): plan from an empty state, apply, no-op plan, destroy.
# Usage: bench/engine_independent.sh [N=5000]. Runs on demand, not in CI.
# See bench/engine_common.sh for TOOLS, TF_CAP and what is measured.
n="${1:-5000}"
source "$(dirname "$0")/engine_common.sh"
write_config <<TF
resource "terraform_data" "r" {
  count = $n
  input = "value-\${count.index}"
}
TF
run_all "engine_independent N=$n"
