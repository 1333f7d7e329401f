// SPDX-License-Identifier: MIT
// Handle-relative, reparse-point-refusing opens (see nt_walk.h).
#include "windows/nt_walk.h"

#include <winternl.h>

#include <errno.h>

#include "windows/wide.h"

namespace fs_beneath {
namespace nt_walk {
namespace {

// ntdll's entry points, looked up once (ntdll is in every process; no import library needed).
using NtCreateFileFn = LONG(NTAPI*)(PHANDLE, ACCESS_MASK, POBJECT_ATTRIBUTES, PIO_STATUS_BLOCK,
                                    PLARGE_INTEGER, ULONG, ULONG, ULONG, ULONG, PVOID, ULONG);
using NtQueryDirectoryFileFn = LONG(NTAPI*)(HANDLE, HANDLE, PVOID, PVOID, PIO_STATUS_BLOCK, PVOID,
                                            ULONG, int, BOOLEAN, PUNICODE_STRING, BOOLEAN);

struct Ntdll {
  NtCreateFileFn create = nullptr;
  NtQueryDirectoryFileFn query_directory = nullptr;
};

const Ntdll& Api() {
  static const Ntdll api = [] {
    Ntdll a;
    HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
    if (ntdll == nullptr) return a;
    a.create = reinterpret_cast<NtCreateFileFn>(
        reinterpret_cast<void*>(GetProcAddress(ntdll, "NtCreateFile")));
    a.query_directory = reinterpret_cast<NtQueryDirectoryFileFn>(
        reinterpret_cast<void*>(GetProcAddress(ntdll, "NtQueryDirectoryFile")));
    return a;
  }();
  return api;
}

// FILE_DIRECTORY_INFORMATION (FileDirectoryInformation, class 1), as ntifs.h lays it out.
struct DirectoryEntry {
  ULONG next;
  ULONG index;
  LARGE_INTEGER creation, access, write, change, end_of_file, allocation;
  ULONG attributes;
  ULONG name_bytes;
  WCHAR name[1];
};
constexpr int kFileDirectoryInformation = 1;
constexpr LONG kNoMoreFiles = static_cast<LONG>(0x80000006);
constexpr ULONG kObjCaseInsensitive = 0x00000040;

bool SameName(const WCHAR* a, size_t a_len, const std::wstring& b) {
  return CompareStringOrdinal(a, static_cast<int>(a_len), b.data(), static_cast<int>(b.size()),
                              TRUE) == CSTR_EQUAL;
}

// The listing's entry for `name` in `dir` (its attributes), from a query with `name` as mask;
// false when the query fails or answers for another name.
bool ListedAttributes(HANDLE dir, const std::wstring& name, DWORD* attributes) {
  const Ntdll& api = Api();
  alignas(8) unsigned char buf[sizeof(DirectoryEntry) + 520 * sizeof(WCHAR)];
  UNICODE_STRING mask;
  mask.Buffer = const_cast<PWSTR>(name.c_str());
  mask.Length = mask.MaximumLength = static_cast<USHORT>(name.size() * sizeof(WCHAR));
  IO_STATUS_BLOCK io;
  LONG status = api.query_directory(dir, nullptr, nullptr, nullptr, &io, buf, sizeof buf,
                                    kFileDirectoryInformation, TRUE, &mask, TRUE);
  if (status < 0) return false;
  const auto* entry = reinterpret_cast<const DirectoryEntry*>(buf);
  if (!SameName(entry->name, entry->name_bytes / sizeof(WCHAR), name)) return false;
  *attributes = entry->attributes;
  return true;
}

// Whether the listing of `dir` shows `name` as a reparse point. Windows answers the same there as
// on the handle; Wine answers for a Unix symlink to a directory only here (its handles are the
// link's target), so asking both refuses such a link under Wine as Windows refuses a junction. A
// directory handle keeps the mask of its first query (Windows and Wine): when `dir` was queried
// before, the answer is for another name, and a new handle of the same directory (opened
// relative to it with an empty name) is asked. An entry that cannot be confirmed is refused.
bool ListedAsReparse(HANDLE dir, const std::wstring& name) {
  const Ntdll& api = Api();
  if (api.query_directory == nullptr) return false;  // the handle's attributes decide alone
  DWORD attributes = 0;
  if (!ListedAttributes(dir, name, &attributes)) {
    UNICODE_STRING empty = {0, 0, nullptr};
    OBJECT_ATTRIBUTES oa;
    InitializeObjectAttributes(&oa, &empty, 0, dir, nullptr);
    IO_STATUS_BLOCK io;
    HANDLE fresh = nullptr;
    LONG status = api.create(&fresh, FILE_LIST_DIRECTORY | SYNCHRONIZE, &oa, &io, nullptr, 0,
                             FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, kOpen,
                             kDirectoryFile | kOpenReparsePoint | kSynchronousIo, nullptr, 0);
    if (status < 0) return true;
    Handle again;
    again.Reset(fresh);
    if (!ListedAttributes(again.get(), name, &attributes)) return true;
  }
  return (attributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0;
}

bool IsDriveLetter(wchar_t c) { return (c >= L'A' && c <= L'Z') || (c >= L'a' && c <= L'z'); }

bool IsSeparator(wchar_t c) { return c == L'\\' || c == L'/'; }

// Appends the components of `path` from `start`; false for ".", ".." or a stream name.
bool AppendParts(const std::wstring& path, size_t start, std::vector<std::wstring>* parts) {
  while (start < path.size()) {
    size_t end = start;
    while (end < path.size() && !IsSeparator(path[end])) ++end;
    std::wstring part = path.substr(start, end - start);
    start = end + 1;
    if (part.empty()) continue;  // "C:\a\\b" and a trailing separator name the same path
    if (part == L"." || part == L".." || part.find(L':') != std::wstring::npos ||
        part.find(L'\0') != std::wstring::npos) {
      return false;
    }
    parts->push_back(std::move(part));
  }
  return true;
}

}  // namespace

int ErrnoOfStatus(LONG status) {
  switch (static_cast<ULONG>(status)) {
    case 0xC0000034:  // STATUS_OBJECT_NAME_NOT_FOUND
    case 0xC000003A:  // STATUS_OBJECT_PATH_NOT_FOUND
    case 0xC000000F:  // STATUS_NO_SUCH_FILE
    case 0xC0000056:  // STATUS_DELETE_PENDING: already on its way out
      return ENOENT;
    case 0xC0000103:  // STATUS_NOT_A_DIRECTORY
      return ENOTDIR;
    case 0xC00000BA:  // STATUS_FILE_IS_A_DIRECTORY
      return EISDIR;
    case 0xC0000035:  // STATUS_OBJECT_NAME_COLLISION
      return EEXIST;
    case 0xC0000022:  // STATUS_ACCESS_DENIED
    case 0xC0000121:  // STATUS_CANNOT_DELETE
      return EACCES;
    case 0xC0000043:  // STATUS_SHARING_VIOLATION
      return EBUSY;
    case 0xC0000101:  // STATUS_DIRECTORY_NOT_EMPTY
      return ENOTEMPTY;
    case 0xC0000033:  // STATUS_OBJECT_NAME_INVALID
    case 0xC000000D:  // STATUS_INVALID_PARAMETER
      return EINVAL;
    case 0xC0000106:  // STATUS_NAME_TOO_LONG
      return ENAMETOOLONG;
    default:
      return EIO;
  }
}

int ErrnoOfWin32(DWORD error) {
  switch (error) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
      return ENOENT;
    case ERROR_ACCESS_DENIED:
      return EACCES;
    case ERROR_SHARING_VIOLATION:
      return EBUSY;
    case ERROR_DIR_NOT_EMPTY:
      return ENOTEMPTY;
    case ERROR_INVALID_PARAMETER:
      return EINVAL;
    case ERROR_DISK_FULL:
      return ENOSPC;
    default:
      return EIO;
  }
}

bool Split(const std::string& root, const std::string& rel, std::wstring* volume,
           std::vector<std::wstring>* parts) {
  bool ok_root = false;
  bool ok_rel = false;
  std::wstring r = wide::FromUtf8(root, &ok_root);
  std::wstring rest = wide::FromUtf8(rel, &ok_rel);
  if (!ok_root || !ok_rel || r.empty()) return false;
  // "\\?\" (no normalization asked) names the same drive or share as the plain form.
  if (r.size() >= 4 && r[0] == L'\\' && r[1] == L'\\' && r[2] == L'?' && r[3] == L'\\') {
    r = r.compare(4, 4, L"UNC\\") == 0 ? L"\\\\" + r.substr(8) : r.substr(4);
  }
  size_t start = 0;
  if (r.size() >= 3 && IsDriveLetter(r[0]) && r[1] == L':' && IsSeparator(r[2])) {
    *volume = std::wstring(L"\\??\\") + r[0] + L":\\";
    start = 3;
  } else if (r.size() > 2 && IsSeparator(r[0]) && IsSeparator(r[1]) && r[2] != L'?' &&
             r[2] != L'.') {
    std::vector<std::wstring> share;
    size_t pos = 2;
    for (int i = 0; i < 2; ++i) {
      size_t end = pos;
      while (end < r.size() && !IsSeparator(r[end])) ++end;
      if (end == pos) return false;
      share.push_back(r.substr(pos, end - pos));
      pos = end + 1;
    }
    *volume = L"\\??\\UNC\\" + share[0] + L"\\" + share[1] + L"\\";
    start = pos;
  } else {
    return false;
  }
  parts->clear();
  if (!AppendParts(r, start, parts)) return false;
  if (!rest.empty() && IsSeparator(rest[0])) return false;  // rel is relative
  return AppendParts(rest, 0, parts);
}

bool OpenAt(HANDLE dir, const std::wstring& name, ACCESS_MASK access, ULONG options,
            ULONG disposition, Opened* out, int* err, ULONG create_attributes) {
  const Ntdll& api = Api();
  if (api.create == nullptr || name.size() * sizeof(WCHAR) > 0xFFF0) {
    *err = api.create == nullptr ? ENOSYS : ENAMETOOLONG;
    return false;
  }
  UNICODE_STRING u;
  u.Buffer = const_cast<PWSTR>(name.c_str());
  u.Length = u.MaximumLength = static_cast<USHORT>(name.size() * sizeof(WCHAR));
  OBJECT_ATTRIBUTES oa;
  // Case-insensitive as Win32 opens are: ".GIT" is the entry host git opens as ".git".
  InitializeObjectAttributes(&oa, &u, kObjCaseInsensitive, dir, nullptr);
  IO_STATUS_BLOCK io;
  HANDLE h = nullptr;
  LONG status = api.create(&h, access, &oa, &io, nullptr, create_attributes,
                           FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, disposition,
                           options | kOpenReparsePoint | kSynchronousIo, nullptr, 0);
  if (status < 0) {
    *err = ErrnoOfStatus(status);
    return false;
  }
  out->handle.Reset(h);
  FILE_BASIC_INFO basic;
  if (!GetFileInformationByHandleEx(h, FileBasicInfo, &basic, sizeof basic)) {
    *err = ErrnoOfWin32(GetLastError());
    out->handle.Reset(nullptr);
    return false;
  }
  out->attributes = basic.FileAttributes;
  out->reparse = (basic.FileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0 ||
                 (dir != nullptr && ListedAsReparse(dir, name));
  if (out->reparse) out->attributes |= FILE_ATTRIBUTE_REPARSE_POINT;
  out->directory = (basic.FileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0;
  return true;
}

bool OpenDir(const std::wstring& volume, const std::vector<std::wstring>& parts, size_t count,
             Handle* out, int* err) {
  Opened cur;
  // The volume's root itself is opened by its NT path: nothing above it can be swapped.
  if (!OpenAt(nullptr, volume, kWalkAccess, kDirectoryFile, kOpen, &cur, err)) return false;
  for (size_t i = 0; i < count; ++i) {
    Opened next;
    if (!OpenAt(cur.handle.get(), parts[i], kWalkAccess, kDirectoryFile, kOpen, &next, err)) {
      return false;
    }
    if (next.reparse) {
      *err = ELOOP;
      return false;
    }
    cur.handle = std::move(next.handle);
  }
  *out = std::move(cur.handle);
  return true;
}

bool OpenTarget(const std::string& root, const std::string& rel, Target* t, int* err) {
  std::wstring volume;
  std::vector<std::wstring> parts;
  if (!Split(root, rel, &volume, &parts) || parts.empty()) {
    *err = EINVAL;
    return false;
  }
  t->name = parts.back();
  return OpenDir(volume, parts, parts.size() - 1, &t->parent, err);
}

bool ReadEntries(HANDLE dir, size_t max, std::vector<std::pair<std::wstring, DWORD>>* out,
                 int* err) {
  const Ntdll& api = Api();
  if (api.query_directory == nullptr) {
    *err = ENOSYS;
    return false;
  }
  std::vector<unsigned char> buf(64 * 1024);
  for (BOOLEAN restart = TRUE;; restart = FALSE) {
    IO_STATUS_BLOCK io;
    LONG status = api.query_directory(dir, nullptr, nullptr, nullptr, &io, buf.data(),
                                      static_cast<ULONG>(buf.size()), kFileDirectoryInformation,
                                      FALSE, nullptr, restart);
    if (status == kNoMoreFiles) return true;
    if (status < 0) {
      *err = ErrnoOfStatus(status);
      return false;
    }
    for (size_t at = 0;;) {
      const auto* e = reinterpret_cast<const DirectoryEntry*>(buf.data() + at);
      std::wstring name(e->name, e->name_bytes / sizeof(WCHAR));
      if (name != L"." && name != L"..") {
        if (out->size() >= max) return true;
        out->emplace_back(std::move(name), e->attributes);
      }
      if (e->next == 0) break;
      at += e->next;
    }
  }
}

Kind KindOf(DWORD attributes) {
  if ((attributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0) return Kind::kLink;
  if ((attributes & FILE_ATTRIBUTE_DIRECTORY) != 0) return Kind::kDir;
  if ((attributes & FILE_ATTRIBUTE_DEVICE) != 0) return Kind::kOther;
  return Kind::kFile;
}

std::string Utf8(const std::wstring& name) { return wide::ToUtf8(name); }

}  // namespace nt_walk
}  // namespace fs_beneath
