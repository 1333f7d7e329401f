// SPDX-License-Identifier: MIT
// The AppContainer profile: create it or open the existing one, and hold its SID and capabilities.
#pragma once

#include <windows.h>

#include <string>
#include <vector>

#include "binding/status.h"

namespace app_container {

// The SID of the container `name` (FreeSid it), whether or not its profile exists.
status::Status DeriveSid(const std::wstring& name, PSID* out);
// Deletes the profile `name` (its folder and registry key); success when it does not exist.
status::Status DeleteProfile(const std::wstring& name);

// Owns the container SID (FreeSid) and the capability SIDs (LocalFree) for one launch.
class Identity {
 public:
  Identity() = default;
  ~Identity();
  Identity(const Identity&) = delete;
  Identity& operator=(const Identity&) = delete;

  PSID sid() const { return sid_; }
  // SECURITY_CAPABILITIES for PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES; valid while *this lives.
  SECURITY_CAPABILITIES* capabilities() { return &security_capabilities_; }

  // Creates the profile `name` or, when it already exists, derives the SID of the existing one.
  status::Status Open(const std::wstring& name, const std::wstring& display_name);
  // Converts each "S-1-15-3-…" string into a SID with SE_GROUP_ENABLED.
  status::Status SetCapabilities(const std::vector<std::string>& capability_sids);

 private:
  PSID sid_ = nullptr;
  std::vector<SID_AND_ATTRIBUTES> capability_list_;
  SECURITY_CAPABILITIES security_capabilities_{};
};

}  // namespace app_container
