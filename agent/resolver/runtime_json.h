// What the runtime clients share when they read a runtime's JSON: the label
// and annotation names each runtime writes, and the few checks every client
// applies to ids, labels and error text. Internal to agent/resolver.
#pragma once

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "resolver/container_metadata.h"

namespace gpuq::runtime_json {

using Labels = std::map<std::string, std::string>;

// ---------------------------------------------------------------------------
// Label and annotation names, each as the runtime that writes it spells it.

// Kubelet's container labels (kubernetes pkg/kubelet/types/labels.go:
// KubernetesPodNameLabel, KubernetesPodNamespaceLabel,
// KubernetesContainerNameLabel). Kubelet sends them as CRI
// ContainerConfig.Labels; cri-dockerd (and dockershim before it) stores them
// as Docker labels, and CRI-O copies every CRI label into the OCI spec
// annotations (cri-o internal/factory/container/container.go,
// SpecAddAnnotations: `for k, v := range labels { c.spec.AddAnnotation(k, v)
// }`).
inline constexpr char kKubeletPodName[] = "io.kubernetes.pod.name";
inline constexpr char kKubeletPodNamespace[] = "io.kubernetes.pod.namespace";
inline constexpr char kKubeletContainerName[] = "io.kubernetes.container.name";

// containerd's CRI plugin (containerd internal/cri/annotations/annotations.go,
// formerly pkg/cri/annotations: SandboxName, SandboxNamespace,
// ContainerName, set by DefaultCRIAnnotations). The container name is only on
// containers, not on the pause sandbox.
inline constexpr char kCriSandboxName[] = "io.kubernetes.cri.sandbox-name";
inline constexpr char kCriSandboxNamespace[] =
    "io.kubernetes.cri.sandbox-namespace";
inline constexpr char kCriContainerName[] = "io.kubernetes.cri.container-name";

// CRI-O's own name for the container, "k8s_<ctr>_<pod>_<ns>_<uid>_<attempt>"
// (podman pkg/annotations/annotations.go `Name`, set in cri-o
// SpecAddAnnotations from container.SetNameAndID): the runtime name, in the
// same form cri-dockerd gives Docker containers (cri-dockerd core/naming.go).
inline constexpr char kCrioName[] = "io.kubernetes.cri-o.Name";

// nerdctl's human-friendly name (nerdctl pkg/labels/labels.go `Name` =
// "nerdctl/" + "name"). nerdctl sets it as a containerd container label and
// copies all container labels into the OCI annotations
// (PropagateContainerdLabelsToOCIAnnotations in pkg/cmd/container/create.go).
inline constexpr char kNerdctlName[] = "nerdctl/name";

// ---------------------------------------------------------------------------
// Checks and readers every client applies.

/// Ids end up in a URL path and in a file path: true only for the characters
/// runtimes generate (hex for all of them), so "../" or "?" cannot steer
/// either.
bool IsSafeId(const std::string& id);

/// Error strings become log lines: one line of printable text, bounded.
std::string OneLine(std::string text);

/// `object[key]` if `object` is an object and that member a string, else "".
std::string StringField(const nlohmann::json& object, const char* key);

/// Docker labels and OCI annotations are string maps: the string members of
/// `value` (others are skipped rather than failing the whole lookup), and
/// only those of a bounded length.
Labels StringMap(const nlohmann::json& value);

/// labels[key], or "".
std::string ValueOf(const Labels& labels, const char* key);

/// Fills pod/ns/k8s_container from the three keys a runtime uses, keeping any
/// value already set.
void FillKubernetes(const Labels& labels, const char* pod_key,
                    const char* ns_key, const char* container_key,
                    ContainerMetadata* meta);

/// True when `meta` names the container at all (an answer without any name
/// says nothing worth keeping).
bool HasIdentity(const ContainerMetadata& meta);

}  // namespace gpuq::runtime_json
