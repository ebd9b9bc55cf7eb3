// A header of unity_names.py's negative control: a function a file-local
// one shadows in a unity batch.
#pragma once
namespace gpuq {
long Format(long x);
}  // namespace gpuq
