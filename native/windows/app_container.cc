// SPDX-License-Identifier: MIT
// AppContainer profile creation (userenv) and capability SIDs for the launch attribute.
#include "windows/app_container.h"

#include <sddl.h>
#include <userenv.h>

#include "windows/wide.h"

namespace app_container {

Identity::~Identity() {
  for (SID_AND_ATTRIBUTES& cap : capability_list_) LocalFree(cap.Sid);
  if (sid_ != nullptr) FreeSid(sid_);
}

status::Status Identity::Open(const std::wstring& name, const std::wstring& display_name) {
  if (name.empty() || name.size() > 64) {
    return status::Fail("invalid_argument", 0, "CreateAppContainerProfile",
                        "container name must have 1 to 64 characters", "appcontainer");
  }
  HRESULT hr = CreateAppContainerProfile(name.c_str(), display_name.c_str(), display_name.c_str(),
                                         nullptr, 0, &sid_);
  if (hr == HRESULT_FROM_WIN32(ERROR_ALREADY_EXISTS)) {
    // The profile persists per workspace; a second run opens it by deriving the same SID.
    hr = DeriveAppContainerSidFromAppContainerName(name.c_str(), &sid_);
    if (FAILED(hr)) {
      sid_ = nullptr;
      return status::Fail("sandbox_unavailable", HRESULT_CODE(hr),
                          "DeriveAppContainerSidFromAppContainerName(" + wide::ToUtf8(name) + ")",
                          "the AppContainer profile exists but its SID cannot be derived",
                          "appcontainer");
    }
  } else if (FAILED(hr)) {
    sid_ = nullptr;
    return status::Fail("sandbox_unavailable", HRESULT_CODE(hr),
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
      return status::Fail("invalid_argument", static_cast<int>(err),
                          "ConvertStringSidToSidW(" + text + ")", "not a capability SID",
                          "appcontainer");
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
