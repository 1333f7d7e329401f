// SPDX-License-Identifier: MIT
// macOS probe. Until the seatbelt backend lands (see the macOS/Windows issue) it reports the
// platform and says that no native isolation is available here yet.
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>

#include "common/backend.h"

namespace backend {

status::Status Probe(ProbeResult* out) {
  struct utsname uts;
  if (uname(&uts) != 0) return status::Fail("internal_error", errno, "uname");
  out->platform = "darwin";
  out->arch = uts.machine;
  out->release = uts.release;
  out->uid = static_cast<long long>(geteuid());
  Fact f;
  f.name = "sandboxExec";
  f.attempted = access("/usr/bin/sandbox-exec", X_OK) == 0 ? true : false;
  f.ok = false;
  out->facts.push_back(f);
  return status::Ok();
}

}  // namespace backend
