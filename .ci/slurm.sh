#!/usr/bin/env bash
# CI: start the single-node SLURM cluster that tests/cli/slurm.rs submits a sweep through. Under CI
# (CI set) that test fails when no cluster answers, so a start that fails here fails CI with the
# script's message. Needs root and apt-get (installs slurm-wlm's daemons and munge, about 4 MB).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== local SLURM cluster (scripts/slurm-local.sh start)"
start=$SECONDS
scripts/slurm-local.sh start
echo "SLURM cluster up in $((SECONDS - start)) s"
