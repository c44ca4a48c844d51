#pragma once
// The GNU build-id of an ELF file (NT_GNU_BUILD_ID, in a PT_NOTE segment): the linker's hash
// of the linked output, the same for every copy of one build and different for any rebuild.
// A scan reads two copies of a library once (binary/scan): pip's nvidia-* wheels and the CUDA
// toolkit beside them ship the same builds of cuFFT or cuBLASLt, hundreds of MB of headers and
// tables each. Only the ELF header, the program headers and the note segments are read.
#include <string>

namespace cd::bin {

// Lower-case hex, "" when the file has no build-id (or is not an ELF file, or the note is
// malformed). `fd` is read with pread (libelf), never changed.
std::string gnu_build_id(int fd);

}  // namespace cd::bin
