# Cross-compiles dl4cpp for 64-bit Arm Linux with Debian's cross toolchain (g++-aarch64-linux-gnu)
# against Debian's arm64 multiarch packages (libfmt-dev:arm64 and the like, which install under
# /usr/lib/aarch64-linux-gnu beside the host's x86-64 ones), and runs what CTest and
# the test discovery start under qemu-user. scripts/test-aarch64.sh installs all of it and uses
# this file:
#
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.toolchain.cmake \
#         -Ddnnl_DIR=<oneDNN's arm64 package config>
#
# (Debian 12 cannot install libdnnl-dev:arm64 beside the host's libdnnl-dev; the script unpacks it
# into the build folder and passes its dnnl_DIR.)
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Multiarch rather than a sysroot: find_library and find_package look in lib/aarch64-linux-gnu
# (never in the host's lib/x86_64-linux-gnu), and the cross compiler already searches
# /usr/include/aarch64-linux-gnu before the shared /usr/include.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# pkg-config (cpp-httplib, for the inference server) reads the arm64 .pc files, not the host's.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)

# No -L /usr/aarch64-linux-gnu: the arm64 packages bring libc6:arm64, whose loader
# (/lib/ld-linux-aarch64.so.1) finds every library, theirs and the toolchain's runtime. With -L,
# qemu would start the cross toolchain's loader (glibc 2.36-8cross1) with the packages' libc.so.6
# (2.36-9+deb12u*): a mixed glibc whose threads deadlock (std::thread and OpenMP tests hang).
# Neoverse N1 (Graviton2, Ampere Altra): the common arm64 server core, NEON without SVE. qemu's
# default (max) has 512-bit SVE, which sends oneDNN down kernels only A64FX-class parts run.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -cpu neoverse-n1)
