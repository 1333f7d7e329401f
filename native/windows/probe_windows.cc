// SPDX-License-Identifier: MIT
// Windows probe. Until the AppContainer backend lands (see the macOS/Windows issue) it reports the
// platform and says that no native isolation is available here yet.
#include <windows.h>

#include "common/backend.h"

namespace backend {

status::Status Probe(ProbeResult* out) {
  out->platform = "win32";
  SYSTEM_INFO info;
  GetNativeSystemInfo(&info);
  out->arch = info.wProcessorArchitecture == PROCESSOR_ARCHITECTURE_ARM64 ? "arm64" : "x64";
  out->release = "";
  out->uid = -1;
  Fact f;
  f.name = "appContainer";
  f.attempted = false;
  out->facts.push_back(f);
  return status::Ok();
}

}  // namespace backend
