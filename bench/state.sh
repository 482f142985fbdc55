#!/usr/bin/env bash
# Persistence benchmark (issue: durable state): 1,000, 10,000 and 100,000
# instance changes persisted one by one, each its own durable transaction,
# into a fresh SQLite store and into PostgreSQL (scripts/pg). Reports the
# mean per-change cost for each size; the per-change cost must stay flat
# (compare first 10% with the last 90% within a run, and sizes with each
# other). Runs on demand, not in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p terrane-fixtures --bin terrane-state-tool
tool=target/release/terrane-state-tool
sizes="${SIZES:-1000 10000 100000}"
echo "== SQLite (.terrane/state.db style, WAL, synchronous=FULL)"
tmp=$(mktemp -d)
$tool bench "$tmp/bench" $sizes
rm -rf "$tmp"
echo "== PostgreSQL (loopback, synchronous_commit=on)"
# The server TERRANE_TEST_PG_URL names, else one of its own (stopped after).
if [ -z "${TERRANE_TEST_PG_URL:-}" ]; then
  eval "$(./scripts/pg start)"
  trap './scripts/pg stop' EXIT
fi
TERRANE_PG_SCHEMA=bench_$$ $tool bench "$TERRANE_TEST_PG_URL" $sizes
