// SPDX-License-Identifier: MIT
// Removal and replacement beneath a write root on Windows (binding/fs_beneath.h), on the
// handle-relative walk of nt_walk.h: depth-first without recursion on the C stack, each entry
// opened relative to its directory's handle as itself (FILE_OPEN_REPARSE_POINT) and deleted
// through that handle, so a junction or symlink is removed as a link and never entered, and a
// directory swapped for one while the tree is emptied is never followed elsewhere.
#include <errno.h>

#include <algorithm>

#include "binding/fs_beneath.h"
#include "windows/nt_walk.h"

namespace fs_beneath {

using nt_walk::Handle;
using nt_walk::OpenAt;
using nt_walk::Opened;
using nt_walk::Target;

namespace {

constexpr ACCESS_MASK kDeleteAccess =
    DELETE | FILE_READ_ATTRIBUTES | FILE_WRITE_ATTRIBUTES | SYNCHRONIZE;

// FILE_DISPOSITION_INFO_EX (Windows 10 1709+): the name goes at once (POSIX semantics) even while
// another process holds the file open, and a read-only file goes too.
constexpr int kFileDispositionInfoEx = 21;
constexpr DWORD kDispositionDelete = 0x1;
constexpr DWORD kDispositionPosixSemantics = 0x2;
constexpr DWORD kDispositionIgnoreReadonly = 0x10;

void NoteError(RemoveResult* r, int err) {
  if (r->ok) r->err = err;
  r->ok = false;
}

// Deletes the object `h` is open on (a file, an empty directory, or a reparse point itself).
bool DeleteOpened(HANDLE h, DWORD attributes, int* err) {
  DWORD flags = kDispositionDelete | kDispositionPosixSemantics | kDispositionIgnoreReadonly;
  if (SetFileInformationByHandle(h, static_cast<FILE_INFO_BY_HANDLE_CLASS>(kFileDispositionInfoEx),
                                 &flags, sizeof flags)) {
    return true;
  }
  DWORD error = GetLastError();
  if (error == ERROR_DIR_NOT_EMPTY || error == ERROR_ACCESS_DENIED) {
    *err = nt_walk::ErrnoOfWin32(error);
    return false;
  }
  // An older system (or a file system without POSIX semantics): the classic disposition, after
  // clearing a read-only attribute (the command ran as this user and may have set it).
  if ((attributes & FILE_ATTRIBUTE_READONLY) != 0) {
    FILE_BASIC_INFO basic = {};
    basic.FileAttributes = attributes & ~static_cast<DWORD>(FILE_ATTRIBUTE_READONLY);
    if (basic.FileAttributes == 0) basic.FileAttributes = FILE_ATTRIBUTE_NORMAL;
    SetFileInformationByHandle(h, FileBasicInfo, &basic, sizeof basic);
  }
  FILE_DISPOSITION_INFO classic = {TRUE};
  if (SetFileInformationByHandle(h, FileDispositionInfo, &classic, sizeof classic)) return true;
  *err = nt_walk::ErrnoOfWin32(GetLastError());
  return false;
}

// Opens `name` in `dir` for deletion: as a directory to list when it is one, else as itself.
bool OpenForDelete(HANDLE dir, const std::wstring& name, Opened* o, int* err) {
  if (OpenAt(dir, name, kDeleteAccess | FILE_LIST_DIRECTORY, nt_walk::kDirectoryFile,
             nt_walk::kOpen, o, err)) {
    return true;
  }
  if (*err != ENOTDIR) return false;
  return OpenAt(dir, name, kDeleteAccess, nt_walk::kNonDirectoryFile, nt_walk::kOpen, o, err);
}

// One directory being emptied: its handle and the subdirectories left to do (by name, each
// opened again relative to it when its turn comes, as itself).
struct Level {
  Opened dir;
  bool listed = false;
  std::vector<std::wstring> pending;
};

// Deletes every non-directory of the level's directory (a link or junction as itself) and notes
// its subdirectories.
void EmptyFiles(Level* level, RemoveResult* r) {
  std::vector<std::pair<std::wstring, DWORD>> entries;
  int err = 0;
  if (!nt_walk::ReadEntries(level->dir.handle.get(), static_cast<size_t>(-1), &entries, &err)) {
    NoteError(r, err);
    return;
  }
  for (const auto& entry : entries) {
    Opened o;
    if (!OpenForDelete(level->dir.handle.get(), entry.first, &o, &err)) {
      if (err != ENOENT) NoteError(r, err);  // ENOENT: gone since the listing
      continue;
    }
    // The listing's word counts too: under Wine only it shows a Unix symlink as a link.
    if ((entry.second & FILE_ATTRIBUTE_REPARSE_POINT) != 0) o.reparse = true;
    if (o.directory && !o.reparse) {
      level->pending.push_back(entry.first);
    } else if (DeleteOpened(o.handle.get(), o.attributes, &err)) {
      r->removed++;
    } else {
      NoteError(r, err);
    }
  }
}

// Empties and deletes the directory `top`, depth-first on a stack of levels (never the C stack):
// one handle per level of depth, none per sibling.
void RemoveTree(Opened top, RemoveResult* r) {
  std::vector<Level> stack(1);
  stack.back().dir = std::move(top);
  while (!stack.empty() && r->ok) {
    Level& level = stack.back();
    if (!level.listed) {
      level.listed = true;
      EmptyFiles(&level, r);
      continue;
    }
    if (!level.pending.empty()) {
      std::wstring name = std::move(level.pending.back());
      level.pending.pop_back();
      Level sub;
      int err = 0;
      if (!OpenForDelete(level.dir.handle.get(), name, &sub.dir, &err)) {
        if (err != ENOENT) NoteError(r, err);
      } else if (sub.dir.directory && !sub.dir.reparse) {
        stack.push_back(std::move(sub));
      } else if (DeleteOpened(sub.dir.handle.get(), sub.dir.attributes, &err)) {
        r->removed++;  // swapped for a link or file since the listing: deleted as itself
      } else {
        NoteError(r, err);
      }
      continue;
    }
    int err = 0;
    if (DeleteOpened(level.dir.handle.get(), level.dir.attributes, &err)) {
      r->removed++;
    } else {
      NoteError(r, err);
    }
    stack.pop_back();
  }
}

}  // namespace

RemoveResult Remove(const std::string& root, const std::string& rel) {
  RemoveResult r;
  Target t;
  int err = 0;
  if (rel.empty()) {
    NoteError(&r, EINVAL);  // never the root itself
    return r;
  }
  if (!nt_walk::OpenTarget(root, rel, &t, &err)) {
    if (err != ENOENT) NoteError(&r, err);
    return r;
  }
  Opened o;
  if (!OpenForDelete(t.parent.get(), t.name, &o, &err)) {
    if (err != ENOENT) NoteError(&r, err);
    return r;
  }
  if (o.directory && !o.reparse) {
    RemoveTree(std::move(o), &r);
  } else if (DeleteOpened(o.handle.get(), o.attributes, &err)) {
    r.removed++;
  } else {
    NoteError(&r, err);
  }
  return r;
}

bool Replace(const std::string& root, const std::string& rel, const std::string& data,
             unsigned /*mode: no permission bits on Windows; the file inherits its ACL*/,
             int* err) {
  RemoveResult removed = Remove(root, rel);
  if (!removed.ok) {
    *err = removed.err;
    return false;
  }
  Target t;
  if (rel.empty() || !nt_walk::OpenTarget(root, rel, &t, err)) {
    if (rel.empty()) *err = EINVAL;
    return false;
  }
  // FILE_CREATE: whatever appeared there since the removal is never written through.
  Opened o;
  if (!OpenAt(t.parent.get(), t.name, FILE_WRITE_DATA | FILE_READ_ATTRIBUTES | SYNCHRONIZE,
              nt_walk::kNonDirectoryFile, nt_walk::kCreate, &o, err, FILE_ATTRIBUTE_NORMAL)) {
    return false;
  }
  size_t done = 0;
  while (done < data.size()) {
    DWORD chunk = static_cast<DWORD>(std::min<size_t>(data.size() - done, 1 << 20));
    DWORD n = 0;
    if (!WriteFile(o.handle.get(), data.data() + done, chunk, &n, nullptr)) {
      *err = nt_walk::ErrnoOfWin32(GetLastError());
      return false;
    }
    if (n == 0) {
      *err = EIO;
      return false;
    }
    done += n;
  }
  return true;
}

}  // namespace fs_beneath
