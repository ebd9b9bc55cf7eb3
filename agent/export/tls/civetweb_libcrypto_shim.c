/*
 * Stands in for "libcrypto.so" when civetweb opens it: the SONAME
 * "libcrypto.so" and a dependency on libcrypto.so.3, nothing else. Every
 * name civetweb looks up is in libcrypto.so.3; this only spares the runtime
 * image the libssl-dev symlink civetweb's dlopen("libcrypto.so") needs.
 */
__attribute__((visibility("default"))) const char gpuq_civetweb_crypto_shim[] =
    "libcrypto.so.3";
