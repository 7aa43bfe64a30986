#pragma once
// Whole-file I/O for saved models and checkpoints.
//
// writeFileAtomically: a reader of `path` sees either the old file or the complete new one, even
// if the process dies or the disk fills mid-write. The bytes go to "<path>.tmp-<random>" (created
// exclusively beside `path`, so the rename stays within one file system), which is fsynced,
// renamed over `path`, and the directory is fsynced so the rename itself survives a crash. On any
// failure the temporary file is removed, `path` is untouched, and IoError names the file, the
// step and the operating system's reason. The writer holds an exclusive flock(2) on its temporary
// file from the moment it exists until after the rename, so that a process killed mid-write
// leaves a temporary nobody holds, and removeStaleTemporaries can tell it from one being written.
//
// removeStaleTemporaries: deletes, in `directory`, the temporaries ("<target>.tmp-<16 hex digits>")
// of the targets `isTarget` accepts that no writer holds: leftovers of writers that were killed.
// A temporary another process is writing right now is locked and left alone; one created an
// instant before its writer could lock it may be removed, and that writer then starts again under
// a new name. Best effort: a temporary that cannot be removed (permissions) stays. Returns the
// paths removed.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

namespace dl4cpp {

void writeFileAtomically(const std::filesystem::path& path, std::span<const std::byte> bytes);

std::vector<std::filesystem::path> removeStaleTemporaries(
    const std::filesystem::path& directory, const std::function<bool(std::string_view)>& isTarget);

// The whole file. DataNotFoundError when it does not exist; IoError when it cannot be read.
std::vector<std::byte> readWholeFile(const std::filesystem::path& path);

}  // namespace dl4cpp
