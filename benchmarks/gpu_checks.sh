#!/usr/bin/env bash
# The GPU checks of docs/scaling.md in one call, for whoever has a CUDA device: the CUDA tests and
# the refused-input tests, the round profile at n = 500 (host waits per warm round, both searches),
# and the campaign-scaling rows (LB and HE at n = 10,000, P5 at K = 64, TS-RSR at n = 4000).
# Compare what it prints with the H200 tables of docs/scaling.md. Usage, from the repository root:
#
#     bash benchmarks/gpu_checks.sh [OUT]       # OUT: a folder for the JSON results (default: gpu-checks)
#
# Each step is timed; a failing step is reported and the next one still runs; the exit status is
# the number of failed steps (0: every check ran and the tests passed).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-gpu-checks}"
mkdir -p "$OUT"
python -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'no CUDA device: nothing to check')" || exit 1
THREADS="$(python -c 'import os; print(len(os.sched_getaffinity(0)))')"
failed=0

step() {
    local name="$1"
    shift
    echo "== $name: $*"
    local start=$SECONDS
    if "$@"; then
        echo "== $name: done in $((SECONDS - start)) s"
    else
        echo "== $name: FAILED (status $?) after $((SECONDS - start)) s"
        failed=$((failed + 1))
    fi
}

step "CUDA tests" python -m pytest -q -p no:randomly tests/test_cuda.py
step "refused input leaves state unchanged" python -m pytest -q -p no:randomly -k "refused or unchanged" \
    tests/policies/test_base.py tests/policies/round/test_candidate_round.py
step "round profile, n = 500" python benchmarks/round_profile.py --device cuda --threads "$THREADS" \
    --searches scipy torch --json "$OUT/round_profile.json"
step "campaign scaling: LB, HE at n = 10,000; P5" python benchmarks/campaign_scaling.py --device cuda \
    --rules lb-gp-ucb he-gp-ucb --lb-k 16 --n 10000 --iterations 3 --loop-n --p5-n 2000 --p5-k 64 \
    --search torch --json "$OUT/campaign_scaling.json"
step "campaign scaling: TS-RSR at n = 4000" python benchmarks/campaign_scaling.py --device cuda \
    --rules ts-rsr --n 4000 --iterations 2 --loop-n --search torch --json "$OUT/campaign_scaling_ts_rsr.json"
echo "== $failed step(s) failed; results in $OUT"
exit "$failed"
