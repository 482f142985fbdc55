#!/usr/bin/env bash
# Times an apply of N terraform_data resources with the s3 backend, terrane
# against real Terraform, on one moto server (S3, `use_lockfile` locks) on
# loopback, REPEAT times each, alternating, every run on a fresh state key.
# Every run's exit status is checked, and after each apply a no-change plan
# (-detailed-exitcode 0) by the other tool confirms both wrote the same
# thing. Prints each time, the medians with [min-max], and terrane's
# speed-up (Terraform's time over terrane's) with and without the Terraform
# wrapper's start-up (see bench/lib.sh).
# Usage: bench/s3_apply.sh [N=2000]; REPEAT (default 3); TERRANE_BIN to time
# a given terrane binary (default: a release build). Runs on demand, not in
# CI. Needs scripts/setup-cloud (moto) and scripts/terraform.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
n="${1:-2000}"
repeat="${REPEAT:-3}"
root=$(pwd)
if [ -z "${TERRANE_BIN:-}" ]; then
  cargo build --release -q -p terrane-cli
  TERRANE_BIN="$root/target/release/terrane"
fi
terrane=$(realpath "$TERRANE_BIN")
tf="$root/scripts/terraform"
scripts/setup-cloud
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
.venv-cloud/bin/moto_server -H 127.0.0.1 -p "$port" > "$work/moto.log" 2>&1 &
moto=$!
cleanup() { kill "$moto" 2> /dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
url="http://127.0.0.1:$port"
for _ in $(seq 100); do
  if .venv-cloud/bin/python -c "import socket; socket.create_connection(('127.0.0.1', $port))" 2> /dev/null; then break; fi
  sleep 0.1
done
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test
.venv-cloud/bin/python -c "import boto3; boto3.client('s3',endpoint_url='$url',region_name='us-east-1').create_bucket(Bucket='bench')"
: > "$work/cli.tfrc"
export TF_CLI_CONFIG_FILE="$work/cli.tfrc" CHECKPOINT_DISABLE=1

# config DIR KEY: the configuration, its state at KEY.
config() {
  mkdir -p "$1"
  cat > "$1/main.tf" <<TF
terraform {
  backend "s3" {
    bucket                      = "bench"
    key                         = "$2"
    region                      = "us-east-1"
    endpoints                   = { s3 = "$url" }
    use_path_style              = true
    use_lockfile                = true
    skip_credentials_validation = true
    skip_requesting_account_id  = true
    skip_metadata_api_check     = true
    skip_region_validation      = true
  }
}
resource "terraform_data" "r" {
  count = $n
  input = "v-\${count.index}"
}
TF
}

wrapper_startup "$tf"
tr_times="" tf_times=""
for ((i = 0; i < repeat; i++)); do
  d="$work/terrane-$i"
  config "$d" "terrane-$i/terraform.tfstate"
  cd "$d"
  timed 0 "$d/init" "$terrane" init -no-color
  timed 0 "$d/apply" "$terrane" apply -auto-approve -no-color
  tr_times+="$last_secs "
  echo "terrane apply $n (run $((i + 1))): $last_secs s"
  timed 0 "$d/tfplan" "$tf" plan -input=false -no-color -detailed-exitcode
  cd "$root"

  d="$work/terraform-$i"
  config "$d" "terraform-$i/terraform.tfstate"
  cd "$d"
  timed 0 "$d/init" "$tf" init -input=false -no-color
  timed 0 "$d/apply" "$tf" apply -auto-approve -input=false -no-color
  tf_times+="$last_secs "
  echo "terraform apply $n (run $((i + 1))): $last_secs s"
  timed 0 "$d/trplan" "$terrane" plan -no-color -detailed-exitcode
  cd "$root"
done
read -r tr_med tr_min tr_max <<< "$(median_spread "$tr_times")"
read -r tf_med tf_min tf_max <<< "$(median_spread "$tf_times")"
echo "s3 apply of $n resources, median of $repeat:"
echo "  terrane:   ${tr_med} s [${tr_min}-${tr_max}] ($terrane)"
echo "  terraform: ${tf_med} s [${tf_min}-${tf_max}]"
echo "  terrane's speed-up: $(speedup "$tf_med" "$tr_med") (without the wrapper's start-up: $(speedup_net "$tf_med" "$tr_med")); range $(speedup "$tf_min" "$tr_max")-$(speedup "$tf_max" "$tr_min")"
