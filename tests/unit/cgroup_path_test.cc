// ParseCgroupPath against the cgroup paths each runtime and cgroup driver
// really creates (see tests/fixtures/cgroup/README.md for the sources).
#include "resolver/cgroup_path.h"

#include <gtest/gtest.h>

#include <string>

namespace gpuq::cgroup_path_test {
namespace {

const std::string kId =
    "a0cb2eed86e5dff4c412f57691b8e384d409f005189b6fd377a69e775fa19b69";
const std::string kInnerId =
    "e6e5818a84ed14b4a7b3974ebfe6b9eed785a5dfc4e0d95e819303e5e2430299";
const std::string kPodUid = "4180253f-7940-459d-bcbe-d79b604a7d60";
// The same UID after systemd unit-name escaping.
const std::string kPodUidEscaped = "4180253f_7940_459d_bcbe_d79b604a7d60";
// Static pods: kubelet's MD5 of the manifest.
const std::string kStaticPodUid = "d4c5a26fc6786aa3b0650a1762796785";

void ExpectContainer(const std::string& path, const std::string& runtime,
                     const std::string& pod_uid = "",
                     const std::string& id = kId) {
  SCOPED_TRACE(path);
  const ContainerIdentity identity = ParseCgroupPath(path);
  EXPECT_TRUE(identity.InContainer());
  EXPECT_EQ(identity.container_id, id);
  EXPECT_EQ(identity.runtime, runtime);
  EXPECT_EQ(identity.pod_uid, pod_uid);
}

void ExpectHost(const std::string& path, const std::string& pod_uid = "") {
  SCOPED_TRACE(path);
  const ContainerIdentity identity = ParseCgroupPath(path);
  EXPECT_FALSE(identity.InContainer());
  EXPECT_EQ(identity.container_id, "");
  EXPECT_EQ(identity.runtime, "");
  EXPECT_EQ(identity.pod_uid, pod_uid);
}

// --- Docker -----------------------------------------------------------------

TEST(CgroupPathTest, DockerSystemdDriver) {
  ExpectContainer("/system.slice/docker-" + kId + ".scope", "docker");
}

TEST(CgroupPathTest, DockerCgroupfsDriver) {
  ExpectContainer("/docker/" + kId, "docker");
}

TEST(CgroupPathTest, DockerRootlessSystemd) {
  ExpectContainer(
      "/user.slice/user-1000.slice/user@1000.service/user.slice/"
      "docker-" +
          kId + ".scope",
      "docker");
}

TEST(CgroupPathTest, DockerCgroupV1CpuHierarchy) {
  // The `cpu,cpuacct` line of /proc/<pid>/cgroup on a v1 host: same shape.
  ExpectContainer("/docker/" + kId, "docker");
  ExpectContainer("/system.slice/docker-" + kId + ".scope", "docker");
}

TEST(CgroupPathTest, DockerNestedInitScope) {
  // systemd running as PID 1 inside the container creates its own units.
  ExpectContainer("/docker/" + kId + "/init.scope", "docker");
  ExpectContainer("/system.slice/docker-" + kId + ".scope/init.scope",
                  "docker");
}

TEST(CgroupPathTest, DockerNestedPayloadSubgroup) {
  ExpectContainer("/system.slice/docker-" + kId + ".scope/payload", "docker");
}

TEST(CgroupPathTest, DockerInDockerIsOuterContainer) {
  ExpectContainer("/docker/" + kId + "/docker/" + kInnerId, "docker");
  ExpectContainer("/system.slice/docker-" + kId + ".scope/docker/" + kInnerId,
                  "docker");
}

TEST(CgroupPathTest, KubernetesNodeInDockerIsOuterContainer) {
  // kind / minikube: a whole kubelet runs inside a docker container; the
  // host's runtime only knows the node container.
  ExpectContainer("/system.slice/docker-" + kId +
                      ".scope/kubelet.slice/kubelet-kubepods.slice/"
                      "kubelet-kubepods-besteffort.slice/"
                      "kubelet-kubepods-besteffort-pod" +
                      kPodUidEscaped + ".slice/cri-containerd-" + kInnerId +
                      ".scope",
                  "docker");
  ExpectContainer("/docker/" + kId +
                      "/kubepods.slice/kubepods-besteffort.slice/"
                      "kubepods-besteffort-pod" +
                      kPodUidEscaped + ".slice/crio-" + kInnerId + ".scope",
                  "docker");
}

TEST(CgroupPathTest, KubernetesDockershimSystemd) {
  ExpectContainer(
      "/kubepods.slice/kubepods-burstable.slice/"
      "kubepods-burstable-pod" +
          kPodUidEscaped + ".slice/docker-" + kId + ".scope",
      "docker", kPodUid);
}

// --- podman -----------------------------------------------------------------

TEST(CgroupPathTest, PodmanSystemdRootful) {
  ExpectContainer("/machine.slice/libpod-" + kId + ".scope", "podman");
}

TEST(CgroupPathTest, PodmanSystemdRootless) {
  ExpectContainer(
      "/user.slice/user-1000.slice/user@1000.service/user.slice/"
      "libpod-" +
          kId + ".scope",
      "podman");
}

TEST(CgroupPathTest, PodmanPodSlice) {
  ExpectContainer("/machine.slice/machine-libpod_pod_" + kInnerId +
                      ".slice/libpod-" + kId + ".scope",
                  "podman");
}

TEST(CgroupPathTest, PodmanContainerSubgroup) {
  // crun's run.oci.systemd.subgroup: the payload of a systemd-mode container
  // runs in `<scope>/container`.
  ExpectContainer("/machine.slice/libpod-" + kId + ".scope/container",
                  "podman");
  ExpectContainer(
      "/machine.slice/libpod-" + kId + ".scope/container/init.scope", "podman");
}

TEST(CgroupPathTest, PodmanCgroupfsDriver) {
  ExpectContainer("/libpod_parent/libpod-" + kId, "podman");
}

TEST(CgroupPathTest, PodmanConmonSystemdIsHost) {
  ExpectHost("/machine.slice/libpod-conmon-" + kId + ".scope");
  ExpectHost(
      "/user.slice/user-1000.slice/user@1000.service/user.slice/"
      "libpod-conmon-" +
      kId + ".scope");
}

TEST(CgroupPathTest, PodmanConmonCgroupfsIsHost) {
  ExpectHost("/libpod_parent/conmon");
  // Early podman put conmon below the container's own cgroupfs cgroup.
  ExpectHost("/libpod_parent/libpod-" + kId + "/conmon");
}

// --- containerd -------------------------------------------------------------

TEST(CgroupPathTest, ContainerdPlainCgroupfsDefaultNamespace) {
  ExpectContainer("/default/" + kId, "containerd");
}

TEST(CgroupPathTest, ContainerdPlainCgroupfsOtherNamespaces) {
  ExpectContainer("/k8s.io/" + kId, "containerd");
  ExpectContainer("/buildkit/" + kId, "containerd");
}

TEST(CgroupPathTest, ContainerdPlainNested) {
  ExpectContainer("/default/" + kId + "/init.scope", "containerd");
}

TEST(CgroupPathTest, NerdctlSystemdDriver) {
  ExpectContainer("/system.slice/nerdctl-" + kId + ".scope", "containerd");
}

TEST(CgroupPathTest, KubernetesContainerdSystemdBurstable) {
  ExpectContainer(
      "/kubepods.slice/kubepods-burstable.slice/"
      "kubepods-burstable-pod" +
          kPodUidEscaped + ".slice/cri-containerd-" + kId + ".scope",
      "containerd", kPodUid);
}

TEST(CgroupPathTest, KubernetesContainerdSystemdBestEffort) {
  ExpectContainer(
      "/kubepods.slice/kubepods-besteffort.slice/"
      "kubepods-besteffort-pod" +
          kPodUidEscaped + ".slice/cri-containerd-" + kId + ".scope",
      "containerd", kPodUid);
}

TEST(CgroupPathTest, KubernetesContainerdSystemdGuaranteed) {
  // Guaranteed pods sit directly below kubepods.slice.
  ExpectContainer("/kubepods.slice/kubepods-pod" + kPodUidEscaped +
                      ".slice/cri-containerd-" + kId + ".scope",
                  "containerd", kPodUid);
}

TEST(CgroupPathTest, KubernetesContainerdCgroupfsBurstable) {
  ExpectContainer("/kubepods/burstable/pod" + kPodUid + "/" + kId, "containerd",
                  kPodUid);
}

TEST(CgroupPathTest, KubernetesContainerdCgroupfsBestEffort) {
  ExpectContainer("/kubepods/besteffort/pod" + kPodUid + "/" + kId,
                  "containerd", kPodUid);
}

TEST(CgroupPathTest, KubernetesContainerdCgroupfsGuaranteed) {
  ExpectContainer("/kubepods/pod" + kPodUid + "/" + kId, "containerd", kPodUid);
}

TEST(CgroupPathTest, KubernetesCgroupfsCustomCgroupRoot) {
  // kubelet --cgroup-root=/kubelet (kind with the cgroupfs driver).
  ExpectContainer("/kubelet/kubepods/burstable/pod" + kPodUid + "/" + kId,
                  "containerd", kPodUid);
}

TEST(CgroupPathTest, KubernetesStaticPodUid) {
  ExpectContainer("/kubepods/burstable/pod" + kStaticPodUid + "/" + kId,
                  "containerd", kStaticPodUid);
  ExpectContainer(
      "/kubepods.slice/kubepods-burstable.slice/"
      "kubepods-burstable-pod" +
          kStaticPodUid + ".slice/cri-containerd-" + kId + ".scope",
      "containerd", kStaticPodUid);
}

TEST(CgroupPathTest, KubernetesContainerdDriverMismatch) {
  // containerd's runc left on cgroupfs while kubelet uses systemd: runc
  // creates the systemd triple literally below containerd.service.
  ExpectContainer("/system.slice/containerd.service/kubepods-burstable-pod" +
                      kPodUidEscaped + ".slice:cri-containerd:" + kId,
                  "containerd", kPodUid);
}

TEST(CgroupPathTest, KubernetesContainerNestedSubgroup) {
  ExpectContainer(
      "/kubepods.slice/kubepods-burstable.slice/"
      "kubepods-burstable-pod" +
          kPodUidEscaped + ".slice/cri-containerd-" + kId + ".scope/init.scope",
      "containerd", kPodUid);
}

// --- CRI-O ------------------------------------------------------------------

TEST(CgroupPathTest, CrioSystemdBestEffort) {
  ExpectContainer(
      "/kubepods.slice/kubepods-besteffort.slice/"
      "kubepods-besteffort-pod" +
          kPodUidEscaped + ".slice/crio-" + kId + ".scope",
      "cri-o", kPodUid);
}

TEST(CgroupPathTest, CrioSystemdGuaranteed) {
  ExpectContainer("/kubepods.slice/kubepods-pod" + kPodUidEscaped +
                      ".slice/crio-" + kId + ".scope",
                  "cri-o", kPodUid);
}

TEST(CgroupPathTest, CrioCgroupfs) {
  // CRI-O's cgroupfs manager: filepath.Join(parent, "crio-" + id).
  ExpectContainer("/kubepods/besteffort/pod" + kPodUid + "/crio-" + kId,
                  "cri-o", kPodUid);
}

TEST(CgroupPathTest, CrioCgroupfsDefaultParent) {
  // No cgroup parent from the CRI request: CRI-O's default "/crio".
  ExpectContainer("/crio/crio-" + kId, "cri-o");
}

TEST(CgroupPathTest, CrioContainerSubgroup) {
  ExpectContainer(
      "/kubepods.slice/kubepods-besteffort.slice/"
      "kubepods-besteffort-pod" +
          kPodUidEscaped + ".slice/crio-" + kId + ".scope/container",
      "cri-o", kPodUid);
}

TEST(CgroupPathTest, CrioConmonSystemdIsNotContainer) {
  ExpectHost(
      "/kubepods.slice/kubepods-besteffort.slice/"
      "kubepods-besteffort-pod" +
          kPodUidEscaped + ".slice/crio-conmon-" + kId + ".scope",
      kPodUid);
  ExpectHost("/system.slice/crio-conmon-" + kId + ".scope");
}

TEST(CgroupPathTest, CrioConmonCgroupfsIsNotContainer) {
  ExpectHost("/kubepods/besteffort/pod" + kPodUid + "/crio-conmon-" + kId,
             kPodUid);
}

// --- Pods without a container component
// ----------------------------------------

TEST(CgroupPathTest, PodSliceSystemdHasPodUidOnly) {
  ExpectHost("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" +
                 kPodUidEscaped + ".slice",
             kPodUid);
}

TEST(CgroupPathTest, PodCgroupfsHasPodUidOnly) {
  ExpectHost("/kubepods/burstable/pod" + kPodUid, kPodUid);
  ExpectHost("/kubepods/pod" + kPodUid, kPodUid);
}

TEST(CgroupPathTest, QosSlicesAreHost) {
  ExpectHost("/kubepods.slice");
  ExpectHost("/kubepods.slice/kubepods-burstable.slice");
  ExpectHost("/kubepods/besteffort");
}

TEST(CgroupPathTest, PodComponentOutsideKubepodsIsIgnored) {
  ExpectHost("/system.slice/pod" + kPodUid);
  ExpectHost("/user.slice/user-pod" + kPodUidEscaped + ".slice");
}

// --- Host -------------------------------------------------------------------

TEST(CgroupPathTest, RootIsHost) { ExpectHost("/"); }

TEST(CgroupPathTest, HostSystemdUnitsAreHost) {
  ExpectHost("/init.scope");
  ExpectHost("/system.slice/sshd.service");
  ExpectHost("/system.slice/docker.service");
  ExpectHost("/system.slice/containerd.service");
  ExpectHost("/user.slice/user-1000.slice/session-3.scope");
  ExpectHost(
      "/user.slice/user-1000.slice/user@1000.service/app.slice/"
      "dbus.service");
}

TEST(CgroupPathTest, HostV1Paths) {
  ExpectHost("/docker");
  ExpectHost("/libpod_parent");
  ExpectHost("/system.slice");
}

TEST(CgroupPathTest, DeletedSuffixIsIgnored) {
  // cgroup v2 appends " (deleted)" in /proc/<pid>/cgroup for removed cgroups.
  ExpectContainer("/docker/" + kId + " (deleted)", "docker");
}

TEST(CgroupPathTest, ExtraSlashesAreTolerated) {
  ExpectContainer("/system.slice//docker-" + kId + ".scope/", "docker");
}

// --- Malformed --------------------------------------------------------------

TEST(CgroupPathTest, EmptyStringIsHost) { ExpectHost(""); }

TEST(CgroupPathTest, NoLeadingSlashIsHost) {
  ExpectHost("docker/" + kId);
  ExpectHost("system.slice/docker-" + kId + ".scope");
  ExpectHost("0::/docker/" + kId);
}

TEST(CgroupPathTest, ShortIdIsRejected) {
  const std::string short_id = kId.substr(0, 63);
  ExpectHost("/docker/" + short_id);
  ExpectHost("/system.slice/docker-" + short_id + ".scope");
  ExpectHost("/machine.slice/libpod-" + short_id + ".scope");
  ExpectHost("/default/" + short_id);
  ExpectHost("/kubepods/burstable/pod" + kPodUid + "/" + short_id, kPodUid);
  ExpectHost("/kubepods/besteffort/pod" + kPodUid + "/crio-" + short_id,
             kPodUid);
}

TEST(CgroupPathTest, LongIdIsRejected) {
  ExpectHost("/docker/" + kId + "0");
  ExpectHost("/system.slice/docker-" + kId + "0.scope");
}

TEST(CgroupPathTest, UppercaseIdIsRejected) {
  std::string upper = kId;
  for (char& c : upper) {
    if (c >= 'a' && c <= 'f') c = static_cast<char>(c - 'a' + 'A');
  }
  ExpectHost("/docker/" + upper);
  ExpectHost("/system.slice/docker-" + upper + ".scope");
  ExpectHost("/default/" + upper);
}

TEST(CgroupPathTest, NonHexIdIsRejected) {
  std::string bad = kId;
  bad[10] = 'g';
  ExpectHost("/docker/" + bad);
  ExpectHost("/system.slice/crio-" + bad + ".scope");
}

TEST(CgroupPathTest, WrongSuffixIsRejected) {
  ExpectHost("/system.slice/docker-" + kId + ".service");
  ExpectHost("/system.slice/docker-" + kId);  // dockerd never drops .scope
  ExpectHost("/kubepods.slice/kubepods-pod" + kPodUidEscaped +
                 ".slice/cri-containerd-" + kId + ".slice",
             kPodUid);
}

TEST(CgroupPathTest, BareIdOnlyWhereARuntimePutsOne) {
  // A 64-hex name elsewhere is not a containerd `/<ns>/<id>`.
  ExpectHost("/" + kId);
  ExpectHost("/system.slice/" + kId);
  ExpectHost("/a/b/" + kId);
  ExpectHost("/libpod_parent/" + kId);  // '_' is not allowed in namespaces
  ExpectHost("/kubepods/" + kId);
}

TEST(CgroupPathTest, MalformedPodUidIsIgnored) {
  ExpectHost("/kubepods/burstable/pod" + kPodUid.substr(1));
  ExpectHost("/kubepods/burstable/podXYZ");
  // A dashed UID in a systemd slice name cannot occur (systemd escapes it).
  ExpectHost("/kubepods.slice/kubepods-pod" + kPodUid + ".slice");
}

TEST(CgroupPathTest, ShortIdIsFirstTwelveCharacters) {
  const ContainerIdentity identity = ParseCgroupPath("/docker/" + kId);
  EXPECT_EQ(identity.ShortId(), "a0cb2eed86e5");
  EXPECT_EQ(ParseCgroupPath("/").ShortId(), "");
}

}  // namespace
}  // namespace gpuq::cgroup_path_test
