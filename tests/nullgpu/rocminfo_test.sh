#!/usr/bin/env bash
# Debian's rocminfo (ROCr 5.2.3 underneath) on the null GPU: the agents of
# GPUQ_NULLGPU_GPUS are listed with the ISA ROCr derives from the node
# properties, and the gfx11 node (unknown to ROCr 5.2.3) is skipped by ROCr.
# Usage: rocminfo_test.sh SRC NULLGPU_LIB
set -u
SRC=$1 LIB=$2
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/lib/procs.sh"
procs_init
. "$SRC/tests/nullgpu/nullgpu_env.sh"
nullgpu_require "$LIB"
if ! command -v rocminfo > /dev/null; then
  skip "rocminfo is missing (Debian package rocminfo)"
  summary
  exit 77
fi
if [ "$(id -u)" != 0 ] || ! command -v unshare > /dev/null; then
  skip "rocminfo needs /dev/kfd to open: a private mount namespace needs root and unshare (util-linux)"
  summary
  exit 77
fi

for spec in gfx90a 8xgfx90a 2xgfx90a,gfx1100,gfx1250; do
  run_group "${NULLGPU[@]}" GPUQ_NULLGPU_GPUS=$spec "$SRC/tests/nullgpu/with_kfd.sh" rocminfo > "$TMP/ri.out" 2>&1
  gpus=$(grep -c 'amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-' "$TMP/ri.out")
  cpus=$(grep -cE '^ +Device Type: +CPU' "$TMP/ri.out")
  want=${spec%%xgfx90a*}
  [ "$want" = gfx90a ] && want=1
  [ "$spec" = 2xgfx90a,gfx1100,gfx1250 ] && want=2
  if [ "$RUN_RC" = 0 ] && [ "$gpus" = "$want" ] && [ "$cpus" = 1 ]; then
    pass "rocminfo with GPUQ_NULLGPU_GPUS=$spec: 1 CPU agent and $want gfx90a agents (sramecc+, xnack-)"
  else
    fail "rocminfo with GPUQ_NULLGPU_GPUS=$spec: exit $RUN_RC, $cpus CPU and $gpus gfx90a agents, want 1 and $want" \
      "$(head -40 "$TMP/ri.out")"
  fi
done
skipped=$(grep -c 'The GPU node has an unrecognized id' "$TMP/ri.out")
if [ "$skipped" = 2 ]; then
  pass "ROCr 5.2.3 skips the gfx1100 and gfx1250 nodes (no gfx11 or gfx12 ISA in its registry) and says so, once each"
else
  fail "ROCr said $skipped times that it skipped a node, want 2 (gfx1100, gfx1250)" "$(head -5 "$TMP/ri.out")"
fi
if [ ! -e /dev/kfd ]; then
  pass "the host's /dev is untouched (no /dev/kfd outside rocminfo's namespace)"
fi
summary
