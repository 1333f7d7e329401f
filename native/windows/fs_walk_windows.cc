// SPDX-License-Identifier: MIT
// Inspect, read, list and make beneath a write root on Windows (binding/fs_beneath.h), on the
// handle-relative walk of nt_walk.h: the last component too is opened as itself
// (FILE_OPEN_REPARSE_POINT), so a junction or symlink there is answered as a link, never read,
// listed or made through.
#include <errno.h>

#include <algorithm>
#include <cstdio>

#include "binding/fs_beneath.h"
#include "windows/nt_walk.h"

namespace fs_beneath {

using nt_walk::Handle;
using nt_walk::OpenAt;
using nt_walk::Opened;
using nt_walk::Target;

namespace {

constexpr ACCESS_MASK kLookAccess = FILE_READ_ATTRIBUTES | SYNCHRONIZE;

// A file time (100 ns units since 1601) in nanoseconds since 1970.
long long Nanos(const LARGE_INTEGER& t) {
  return (t.QuadPart - 116444736000000000LL) * 100;  // 100 ns units since 1601
}

// Kind, size and stamp of an opened entry: "volume:file id:size:last write:change", the times in
// nanoseconds since 1970 as on POSIX (the change time moves on any write or attribute change and
// cannot be set back through the Win32 API, as ctime on POSIX).
bool Describe(const Opened& o, Info* info) {
  BY_HANDLE_FILE_INFORMATION by;
  FILE_BASIC_INFO basic;
  if (!GetFileInformationByHandle(o.handle.get(), &by) ||
      !GetFileInformationByHandleEx(o.handle.get(), FileBasicInfo, &basic, sizeof basic)) {
    info->err = nt_walk::ErrnoOfWin32(GetLastError());
    info->kind = Kind::kError;
    return false;
  }
  info->kind = nt_walk::KindOf(o.attributes);
  info->size = (static_cast<uint64_t>(by.nFileSizeHigh) << 32) | by.nFileSizeLow;
  uint64_t id = (static_cast<uint64_t>(by.nFileIndexHigh) << 32) | by.nFileIndexLow;
  char buf[160];
  snprintf(buf, sizeof buf, "%lu:%llu:%llu:%lld:%lld",
           static_cast<unsigned long>(by.dwVolumeSerialNumber), static_cast<unsigned long long>(id),
           static_cast<unsigned long long>(info->size), Nanos(basic.LastWriteTime),
           Nanos(basic.ChangeTime));
  info->stamp = buf;
  return true;
}

void Look(HANDLE parent, const std::wstring& name, Info* info) {
  Opened o;
  if (!OpenAt(parent, name, kLookAccess, 0, nt_walk::kOpen, &o, &info->err)) {
    info->kind = info->err == ENOENT ? Kind::kMissing : Kind::kError;
    return;
  }
  Describe(o, info);
}

}  // namespace

Info Inspect(const std::string& root, const std::string& rel) {
  Info info;
  Target t;
  if (!nt_walk::OpenTarget(root, rel, &t, &info.err)) {
    info.kind = info.err == ENOENT ? Kind::kMissing : Kind::kError;
    return info;
  }
  Look(t.parent.get(), t.name, &info);
  return info;
}

std::vector<Info> InspectMany(const std::vector<std::string>& paths) {
  std::vector<Info> out(paths.size());
  // Each path as its volume, parent components and last component; an invalid one is an error.
  struct Parsed {
    std::wstring volume;
    std::vector<std::wstring> parts;
    std::wstring key;  // volume and parent, for grouping
  };
  std::vector<Parsed> parsed(paths.size());
  std::vector<size_t> order;
  order.reserve(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    Parsed& p = parsed[i];
    if (!nt_walk::Split(paths[i], "", &p.volume, &p.parts) || p.parts.empty()) {
      out[i].err = EINVAL;
      continue;
    }
    p.key = p.volume;
    for (size_t k = 0; k + 1 < p.parts.size(); ++k) p.key += p.parts[k] + L'\\';
    order.push_back(i);
  }
  // Grouped by parent: each directory walked to once, one walk's handle open at a time. Names
  // differing in case only are different keys here: each group is walked on its own, as correct.
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return parsed[a].key < parsed[b].key; });
  Handle dir;
  int dir_err = 0;
  const std::wstring* open_key = nullptr;
  for (size_t i : order) {
    const Parsed& p = parsed[i];
    if (open_key == nullptr || *open_key != p.key) {
      dir_err = 0;
      dir.Reset(nullptr);
      nt_walk::OpenDir(p.volume, p.parts, p.parts.size() - 1, &dir, &dir_err);
      open_key = &p.key;
    }
    Info& info = out[i];
    if (dir.get() == nullptr) {
      info.err = dir_err;
      info.kind = dir_err == ENOENT ? Kind::kMissing : Kind::kError;
      continue;
    }
    Look(dir.get(), p.parts.back(), &info);
  }
  return out;
}

