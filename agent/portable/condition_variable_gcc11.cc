// The portable build's one libstdc++ shim. GCC 12's libstdc++ (Debian 12)
// defines std::condition_variable::wait(unique_lock<mutex>&) at a new default
// version, GLIBCXX_3.4.30, and keeps the GLIBCXX_3.4.11 one beside it
// (`objdump -T libstdc++.so.6` lists both); a binary linked against it asks
// for 3.4.30, which GCC 11's libstdc++ (RHEL 9) lacks. The portable binary
// is linked with --wrap of that symbol, and its calls go to the 3.4.11
// version here, which every libstdc++ since GCC 4.4 has.
extern "C" {
void gpuq_condition_variable_wait_3_4_11(void* cv, void* lock);
__asm__(
    ".symver gpuq_condition_variable_wait_3_4_11,"
    "_ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE@GLIBCXX_3.4.11");

// NOLINTNEXTLINE(bugprone-reserved-identifier): the name --wrap requires.
void __wrap__ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE(
    void* cv, void* lock) {
  gpuq_condition_variable_wait_3_4_11(cv, lock);
}
}
