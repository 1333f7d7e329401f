// SPDX-License-Identifier: MIT
// AppContainer profile creation (userenv) and capability SIDs for the launch attribute.
#include "windows/app_container.h"

#include <sddl.h>

#include "windows/wide.h"
#include "windows/win_error.h"

namespace app_container {
namespace {

using CreateProfileFn = HRESULT(WINAPI*)(PCWSTR, PCWSTR, PCWSTR, PSID_AND_ATTRIBUTES, DWORD, PSID*);
using DeriveSidFn = HRESULT(WINAPI*)(PCWSTR, PSID*);
using DeleteProfileFn = HRESULT(WINAPI*)(PCWSTR);

struct Userenv {
  CreateProfileFn create = nullptr;
  DeriveSidFn derive = nullptr;
  DeleteProfileFn remove = nullptr;
};

// The AppContainer functions are looked up at run time instead of imported: a Windows without
// them (before 8) then reports the layer as missing instead of failing to load the addon.
// Wine exports them as stubs that abort the whole process when called, so under Wine (ntdll
// exports wine_get_version) they are never called and the layer is reported as missing: the
// backend refuses instead of crashing node or running the command outside a container.
status::Status LoadUserenv(Userenv* out) {
  HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
  if (ntdll != nullptr && GetProcAddress(ntdll, "wine_get_version") != nullptr) {
    return status::Fail("sandbox_unavailable", 0, "CreateAppContainerProfile(Wine stub)",
                        "this is Wine, whose userenv implements no AppContainer (its "
                        "CreateAppContainerProfile is a stub that aborts the process)",
                        "appcontainer");
  }
  HMODULE userenv = LoadLibraryExW(L"userenv.dll", nullptr, LOAD_LIBRARY_SEARCH_SYSTEM32);
  if (userenv == nullptr) {
    return win_error::Win32("sandbox_unavailable", GetLastError(), "LoadLibraryExW(userenv.dll)",
                            "userenv.dll cannot be loaded", "appcontainer");
  }
  // The module stays loaded for the life of the process (no FreeLibrary): these pointers are
  // used by every later launch.
  out->create = reinterpret_cast<CreateProfileFn>(
      reinterpret_cast<void*>(GetProcAddress(userenv, "CreateAppContainerProfile")));
  out->derive = reinterpret_cast<DeriveSidFn>(reinterpret_cast<void*>(
      GetProcAddress(userenv, "DeriveAppContainerSidFromAppContainerName")));
  out->remove = reinterpret_cast<DeleteProfileFn>(
      reinterpret_cast<void*>(GetProcAddress(userenv, "DeleteAppContainerProfile")));
  if (out->create == nullptr || out->derive == nullptr || out->remove == nullptr) {
    return win_error::Win32(
        "sandbox_unavailable", ERROR_PROC_NOT_FOUND, "GetProcAddress(CreateAppContainerProfile)",
        "this Windows has no AppContainer API (Windows 8 or later is required)", "appcontainer");
  }
  return status::Ok();
}

// Checks the profile name `call` takes and loads userenv's functions.
status::Status Prepare(const std::wstring& name, const char* call, Userenv* out) {
  if (name.empty() || name.size() > 64) {
    return status::Fail("invalid_argument", 0, call, "container name must have 1 to 64 characters",
                        "appcontainer");
  }
  return LoadUserenv(out);
}

}  // namespace

status::Status DeriveSid(const std::wstring& name, PSID* out) {
  *out = nullptr;
  Userenv userenv;
  status::Status loaded = Prepare(name, "DeriveAppContainerSidFromAppContainerName", &userenv);
  if (!loaded.ok()) return loaded;
  HRESULT hr = userenv.derive(name.c_str(), out);
  if (FAILED(hr)) {
    *out = nullptr;
    return win_error::Hresult(
        "sandbox_unavailable", hr,
        "DeriveAppContainerSidFromAppContainerName(" + wide::ToUtf8(name) + ")", "",
        "appcontainer");
  }
  return status::Ok();
}

status::Status DeleteProfile(const std::wstring& name) {
  Userenv userenv;
  status::Status loaded = Prepare(name, "DeleteAppContainerProfile", &userenv);
  if (!loaded.ok()) return loaded;
  // A profile already gone is success: the call is documented to succeed then too.
  HRESULT hr = userenv.remove(name.c_str());
  if (FAILED(hr) && hr != HRESULT_FROM_WIN32(ERROR_NOT_FOUND) &&
      hr != HRESULT_FROM_WIN32(ERROR_FILE_NOT_FOUND)) {
    return win_error::Hresult("sandbox_unavailable", hr,
                              "DeleteAppContainerProfile(" + wide::ToUtf8(name) + ")", "",
                              "appcontainer");
  }
  return status::Ok();
}

Identity::~Identity() {
  for (SID_AND_ATTRIBUTES& cap : capability_list_) LocalFree(cap.Sid);
  if (sid_ != nullptr) FreeSid(sid_);
}

status::Status Identity::Open(const std::wstring& name, const std::wstring& display_name) {
  Userenv userenv;
  status::Status loaded = Prepare(name, "CreateAppContainerProfile", &userenv);
  if (!loaded.ok()) return loaded;
  HRESULT hr =
      userenv.create(name.c_str(), display_name.c_str(), display_name.c_str(), nullptr, 0, &sid_);
  if (hr == HRESULT_FROM_WIN32(ERROR_ALREADY_EXISTS)) {
    // The profile persists per workspace; a second run opens it by deriving the same SID.
    hr = userenv.derive(name.c_str(), &sid_);
    if (FAILED(hr)) {
      sid_ = nullptr;
      return win_error::Hresult(
          "sandbox_unavailable", hr,
          "DeriveAppContainerSidFromAppContainerName(" + wide::ToUtf8(name) + ")",
          "the AppContainer profile exists but its SID cannot be derived", "appcontainer");
    }
  } else if (FAILED(hr)) {
    sid_ = nullptr;
    return win_error::Hresult("sandbox_unavailable", hr,
                              "CreateAppContainerProfile(" + wide::ToUtf8(name) + ")",
                              "AppContainer profiles cannot be created for this user (Windows 8 or "
                              "later with a loaded user profile is required)",
                              "appcontainer");
  }
  security_capabilities_.AppContainerSid = sid_;
  return status::Ok();
}

status::Status Identity::SetCapabilities(const std::vector<std::string>& capability_sids) {
  for (const std::string& text : capability_sids) {
    PSID cap = nullptr;
    std::wstring wtext = wide::FromUtf8(text);
    if (!ConvertStringSidToSidW(wtext.c_str(), &cap)) {
      DWORD err = GetLastError();
      return win_error::Win32("invalid_argument", err, "ConvertStringSidToSidW(" + text + ")",
                              "not a capability SID", "appcontainer");
    }
    SID_AND_ATTRIBUTES entry;
    entry.Sid = cap;
    entry.Attributes = SE_GROUP_ENABLED;
    capability_list_.push_back(entry);
  }
  security_capabilities_.Capabilities =
      capability_list_.empty() ? nullptr : capability_list_.data();
  security_capabilities_.CapabilityCount = static_cast<DWORD>(capability_list_.size());
  return status::Ok();
}

}  // namespace app_container
