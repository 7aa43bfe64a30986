#pragma once
// The rule for every file dl4cpp writes: model files and checkpoints (ModelSerializer,
// Checkpoints), HTML reports (HtmlReport, StatsListener), images (ImageWriter), and the samples'
// outputs (--save, --report, --json, --out). writeFileAtomically (AtomicFile.h) applies it to
// every write; checkOutputPath lets a program apply it before hours of work, so that a path that
// cannot be written fails at once instead of after training.
//
// The target of a path:
//  - a symbolic link is followed to the file it names, through chains of links (at most
//    kMaxSymlinkHops), a relative link resolved against the link's folder; the link itself is
//    kept, and the write replaces (or creates) the file it leads to. A dangling link resolves to
//    its target, so the write creates that file;
//  - an existing target that is not a regular file (a directory, FIFO, character or block device,
//    socket) is refused: a write never replaces one (`--save /dev/null` must not turn the
//    system's /dev/null into a model file);
//  - a loop of links, or a longer chain, is refused, naming the path;
//  - a path that names no file (empty, or ending in '/') is refused.
// Refusals are OutputPathError (an IoError) naming the path, the target when a link led there, and
// what the target is; the path is refused before anything is written or a temporary created.
//
// What a write keeps of an existing target (writeFileAtomically): its permission bits, and its
// owner and group where this process may set them (a process that is not root keeps the group
// only when it belongs to it, and never the owner). A new file is created with mode 0644 less the
// process's umask. Extended attributes and ACLs are not copied.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string_view>

namespace dl4cpp {

// Links followed before a chain is called a loop: Linux's own limit for resolving a path.
inline constexpr int kMaxSymlinkHops = 40;

struct OutputTarget {
  std::filesystem::path path;  // the file a write replaces or creates, links resolved
  bool exists = false;         // a regular file is there now
  mode_t mode = 0;             // the existing file's mode (type and permission bits)
  uid_t owner = 0;
  gid_t group = 0;
};

// The target of a write to `path` (above). `what` names the file in messages ("a model file").
OutputTarget resolveOutputPath(const std::filesystem::path& path, std::string_view what);

// resolveOutputPath, and the target's folder exists, is a directory, and this process may create
// files in it (write and search permission with its effective IDs; a read-only file system
// refuses). OutputPathError otherwise, naming the path and the folder.
OutputTarget checkOutputPath(const std::filesystem::path& path, std::string_view what);

// For a folder a program writes files into, creating it when missing (the image tool's --out,
// checkpoint directories): an existing `path` (links followed) must be a directory this process
// may create files in; a missing one needs its nearest existing ancestor to be one.
// OutputPathError otherwise.
void checkOutputDirectory(const std::filesystem::path& path, std::string_view what);

}  // namespace dl4cpp
