// Reading a file the user named (a capture, the web config, a TLS file)
// without trusting what it is: a FIFO must not hang the agent, a device or
// a huge file must not make it allocate without bound, a file that grows
// while read must end.
#pragma once

#include <cstdint>
#include <string>

namespace gpuq {

/// Reads the regular file `path` whole into *out: at most `max_bytes`, and
/// only the bytes it had when opened (a file that grows while read is cut
/// there). Anything else (missing, a directory, a FIFO, a socket, a device,
/// larger than `max_bytes`, unreadable) returns false with *error one
/// clause naming what it is, for the caller to prefix with the file's role.
bool ReadRegularFile(const std::string& path, uint64_t max_bytes,
                     std::string* out, std::string* error);

/// Opens the regular file `path` for reading (O_NONBLOCK: a FIFO cannot
/// hang it) and sets *size to its size now, at most `max_bytes`: a file
/// descriptor to read only that many bytes from, or -1 with *error set as
/// ReadRegularFile says.
int OpenRegularFile(const std::string& path, uint64_t max_bytes, uint64_t* size,
                    std::string* error);

/// Checks that `path` is a readable regular file of at most `max_bytes`
/// (for files a library opens itself, such as OpenSSL's certificate files).
bool CheckRegularFile(const std::string& path, uint64_t max_bytes,
                      std::string* error);

}  // namespace gpuq
