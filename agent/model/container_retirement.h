// The end of idle series (--container-grace): processes that hold no queue
// fold into their container's series, and a container all of whose cgroups
// have been idle for the grace period loses its series and its slot under
// --max-containers. The pipeline runs it under its lock after each
// reconciliation.
#pragma once

#include <cstdint>

#include "model/container_labeling.h"
#include "model/model.h"
#include "resolver/attributor.h"

namespace gpuq {

/// Folds the owners idle for `grace_ns` (Model::RetireIdleOwners) and
/// erases the series of every container whose cgroups all are; host and
/// unresolved series only fold (their totals must stay monotonic).
void RetireContainers(uint64_t grace_ns, Model* model, Attributor* attributor,
                      ContainerLabeling* labeling);

}  // namespace gpuq
