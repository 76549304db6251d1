#include "checkpoint/rotated_files.h"

#include <dirent.h>
#include <time.h>

#include <algorithm>
#include <memory>
#include <utility>

namespace keyshard {
namespace {

// `name` in `dir`, as directory_of() gives it.
std::string path_in(const std::string& dir, const std::string& name) {
  return dir == "." ? name : dir == "/" ? "/" + name : dir + "/" + name;
}

// What logrotate and the like add to a name: ".1", "-20261201", "-2026-12-01", "_3". A
// compressor's extension after it (".1.gz", "-20261201.zst") does not count: a rotation that
// compresses the file it moves makes the old file unfindable, and one that compresses later
// (logrotate's delaycompress) compresses the rotation before the newest, a file some run
// finished. So a compressed rotation is never the file in the middle of two rotations.
bool is_rotation_suffix(std::string_view suffix) {
  if (suffix.size() < 2 || std::string_view(".-_").find(suffix[0]) == std::string_view::npos ||
      suffix[1] < '0' || suffix[1] > '9') {
    return false;
  }
  for (const char c : suffix.substr(1)) {
    if ((c < '0' || c > '9') && c != '-' && c != '_') return false;
  }
  return true;
}

}  // namespace

int64_t modified_ns(const struct stat& info) {
  return static_cast<int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec;
}

int64_t file_clock_ns() {
  timespec now {};
  ::clock_gettime(CLOCK_REALTIME_COARSE, &now);  // the clock the kernel stamps files with
  return static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

std::string DirectoryFiles::find(const std::string& dir, uint64_t device, uint64_t inode) {
  const Listing& listing = list(dir);
  const auto file = listing.by_identity.find(FileIdentity{device, inode});
  return file == listing.by_identity.end() ? std::string() : path_in(dir, file->second->name);
}

std::vector<std::string> DirectoryFiles::unread_rotations(
    const std::string& path, int64_t since,
    const std::function<bool(const FileIdentity&, const std::string&)>& known) {
  const std::string dir = directory_of(path);
  const size_t slash = path.rfind('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::vector<std::pair<int64_t, std::string>> found;
  const std::vector<File>& files = list(dir).files;  // by name: those starting with `base`
  auto file = std::lower_bound(files.begin(), files.end(), base,
                               [](const File& f, const std::string& b) { return f.name < b; });
  for (; !base.empty() && file != files.end() && file->name.starts_with(base); ++file) {
    if (is_rotation_suffix(std::string_view(file->name).substr(base.size())) &&
        file->modified >= since && !known(file->identity, path_in(dir, file->name))) {
      found.emplace_back(file->modified, path_in(dir, file->name));
    }
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> names;
  for (auto& [when, name] : found) names.push_back(std::move(name));
  return names;
}

const DirectoryFiles::Listing& DirectoryFiles::list(const std::string& dir) {
  const auto [entry, added] = listings_.try_emplace(dir);
  Listing& listing = entry->second;
  if (!added) return listing;
  std::unique_ptr<DIR, int (*)(DIR*)> directory(::opendir(dir.c_str()), ::closedir);
  while (directory) {
    const dirent* found = ::readdir(directory.get());
    if (found == nullptr) break;
    const std::string name = found->d_name;
    struct stat info {};
    if (name != "." && name != ".." && ::stat(path_in(dir, name).c_str(), &info) == 0 &&
        S_ISREG(info.st_mode)) {
      listing.files.push_back(File{name,
                                   {static_cast<uint64_t>(info.st_dev),
                                    static_cast<uint64_t>(info.st_ino)},
                                   modified_ns(info)});
    }
  }
  std::sort(listing.files.begin(), listing.files.end(),
            [](const File& a, const File& b) { return a.name < b.name; });
  for (const File& file : listing.files) listing.by_identity.emplace(file.identity, &file);
  return listing;
}

}  // namespace keyshard
