// `record -- COMMAND ARGS...`: the command run while recording, with a
// shell's exit-status conventions.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace gpuq {

/// Starts `argv` (argv[0] looked up in PATH, like a shell) with this
/// process's stdio, environment and process group. Returns its pid, or -1
/// with *error_number set when it could not be started (exec failed).
pid_t SpawnCommand(const std::vector<std::string>& argv, int* error_number);

/// What a shell returns for a command that could not be started: 127 when
/// it was not found, 126 when it was found but could not be executed.
int SpawnFailureStatus(int error_number);

/// What a shell returns for a waited-for child: its exit code, or 128 +
/// the signal that killed it.
int ShellExitStatus(int wait_status);

}  // namespace gpuq
