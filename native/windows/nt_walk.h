// SPDX-License-Identifier: MIT
// The walking primitives of the Windows file verbs (fs_walk_windows.cc, fs_remove_windows.cc):
// every path is opened from its volume's root one component at a time, each with NtCreateFile
// relative to the directory handle before it (OBJECT_ATTRIBUTES.RootDirectory) and
// FILE_OPEN_REPARSE_POINT, so a junction, symlink or mount point is opened as itself, never
// through. A component on the way whose attributes carry FILE_ATTRIBUTE_REPARSE_POINT stops the
// walk (ELOOP), as O_NOFOLLOW does on POSIX: whatever another run swaps in, the next open is
// relative to the directory already held. Internal to native/windows; the API is
// binding/fs_beneath.h.
#pragma once

#include <windows.h>

#include <string>
#include <utility>
#include <vector>

#include "binding/fs_beneath.h"

namespace fs_beneath {
namespace nt_walk {

// Closes the handle it holds when it goes out of scope.
class Handle {
 public:
  Handle() = default;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept : h_(other.Release()) {}
  Handle& operator=(Handle&& other) noexcept {
    Reset(other.Release());
    return *this;
  }
  ~Handle() { Reset(nullptr); }
  void Reset(HANDLE h) {
    if (h_ != nullptr) CloseHandle(h_);
    h_ = h;
  }
  HANDLE get() const { return h_; }
  HANDLE Release() {
    HANDLE h = h_;
    h_ = nullptr;
    return h;
  }

 private:
  HANDLE h_ = nullptr;
};

// Access for directories walked through and listed.
inline constexpr ACCESS_MASK kWalkAccess =
    FILE_TRAVERSE | FILE_LIST_DIRECTORY | FILE_READ_ATTRIBUTES | SYNCHRONIZE;

// NtCreateFile's CreateOptions and CreateDisposition (winternl.h spells only some of them).
inline constexpr ULONG kDirectoryFile = 0x00000001;
inline constexpr ULONG kSynchronousIo = 0x00000020;
inline constexpr ULONG kNonDirectoryFile = 0x00000040;
inline constexpr ULONG kOpenReparsePoint = 0x00200000;
inline constexpr ULONG kOpen = 1;
inline constexpr ULONG kCreate = 2;

// The C runtime's errno (os.constants.errno on Windows) for an NTSTATUS, and for a Win32 error.
int ErrnoOfStatus(LONG status);
int ErrnoOfWin32(DWORD error);

// The volume root (an NT path, "\??\C:\" or "\??\UNC\server\share\") and the components of
// root/rel (UTF-8 byte strings); false for anything else (a relative path, a device path, a
// "." or ".." component, a stream name with ':', invalid UTF-8).
bool Split(const std::string& root, const std::string& rel, std::wstring* volume,
           std::vector<std::wstring>* parts);

// What one open gave: the handle and what the file system says of the object it is.
struct Opened {
  Handle handle;
  DWORD attributes = 0;
  // A junction, symlink or other reparse point (the handle is the reparse point itself).
  bool reparse = false;
  bool directory = false;
};

// Opens `name` relative to `dir` (or, with dir null, the NT path `name`) with `access`, `options`
// (FILE_OPEN_REPARSE_POINT and synchronous I/O are always added) and `disposition`. False and
// *err when it could not (ENOENT when missing). A reparse point is opened, not refused: callers
// that walk through it refuse it.
bool OpenAt(HANDLE dir, const std::wstring& name, ACCESS_MASK access, ULONG options,
            ULONG disposition, Opened* out, int* err, ULONG create_attributes = 0);

// Opens the directory volume/parts[0..count) with kWalkAccess, refusing a reparse point on the way
// or at the end (ELOOP).
bool OpenDir(const std::wstring& volume, const std::vector<std::wstring>& parts, size_t count,
             Handle* out, int* err);

// The parent directory of root/rel (opened) and the last component; an empty rel names the root
// (whose parent must then be a directory below the volume's root).
struct Target {
  Handle parent;
  std::wstring name;
};
bool OpenTarget(const std::string& root, const std::string& rel, Target* t, int* err);

// Every entry of an open directory (not "." or ".."), with its attributes, at most `max`.
bool ReadEntries(HANDLE dir, size_t max, std::vector<std::pair<std::wstring, DWORD>>* out,
                 int* err);

// The kind of an object from its attributes (a reparse point is a link).
Kind KindOf(DWORD attributes);

// UTF-16 name to the UTF-8 bytes the verbs answer with.
std::string Utf8(const std::wstring& name);

}  // namespace nt_walk
}  // namespace fs_beneath
