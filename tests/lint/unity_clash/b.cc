// The other half of unity_names.py's negative control.
#define UNDONE_MACRO 2
#undef UNDONE_MACRO

namespace gpuq {
namespace {

double Scale(double x) { return 3 * x; }
constexpr int kShared = 2;
using Alias = int;

}  // namespace

namespace b_only {
namespace {
int Scale(long x) { return static_cast<int>(x); }
}  // namespace
}  // namespace b_only

}  // namespace gpuq
