// SPDX-License-Identifier: MIT
// ACL plan application and revert: no-follow handles, idempotent ACEs, snapshot and rollback.
#include "windows/win_acl.h"

#include <aclapi.h>

#include <cwchar>

#include "windows/wide.h"
#include "windows/win_error.h"

namespace win_acl {
namespace {

struct Rule {
  ACCESS_MODE mode;
  DWORD mask;
  DWORD inheritance;
};

// Allows use GRANT_ACCESS, which merges with the trustee's existing entries (SET_ACCESS would
// discard a deny ACE an earlier entry put on the same path for the same SID).
// FILE_DELETE_CHILD is never granted: deleting then needs DELETE on the object itself, which a
// deny ACE can take away (a parent's FILE_DELETE_CHILD would otherwise override it).
bool RuleFor(const std::string& kind, Rule* out) {
  const DWORD write_rights = FILE_WRITE_DATA | FILE_APPEND_DATA | FILE_WRITE_EA |
                             FILE_WRITE_ATTRIBUTES | DELETE | FILE_DELETE_CHILD | WRITE_DAC |
                             WRITE_OWNER;
  if (kind == "allow-read") {
    *out = {GRANT_ACCESS, FILE_GENERIC_READ | FILE_GENERIC_EXECUTE,
            SUB_CONTAINERS_AND_OBJECTS_INHERIT};
  } else if (kind == "allow-write") {
    *out = {GRANT_ACCESS, FILE_GENERIC_READ | FILE_GENERIC_WRITE | FILE_GENERIC_EXECUTE | DELETE,
            SUB_CONTAINERS_AND_OBJECTS_INHERIT};
  } else if (kind == "deny-write") {
    *out = {DENY_ACCESS, write_rights, SUB_CONTAINERS_AND_OBJECTS_INHERIT};
  } else if (kind == "deny-read") {
    *out = {DENY_ACCESS, FILE_READ_DATA | FILE_READ_EA | FILE_EXECUTE | DELETE,
            SUB_CONTAINERS_AND_OBJECTS_INHERIT};
  } else if (kind == "allow-traverse") {
    // Only the directory itself: lstat and realpath of a root's ancestors work, nothing is listed
    // or read (FILE_LIST_DIRECTORY and FILE_READ_DATA are the same bit and stay ungranted).
    *out = {GRANT_ACCESS, FILE_TRAVERSE | FILE_READ_ATTRIBUTES | READ_CONTROL | SYNCHRONIZE,
            NO_INHERITANCE};
  } else if (kind == "deny-delete") {
    // Only the directory itself: it cannot be renamed or removed, its contents stay writable.
    *out = {DENY_ACCESS, DELETE, NO_INHERITANCE};
  } else {
    return false;
  }
  return true;
}

// True when the DACL already holds an explicit ACE of this type and mask for the SID.
bool HasExplicitAce(PACL acl, PSID sid, BYTE type, DWORD mask) {
  if (acl == nullptr) return false;
  for (DWORD i = 0; i < acl->AceCount; ++i) {
    void* ace = nullptr;
    if (!GetAce(acl, i, &ace)) continue;
    ACE_HEADER* header = static_cast<ACE_HEADER*>(ace);
    if (header->AceType != type || (header->AceFlags & INHERITED_ACE) != 0) continue;
    // ACCESS_ALLOWED_ACE and ACCESS_DENIED_ACE share this layout.
    ACCESS_ALLOWED_ACE* typed = static_cast<ACCESS_ALLOWED_ACE*>(ace);
    if (typed->Mask == mask && EqualSid(reinterpret_cast<PSID>(&typed->SidStart), sid)) return true;
  }
  return false;
}

// Strips the \\?\ (or \\?\UNC\) prefix GetFinalPathNameByHandleW adds.
std::wstring WithoutVerbatimPrefix(const std::wstring& path) {
  if (path.rfind(L"\\\\?\\UNC\\", 0) == 0) return L"\\\\" + path.substr(8);
  if (path.rfind(L"\\\\?\\", 0) == 0) return path.substr(4);
  return path;
}

// Expands 8.3 short components (C:\Users\RUNNER~1, the usual TEMP on CI runners) to long names.
// GetFinalPathNameByHandleW reports long names, and a short name is not a reparse point, so the
// comparison below must not take one for a junction. Unchanged when the call fails.
std::wstring LongPath(const std::wstring& path) {
  DWORD need = GetLongPathNameW(path.c_str(), nullptr, 0);
  if (need == 0) return path;
  std::wstring out(need, L'\0');
  DWORD n = GetLongPathNameW(path.c_str(), &out[0], need);
  if (n == 0 || n >= need) return path;
  out.resize(n);
  return out;
}

struct Snapshot {
  HANDLE handle;
  PSECURITY_DESCRIPTOR descriptor;  // owns `dacl`
  PACL dacl;
};

status::Status Fail(const char* code, DWORD err, const std::string& call, const std::string& path,
                    const std::string& detail) {
  status::Status s = win_error::Win32(code, err, call + "(" + path + ")", detail, "acl");
  s.path = path;
  return s;
}

// Opens `path` for READ_CONTROL|WRITE_DAC without following a reparse point at any component.
// `optional`: a missing path is skipped; `best_effort`: also one whose ACL the user may not change.
status::Status OpenNoFollow(const std::string& path, bool optional, bool best_effort, HANDLE* out,
                            bool* skipped) {
  *skipped = false;
  bool ok = true;
  std::wstring wpath = wide::FromUtf8(path, &ok);
  if (!ok)
    return Fail("invalid_argument", 0, "MultiByteToWideChar", path, "path is not valid UTF-8");
  HANDLE h =
      CreateFileW(wpath.c_str(), READ_CONTROL | WRITE_DAC,
                  FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_EXISTING,
                  FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
  if (h == INVALID_HANDLE_VALUE) {
    DWORD err = GetLastError();
    bool missing = err == ERROR_FILE_NOT_FOUND || err == ERROR_PATH_NOT_FOUND;
    if ((optional && missing) || (best_effort && (missing || err == ERROR_ACCESS_DENIED))) {
      *skipped = true;
      return status::Ok();
    }
    return Fail("sandbox_unavailable", err, "CreateFileW", path,
                "cannot open the path to set its ACL");
  }
  BY_HANDLE_FILE_INFORMATION info;
  if (!GetFileInformationByHandle(h, &info)) {
    DWORD err = GetLastError();
    CloseHandle(h);
    return Fail("sandbox_unavailable", err, "GetFileInformationByHandle", path, "");
  }
  if ((info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0) {
    CloseHandle(h);
    return Fail("sandbox_unavailable", ERROR_REPARSE_ATTRIBUTE_CONFLICT, "CreateFileW", path,
                "the path is a symbolic link or junction; its target's ACL is not changed");
  }
  // A reparse point in a parent directory is followed by CreateFileW: compare the final path.
  std::vector<wchar_t> final_path(32768);
  DWORD n = GetFinalPathNameByHandleW(h, final_path.data(), static_cast<DWORD>(final_path.size()),
                                      FILE_NAME_NORMALIZED);
  if (n == 0 || n >= final_path.size()) {
    DWORD err = GetLastError();
    CloseHandle(h);
    return Fail("sandbox_unavailable", err, "GetFinalPathNameByHandleW", path, "");
  }
  std::wstring resolved = WithoutVerbatimPrefix(std::wstring(final_path.data(), n));
  if (_wcsicmp(resolved.c_str(), LongPath(wpath).c_str()) != 0) {
    CloseHandle(h);
    return Fail("sandbox_unavailable", ERROR_REPARSE_ATTRIBUTE_CONFLICT,
                "GetFinalPathNameByHandleW", path,
                "a parent directory is a symbolic link or junction (resolves to " +
                    wide::ToUtf8(resolved) + ")");
  }
  *out = h;
  return status::Ok();
}

status::Status ApplyOne(PSID sid, const Rule& rule, const std::string& path, HANDLE h, bool redo,
                        std::vector<Snapshot>* snapshots) {
  PACL old_dacl = nullptr;
  PSECURITY_DESCRIPTOR descriptor = nullptr;
  DWORD err = GetSecurityInfo(h, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, nullptr, nullptr,
                              &old_dacl, nullptr, &descriptor);
  if (err != ERROR_SUCCESS) return Fail("sandbox_unavailable", err, "GetSecurityInfo", path, "");
  BYTE type = rule.mode == DENY_ACCESS ? ACCESS_DENIED_ACE_TYPE : ACCESS_ALLOWED_ACE_TYPE;
  // Present already: applied by an earlier run, unless that run may have stopped while the system
  // was still propagating it below the path (`redo`): setting the same DACL again propagates it.
  if (!redo && HasExplicitAce(old_dacl, sid, type, rule.mask)) {
    LocalFree(descriptor);
    CloseHandle(h);
    return status::Ok();
  }
  EXPLICIT_ACCESS_W access{};
  access.grfAccessPermissions = rule.mask;
  access.grfAccessMode = rule.mode;
  access.grfInheritance = rule.inheritance;
  access.Trustee.TrusteeForm = TRUSTEE_IS_SID;
  access.Trustee.TrusteeType = TRUSTEE_IS_WELL_KNOWN_GROUP;
  access.Trustee.ptstrName = static_cast<LPWSTR>(sid);
  PACL new_dacl = nullptr;
  // SetEntriesInAclW keeps the canonical order: explicit denies before explicit allows.
  err = SetEntriesInAclW(1, &access, old_dacl, &new_dacl);
  if (err != ERROR_SUCCESS) {
    LocalFree(descriptor);
    return Fail("sandbox_unavailable", err, "SetEntriesInAclW", path, "");
  }
  err = SetSecurityInfo(h, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, nullptr, nullptr, new_dacl,
                        nullptr);
  LocalFree(new_dacl);
  if (err != ERROR_SUCCESS) {
    LocalFree(descriptor);
    return Fail("sandbox_unavailable", err, "SetSecurityInfo", path, "");
  }
  snapshots->push_back(Snapshot{h, descriptor, old_dacl});
  return status::Ok();
}

// Removes every explicit ACE naming `sid` from the DACL of `h` (the container SID is ours: no other
// software writes ACEs for it). Setting the DACL propagates the removal of what it passed on below.
status::Status StripSid(PSID sid, const std::string& path, HANDLE h, size_t* changed) {
  PACL old_dacl = nullptr;
  PSECURITY_DESCRIPTOR descriptor = nullptr;
  DWORD err = GetSecurityInfo(h, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, nullptr, nullptr,
                              &old_dacl, nullptr, &descriptor);
  if (err != ERROR_SUCCESS) return Fail("sandbox_unavailable", err, "GetSecurityInfo", path, "");
  std::vector<void*> kept;
  DWORD size = sizeof(ACL);
  bool removed = false;
  for (DWORD i = 0; old_dacl != nullptr && i < old_dacl->AceCount; ++i) {
    void* ace = nullptr;
    if (!GetAce(old_dacl, i, &ace)) continue;
    ACE_HEADER* header = static_cast<ACE_HEADER*>(ace);
    bool typed =
        header->AceType == ACCESS_ALLOWED_ACE_TYPE || header->AceType == ACCESS_DENIED_ACE_TYPE;
    // ACCESS_ALLOWED_ACE and ACCESS_DENIED_ACE share this layout.
    if (typed && (header->AceFlags & INHERITED_ACE) == 0 &&
        EqualSid(reinterpret_cast<PSID>(&static_cast<ACCESS_ALLOWED_ACE*>(ace)->SidStart), sid)) {
      removed = true;
      continue;
    }
    kept.push_back(ace);
    size += header->AceSize;
  }
  if (!removed) {
    LocalFree(descriptor);
    return status::Ok();
  }
  std::vector<BYTE> buffer(size);
  PACL new_dacl = reinterpret_cast<PACL>(buffer.data());
  bool ok = InitializeAcl(new_dacl, size, ACL_REVISION_DS) != 0;
  for (size_t i = 0; ok && i < kept.size(); ++i) {
    ok = AddAce(new_dacl, ACL_REVISION_DS, MAXDWORD, kept[i],
                static_cast<ACE_HEADER*>(kept[i])->AceSize) != 0;
  }
  err = ok ? ERROR_SUCCESS : GetLastError();
  LocalFree(descriptor);
  if (!ok) return Fail("sandbox_unavailable", err, "AddAce", path, "");
  err = SetSecurityInfo(h, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, nullptr, nullptr, new_dacl,
                        nullptr);
  if (err != ERROR_SUCCESS) return Fail("sandbox_unavailable", err, "SetSecurityInfo", path, "");
  ++*changed;
  return status::Ok();
}

}  // namespace

status::Status ApplyAclPlan(PSID sid, const std::vector<std::string>& kinds,
                            const std::vector<std::string>& paths, bool redo) {
  if (kinds.size() != paths.size()) {
    return status::Fail("invalid_argument", 0, "ApplyAclPlan",
                        "acl kinds and paths differ in length", "acl");
  }
  std::vector<Snapshot> snapshots;
  status::Status result = status::Ok();
  for (size_t i = 0; i < kinds.size() && result.ok(); ++i) {
    std::string kind = kinds[i];
    bool optional = !kind.empty() && kind.back() == '?';
    bool best_effort = !kind.empty() && kind.back() == '~';
    if (optional || best_effort) kind.pop_back();
    Rule rule;
    if (!RuleFor(kind, &rule)) {
      result = Fail("invalid_argument", 0, "ApplyAclPlan", paths[i], "unknown ACL kind " + kind);
      break;
    }
    HANDLE h = INVALID_HANDLE_VALUE;
    bool skipped = false;
    result = OpenNoFollow(paths[i], optional, best_effort, &h, &skipped);
    if (!result.ok() || skipped) continue;
    result = ApplyOne(sid, rule, paths[i], h, redo, &snapshots);
    if (!result.ok()) CloseHandle(h);
  }
  // Roll back every DACL changed by this call when one entry failed, newest first.
  for (auto it = snapshots.rbegin(); it != snapshots.rend(); ++it) {
    if (!result.ok()) {
      SetSecurityInfo(it->handle, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, nullptr, nullptr,
                      it->dacl, nullptr);
    }
    LocalFree(it->descriptor);
    CloseHandle(it->handle);
  }
  return result;
}

status::Status RevertAclPlan(PSID sid, const std::vector<std::string>& paths, size_t* changed) {
  *changed = 0;
  status::Status first = status::Ok();
  for (const std::string& path : paths) {
    HANDLE h = INVALID_HANDLE_VALUE;
    bool skipped = false;
    // A missing path has nothing left to revert; a link or junction now at the path is not
    // followed (the ACE, if any, stays on whatever it was set on and the failure is reported).
    status::Status s = OpenNoFollow(path, true, false, &h, &skipped);
    if (s.ok() && !skipped) {
      s = StripSid(sid, path, h, changed);
      CloseHandle(h);
    }
    // Every path is tried; the first failure is reported and the journal keeps the entries.
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

}  // namespace win_acl
