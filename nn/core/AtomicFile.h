#pragma once
// File I/O for saved models, checkpoints, reports and images.
//
// writeFileAtomically: a reader of `path` sees either the old file or the complete new one, even
// if the process dies or the disk fills mid-write. The path goes through the output-path rule
// first (OutputPath.h: links followed to their target, a target that is not a regular file
// refused, the folder checked), before a byte is written. The bytes go to
// "<target>.tmp-<random>" (created exclusively beside the target, so the rename stays within one
// file system), which takes the existing target's permission bits (and owner and group where
// permitted), is fsynced, and renamed over the target; the directory is then fsynced so the
// rename itself survives a crash. On any failure the temporary file is removed, the target is
// untouched, and IoError names the file, the step and the operating system's reason
// (OutputPathError for a path the rule refuses). The writer holds an exclusive flock(2) on its
// temporary file from the moment it exists until after the rename, so that a process killed
// mid-write leaves a temporary nobody holds, and removeStaleTemporaries can tell it from one
// being written.
//
// Durability::Unsynced skips both fsyncs: still atomic for readers while the system runs, but
// after a crash the file may be the old one, the new one, or (depending on the file system)
// empty. For many small files whoever needs them marks a finished set itself (the image-folder
// tool writes 70,000 images; two fsyncs each would take minutes).
//
// removeStaleTemporaries: deletes, in `directory`, the temporaries ("<target>.tmp-<16 hex digits>")
// of the targets `isTarget` accepts that no writer holds: leftovers of writers that were killed.
// A temporary another process is writing right now is locked and left alone; one created an
// instant before its writer could lock it may be removed, and that writer then starts again under
// a new name. Best effort: a temporary that cannot be removed (permissions) stays. Returns the
// paths removed.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "nn/core/RegularFile.h"

namespace dl4cpp {

enum class Durability { Synced, Unsynced };

// `what` names the file in messages ("a model file").
void writeFileAtomically(const std::filesystem::path& path, std::span<const std::byte> bytes,
                         std::string_view what = "a file",
                         Durability durability = Durability::Synced);

std::vector<std::filesystem::path> removeStaleTemporaries(
    const std::filesystem::path& directory, const std::function<bool(std::string_view)>& isTarget);

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
