// unity_names.py's negative control (tests/lint/unity_names_test.sh): each
// name below clashes the way the check must catch.
#include "clash.h"

#define LOCAL_MACRO 1

namespace gpuq {
namespace {

int Scale(int x) { return 2 * x; }
constexpr int kShared = 1;
using Alias = int;
int Format(int x) { return x; }

}  // namespace
}  // namespace gpuq
