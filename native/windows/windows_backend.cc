// SPDX-License-Identifier: MIT
// backend::Spawn for Windows: AppContainer identity, ACL plan, a suspended CreateProcessW with
// PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES, then a kill-on-close job object before it runs.
#include <windows.h>

#include <string>
#include <vector>

#include "binding/backend.h"
#include "windows/app_container.h"
#include "windows/launch.h"
#include "windows/wide.h"
#include "windows/win_acl.h"

namespace backend {

status::Status Spawn(const SpawnSpec& spec, SpawnResult* out) {
  const WindowsSpec& ws = spec.windows_spec;
  if (ws.command_line.empty()) {
    return status::Fail("invalid_argument", 0, "Spawn", "windows_spec.command_line is empty");
  }
  app_container::Identity identity;
  status::Status s =
      identity.Open(wide::FromUtf8(ws.container_name), wide::FromUtf8(ws.display_name));
  if (!s.ok()) return s;
  s = identity.SetCapabilities(ws.capability_sids);
  if (!s.ok()) return s;
  s = win_acl::ApplyAclPlan(identity.sid(), ws.acl_kinds, ws.acl_paths, ws.acl_redo);
  if (!s.ok()) return s;

  launch::Request request;
  request.command_line = ws.command_line;
  request.cwd = spec.cwd;
  request.envp = spec.envp;
  for (int i = 0; i < 3; ++i) request.stdio[i] = spec.stdio[i];
  request.job_memory_bytes = ws.job_memory_bytes;
  request.job_process_limit = ws.job_process_limit;
  launch::Launched launched;
  s = launch::Launch(request, identity.capabilities(), &launched);
  if (!s.ok()) return s;
  out->pid = static_cast<long long>(launched.pid);
  out->process_handle = launched.process;
  out->job_handle = launched.job;
  return status::Ok();
}

}  // namespace backend
