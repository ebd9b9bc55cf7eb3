// gpuq-agent: see cli/commands.h.
#include "cli/commands.h"

int main(int argc, char** argv) { return gpuq::Main(argc, argv); }
