// `gpuq-agent check`'s table of hooks.
#pragma once

#include <string>
#include <vector>

#include "loader/probe_status.h"

namespace gpuq {

/// One row per hook: PROBE, FUNCTION, MODE, ATTACHED, TIER, DETAIL. Where
/// no hook is attached (no amdkfd, no privileges), hooks that differ only
/// by name and function (same mode, tier and reason) fold into one line,
/// "29 hooks: not attached (mode none, tier none): <reason>", with each
/// hook and its function listed once below it. Where any is attached every
/// hook keeps its row: what each one attached to, or why it did not, is
/// the answer (and the kernel tier reads the rows).
std::string RenderProbeTable(const std::vector<ProbeStatus>& status);

}  // namespace gpuq
