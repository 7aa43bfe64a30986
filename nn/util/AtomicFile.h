#pragma once
// File I/O for saved models and checkpoints.
//
// writeFileAtomically: a reader of `path` sees either the old file or the complete new one, even
// if the process dies or the disk fills mid-write. The bytes go to "<path>.tmp-<random>" (created
// exclusively beside `path`, so the rename stays within one file system), which is fsynced,
// renamed over `path`, and the directory is fsynced so the rename itself survives a crash. On any
// failure the temporary file is removed, `path` is untouched, and IoError names the file, the
// step and the operating system's reason.
#include <dl4cpp/nn/util/RegularFile.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

namespace dl4cpp {

void writeFileAtomically(const std::filesystem::path& path, std::span<const std::byte> bytes);

// Reading a user-supplied path goes through RegularFile: a directory, FIFO or device is refused
// before a byte is read (DataNotFoundError when the path does not exist, DataFormatError when it is
// not a regular file, with `what` it should have been). At most the size the file had when opened
// is read: DataTruncatedError when it ends earlier (it shrank meanwhile), AllocationError when
// that size exceeds the machine's memory, IoError when it cannot be read.
std::vector<std::byte> readWholeFile(const std::filesystem::path& path,
                                     std::string_view what = "a regular file");
// The same for a file already open (`path` names it in messages).
std::vector<std::byte> readWholeFile(const RegularFile& file, const std::filesystem::path& path);
// Fills `out` with the bytes at `offset` of `file`.
void readFileAt(const RegularFile& file, const std::filesystem::path& path, uint64_t offset,
                std::span<std::byte> out);

}  // namespace dl4cpp
