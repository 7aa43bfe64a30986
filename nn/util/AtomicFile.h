#pragma once
// Whole-file I/O for saved models and checkpoints.
//
// writeFileAtomically: a reader of `path` sees either the old file or the complete new one, even
// if the process dies or the disk fills mid-write. The bytes go to "<path>.tmp-<random>" (created
// exclusively beside `path`, so the rename stays within one file system), which is fsynced,
// renamed over `path`, and the directory is fsynced so the rename itself survives a crash. On any
// failure the temporary file is removed, `path` is untouched, and IoError names the file, the
// step and the operating system's reason.
#include <cstddef>
#include <filesystem>
#include <span>
#include <vector>

namespace dl4cpp {

void writeFileAtomically(const std::filesystem::path& path, std::span<const std::byte> bytes);

// The whole file. DataNotFoundError when it does not exist; IoError when it cannot be read.
std::vector<std::byte> readWholeFile(const std::filesystem::path& path);

}  // namespace dl4cpp
