// Small, strict readers for sysfs/procfs attribute files: one code path for
// "read a number the kernel printed" and "list numbered directories".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuq {

/// The most ReadWholeFile() reads: sysfs attributes are at most a page, and
/// the largest procfs file it reads (cgroup) is far below this.
inline constexpr size_t kMaxAttributeBytes = 1 << 20;

/// Reads a whole small file into *out. Returns 0 or an errno value (EFBIG
/// past kMaxAttributeBytes); read(2) rather than iostreams so callers can
/// tell "gone" from "broken". Never blocks on a FIFO.
int ReadWholeFile(const std::string& path, std::string* out);

/// Whether anything exists at `path` (a sysfs attribute or directory, a
/// module's directory under /sys/module).
bool PathExists(const std::string& path);

/// A file that vanished under us: open() gives ENOENT, and a read of an
/// already-open sysfs file whose kernfs node was removed gives ENODEV
/// (fs/kernfs/file.c, kernfs_seq_start()).
bool IsVanished(int err);

/// `text` without trailing spaces, tabs and newlines.
std::string_view TrimTrailingSpace(std::string_view text);

/// Strict unsigned decimal: digits only, no sign, no whitespace, no overflow.
bool ParseDecimal(std::string_view text, uint64_t* value);
bool ParseU32(std::string_view text, uint32_t* value);

/// Lists the decimal-named entries of `dir` (what the kernel names with
/// "%d"/"%u"), ascending. Returns 0 or an errno value.
int ListNumericEntries(const std::string& dir, std::vector<uint32_t>* out);

}  // namespace gpuq
