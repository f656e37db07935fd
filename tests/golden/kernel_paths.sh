#!/usr/bin/env bash
# The golden traces under other CPU kernel paths: torch's ATen dispatch (ATEN_CPU_CAPABILITY),
# MKL's code paths (MKL_CBWR, MKL_ENABLE_INSTRUCTIONS) and 1 or 2 intra-op threads per replay
# (BUH_GOLDEN_THREADS). One pytest run per setting; prints its failures and summary line and
# keeps its full output in $LOGDIR (default: a new directory under /tmp).
#   bash tests/golden/kernel_paths.sh [EXTRA PYTEST ARGS]      (from the repository root)
# SETTINGS and THREADS may be overridden from the environment, e.g.
#   SETTINGS="ATEN_CPU_CAPABILITY=default" THREADS="1" bash tests/golden/kernel_paths.sh -k bird2
set -uo pipefail
cd "$(dirname "$0")/../.."
SETTINGS=${SETTINGS:-"ATEN_CPU_CAPABILITY=default ATEN_CPU_CAPABILITY=avx2 MKL_CBWR=COMPATIBLE MKL_ENABLE_INSTRUCTIONS=AVX2 MKL_ENABLE_INSTRUCTIONS=SSE4_2"}
THREADS=${THREADS:-"1 2"}
status=0
LOGDIR=${LOGDIR:-$(mktemp -d /tmp/golden-kernel-paths.XXXXXX)}
mkdir -p "$LOGDIR"
echo "logs: $LOGDIR"
for setting in $SETTINGS; do
  for threads in $THREADS; do
    start=$(date +%s)
    log="$LOGDIR/${setting//=/-}-threads-$threads.log"
    env "$setting" BUH_GOLDEN_THREADS="$threads" python -m pytest -q -p no:cacheprovider tests/golden "$@" >"$log" 2>&1 || status=1
    grep -E "^(FAILED|ERROR) " "$log"
    echo "$setting BUH_GOLDEN_THREADS=$threads: $(tail -n 1 "$log") ($(( $(date +%s) - start )) s)"
  done
done
exit $status
