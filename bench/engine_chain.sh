#!/usr/bin/env bash
# terrane against Terraform on a dependency chain of N terraform_data
# resources, each one's input being the previous one's id (known only after
# the previous one is created, so applies run one at a time): plan from an
# empty state, apply, no-op plan, destroy.
# Usage: bench/engine_chain.sh [N=5000]. Runs on demand, not in CI.
# See bench/engine_common.sh for TOOLS, TF_CAP and what is measured.
n="${1:-5000}"
source "$(dirname "$0")/engine_common.sh"
{
  echo 'resource "terraform_data" "r0" {'
  echo '  input = "start"'
  echo '}'
  for ((i = 1; i < n; i++)); do
    echo "resource \"terraform_data\" \"r$i\" {"
    echo "  input = terraform_data.r$((i - 1)).id"
    echo '}'
  done
} | write_config
run_all "engine_chain N=$n"
