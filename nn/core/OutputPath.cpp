#include "nn/core/OutputPath.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>

#include "nn/core/ErrnoText.h"
#include "nn/core/Error.h"
#include "nn/core/RegularFile.h"

namespace dl4cpp {

namespace fs = std::filesystem;

namespace {

// The path as given, and where its links led when that is elsewhere.
std::string described(const fs::path& path, const fs::path& target) {
  if (target == path) return path.string();
  return fmt::format("{} (a symbolic link to {})", path.string(), target.string());
}

[[noreturn]] void refuse(std::string_view what, const std::string& where, const std::string& why) {
  throw OutputPathError(fmt::format("cannot write {} to {}: {}", what, where, why));
}

// Why a path lookup failed, for the errors where the path's folders are at fault.
std::string lookupFailure(int err) {
  if (err == ELOOP) return "a loop of symbolic links in the path";
  if (err == ENOTDIR) return "a component of the path is not a directory";
  return errnoText(err);
}

// The folder `path` would be created in.
fs::path folderOf(const fs::path& path) {
  return path.has_parent_path() ? path.parent_path() : fs::path(".");
}

// Refuses unless `folder` (an existing directory) lets this process create files in it.
void requireWritableFolder(const fs::path& folder, std::string_view what,
                           const std::string& where) {
  if (::faccessat(AT_FDCWD, folder.c_str(), W_OK | X_OK, AT_EACCESS) != 0)
    refuse(what, where,
           fmt::format("files cannot be created in the folder {}: {}", folder.string(),
                       errnoText(errno)));
}

}  // namespace

OutputTarget resolveOutputPath(const fs::path& path, std::string_view what) {
  if (path.empty()) refuse(what, "''", "the path is empty");
  fs::path current = path;
  for (int hops = 0;; ++hops) {
    if (!current.has_filename())
      refuse(what, described(path, current), "the path ends in '/': it names a folder, not a file");
    struct stat st {};
    if (::lstat(current.c_str(), &st) != 0) {
      const int err = errno;
      if (err != ENOENT) refuse(what, described(path, current), lookupFailure(err));
      OutputTarget target;  // nothing there yet (or a folder on the way is missing)
      target.path = current;
      return target;
    }
    if (S_ISLNK(st.st_mode)) {
      if (hops == kMaxSymlinkHops)
        refuse(
            what, path.string(),
            fmt::format("a loop of symbolic links (or a chain of more than {})", kMaxSymlinkHops));
      std::error_code ec;
      const fs::path link = fs::read_symlink(current, ec);
      if (ec)
        throw IoError(fmt::format("cannot write {} to {}: cannot read the symbolic link {}: {}",
                                  what, path.string(), current.string(), ec.message()));
      current = link.is_absolute() ? link : current.parent_path() / link;
      continue;
    }
    if (!S_ISREG(st.st_mode))
      refuse(what, described(path, current),
             fmt::format("it is {}; only a regular file is written or replaced",
                         fileTypeName(st.st_mode)));
    OutputTarget target;
    target.path = current;
    target.exists = true;
    target.mode = st.st_mode;
    target.owner = st.st_uid;
    target.group = st.st_gid;
    return target;
  }
}

OutputTarget checkOutputPath(const fs::path& path, std::string_view what) {
  OutputTarget target = resolveOutputPath(path, what);
  const fs::path folder = folderOf(target.path);
  const std::string where = described(path, target.path);
  struct stat st {};
  if (::stat(folder.c_str(), &st) != 0) {
    const int err = errno;
    refuse(what, where,
           err == ENOENT ? fmt::format("the folder {} does not exist", folder.string())
                         : fmt::format("the folder {}: {}", folder.string(), lookupFailure(err)));
  }
  if (!S_ISDIR(st.st_mode))
    refuse(what, where,
           fmt::format("{} is {}, not a folder", folder.string(), fileTypeName(st.st_mode)));
  requireWritableFolder(folder, what, where);
  return target;
}

void checkOutputDirectory(const fs::path& path, std::string_view what) {
  if (path.empty()) refuse(what, "''", "the path is empty");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode))
      refuse(what, path.string(), fmt::format("it is {}, not a folder", fileTypeName(st.st_mode)));
    requireWritableFolder(path, what, path.string());
    return;
  }
  int err = errno;
  if (err != ENOENT) refuse(what, path.string(), lookupFailure(err));
  if (::lstat(path.c_str(), &st) == 0) {
    std::error_code ec;
    refuse(what, path.string(),
           fmt::format("it is a symbolic link to {}, which does not exist (create that folder)",
                       fs::read_symlink(path, ec).string()));
  }
  // Missing: it will be created in its nearest existing ancestor.
  fs::path ancestor = path;
  do {
    ancestor = ancestor.has_relative_path() && ancestor.has_parent_path() &&
                       ancestor.parent_path() != ancestor
                   ? ancestor.parent_path()
                   : fs::path(".");
    if (::stat(ancestor.c_str(), &st) == 0) break;
    err = errno;
    if (err != ENOENT) refuse(what, path.string(), lookupFailure(err));
  } while (ancestor != ".");
  if (!S_ISDIR(st.st_mode))
    refuse(what, path.string(),
           fmt::format("{} is {}, not a folder", ancestor.string(), fileTypeName(st.st_mode)));
  requireWritableFolder(ancestor, what, path.string());
}

}  // namespace dl4cpp