bool ReadFile(const std::string& root, const std::string& rel, size_t max, std::string* out,
              int* err) {
  Target t;
  if (!nt_walk::OpenTarget(root, rel, &t, err)) return false;
  Opened o;
  if (!OpenAt(t.parent.get(), t.name, FILE_READ_DATA | kLookAccess, nt_walk::kNonDirectoryFile,
              nt_walk::kOpen, &o, err)) {
    if (*err == EISDIR) *err = EINVAL;
    return false;
  }
  if (o.reparse) {
    *err = ELOOP;  // as O_NOFOLLOW answers for a symlink
    return false;
  }
  LARGE_INTEGER size;
  if (!GetFileSizeEx(o.handle.get(), &size)) {
    *err = nt_walk::ErrnoOfWin32(GetLastError());
    return false;
  }
  if (size.QuadPart < 0 || static_cast<uint64_t>(size.QuadPart) > max) {
    *err = EFBIG;
    return false;
  }
  out->clear();
  char buf[65536];
  for (;;) {
    DWORD n = 0;
    if (!::ReadFile(o.handle.get(), buf, sizeof buf, &n, nullptr)) {
      *err = nt_walk::ErrnoOfWin32(GetLastError());
      return false;
    }
    if (n == 0) break;
    if (out->size() + n > max) {
      *err = EFBIG;
      return false;
    }
    out->append(buf, n);
  }
  return true;
}

bool List(const std::string& root, const std::string& rel, size_t max,
          std::vector<std::pair<std::string, Kind>>* out, int* err) {
  Target t;
  if (!nt_walk::OpenTarget(root, rel, &t, err)) return false;
  Opened o;
  if (!OpenAt(t.parent.get(), t.name, nt_walk::kWalkAccess, nt_walk::kDirectoryFile, nt_walk::kOpen,
              &o, err)) {
    return false;
  }
  if (o.reparse) {
    *err = ELOOP;
    return false;
  }
  std::vector<std::pair<std::wstring, DWORD>> entries;
  if (!nt_walk::ReadEntries(o.handle.get(), max, &entries, err)) return false;
  for (const auto& e : entries)
    out->emplace_back(nt_walk::Utf8(e.first), nt_walk::KindOf(e.second));
  return true;
}

bool Make(const std::string& root, const std::string& rel, const std::string* link_target,
          unsigned /*mode: Windows has no permission bits; the directory inherits its ACL*/,
          int* err) {
  if (link_target != nullptr) {
    // A symlink needs a privilege (or developer mode) on Windows and is not made by this walk.
    *err = ENOSYS;
    return false;
  }
  Target t;
  if (!nt_walk::OpenTarget(root, rel, &t, err)) return false;
  Opened o;
  if (OpenAt(t.parent.get(), t.name, kLookAccess, nt_walk::kDirectoryFile, nt_walk::kCreate, &o,
             err, FILE_ATTRIBUTE_NORMAL)) {
    return true;
  }
  if (*err != EEXIST) return false;
  // Something is there: a directory (not a junction) will do.
  if (!OpenAt(t.parent.get(), t.name, kLookAccess, 0, nt_walk::kOpen, &o, err)) return false;
  if (o.reparse || !o.directory) {
    *err = EEXIST;
    return false;
  }
  return true;
}

}  // namespace fs_beneath
