// SPDX-License-Identifier: MIT
// Windows probe: tries each AppContainer layer for real (profile, capabilities attribute, a
// kill-on-close job), checks the firewall services that enforce container network isolation,
// and finally runs cmd.exe inside a container and checks its exit code.
#include <windows.h>

#include <string>

#include "binding/backend.h"
#include "windows/app_container.h"
#include "windows/launch.h"
#include "windows/wide.h"
#include "windows/win_error.h"

namespace backend {
namespace {

// A stable name: the probe reuses one profile instead of creating a new one per run.
const wchar_t kProbeContainer[] = L"zero-sandbox.probe";

Fact FromStatus(const char* name, const status::Status& s) {
  Fact f;
  f.name = name;
  f.attempted = true;
  f.ok = s.ok();
  // The failed call's own code, as what it is: an errno, a Win32 error or an HRESULT.
  f.sys_errno = s.sys_errno;
  f.win_kind = s.win_kind;
  f.win_error = s.win_error;
  if (!s.ok()) f.syscall = s.syscall;
  return f;
}

Fact NotTried(const char* name) {
  Fact f;
  f.name = name;
  return f;
}

std::string WindowsRelease() {
  // GetVersionEx lies without a manifest; RtlGetVersion (ntdll) reports the real build.
  typedef LONG(WINAPI * RtlGetVersionFn)(OSVERSIONINFOW*);
  HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
  if (ntdll == nullptr) return "";
  auto fn = reinterpret_cast<RtlGetVersionFn>(
      reinterpret_cast<void*>(GetProcAddress(ntdll, "RtlGetVersion")));
  if (fn == nullptr) return "";
  OSVERSIONINFOW info{};
  info.dwOSVersionInfoSize = sizeof(info);
  if (fn(&info) != 0) return "";
  return std::to_string(info.dwMajorVersion) + "." + std::to_string(info.dwMinorVersion) + "." +
         std::to_string(info.dwBuildNumber);
}

// Runs `cmd.exe /d /c exit 7` in the container and expects exit code 7 within ten seconds.
status::Status TrySpawn(app_container::Identity* identity) {
  wchar_t system_dir[MAX_PATH];
  UINT n = GetSystemDirectoryW(system_dir, MAX_PATH);
  if (n == 0 || n >= MAX_PATH) {
    DWORD err = GetLastError();
    return win_error::Win32("internal_error", err, "GetSystemDirectoryW");
  }
  std::string dir = wide::ToUtf8(std::wstring(system_dir, n));
  launch::Request request;
  request.command_line = "\"" + dir + "\\cmd.exe\" /d /c exit 7";
  request.cwd = dir;
  request.envp = {"SystemRoot=" + dir.substr(0, dir.rfind('\\'))};
  launch::Launched launched;
  status::Status s = launch::Launch(request, identity->capabilities(), &launched);
  if (!s.ok()) return s;
  DWORD wait = WaitForSingleObject(launched.process, 10000);
  DWORD code = 0;
  bool got = wait == WAIT_OBJECT_0 && GetExitCodeProcess(launched.process, &code);
  DWORD err = GetLastError();
  CloseHandle(launched.process);
  CloseHandle(launched.job);  // kill-on-close: nothing outlives the probe
  if (!got) return win_error::Win32("spawn_failed", err, "WaitForSingleObject(probe)");
  if (code != 7) {
    return status::Fail("spawn_failed", 0, "GetExitCodeProcess(probe)",
                        "cmd.exe in the container exited with " + std::to_string(code) + ", not 7");
  }
  return status::Ok();
}

// AppContainer network isolation is a set of WFP filters kept by the Windows Defender Firewall
// service (mpssvc) on the Base Filtering Engine: with either stopped, a container without the
// internetClient capability may still connect, so network deny could not be promised.
Fact FirewallFact() {
  Fact f;
  f.name = "firewallService";
  f.attempted = true;
  SC_HANDLE manager = OpenSCManagerW(nullptr, nullptr, SC_MANAGER_CONNECT);
  if (manager == nullptr) {
    f.win_kind = status::Status::WinKind::kWin32;
    f.win_error = GetLastError();
    f.syscall = "OpenSCManagerW";
    return f;
  }
  f.ok = true;
  for (const wchar_t* name : {L"BFE", L"mpssvc"}) {
    SC_HANDLE service = OpenServiceW(manager, name, SERVICE_QUERY_STATUS);
    SERVICE_STATUS state{};
    bool running = service != nullptr && QueryServiceStatus(service, &state) &&
                   state.dwCurrentState == SERVICE_RUNNING;
    DWORD err = GetLastError();
    if (service != nullptr) CloseServiceHandle(service);
    if (!running) {
      f.ok = false;
      if (service == nullptr) {
        f.win_kind = status::Status::WinKind::kWin32;
        f.win_error = err;
      }
      f.syscall = "QueryServiceStatus(" + wide::ToUtf8(name) + ")";
      break;
    }
  }
  CloseServiceHandle(manager);
  return f;
}

}  // namespace

status::Status Probe(ProbeResult* out) {
  out->platform = "win32";
  SYSTEM_INFO info;
  GetNativeSystemInfo(&info);
  out->arch = info.wProcessorArchitecture == PROCESSOR_ARCHITECTURE_ARM64 ? "arm64" : "x64";
  out->release = WindowsRelease();
  out->uid = -1;

  HANDLE job = nullptr;
  status::Status job_status = launch::CreateKillOnCloseJob(0, 0, &job);
  if (job != nullptr) CloseHandle(job);
  out->facts.push_back(FromStatus("jobObject", job_status));
  out->facts.push_back(FirewallFact());

  app_container::Identity identity;
  status::Status profile = identity.Open(kProbeContainer, L"zero-sandbox probe");
  out->facts.push_back(FromStatus("appContainerProfile", profile));
  if (!profile.ok()) {
    out->facts.push_back(NotTried("securityCapabilities"));
    out->facts.push_back(NotTried("appContainerSpawn"));
    return status::Ok();
  }
  // The capabilities attribute is exercised by the launch itself: it counts as tried once the
  // launch got past UpdateProcThreadAttribute, and as failed when that call failed.
  status::Status spawn = TrySpawn(&identity);
  const std::string& call = spawn.syscall;
  if (spawn.ok() || call.rfind("CreateProcessW", 0) == 0 || call.rfind("AssignProcess", 0) == 0 ||
      call.rfind("ResumeThread", 0) == 0 || call.rfind("WaitForSingleObject", 0) == 0 ||
      call.rfind("GetExitCodeProcess", 0) == 0 ||
      call.rfind("UpdateProcThreadAttribute(HANDLE", 0) == 0 ||
      call.rfind("CreateJobObject", 0) == 0 || call.rfind("SetInformationJobObject", 0) == 0) {
    out->facts.push_back(FromStatus("securityCapabilities", status::Ok()));
    out->facts.push_back(FromStatus("appContainerSpawn", spawn));
  } else if (call.rfind("UpdateProcThreadAttribute(SECURITY", 0) == 0) {
    out->facts.push_back(FromStatus("securityCapabilities", spawn));
    out->facts.push_back(NotTried("appContainerSpawn"));
  } else {
    out->facts.push_back(NotTried("securityCapabilities"));
    out->facts.push_back(FromStatus("appContainerSpawn", spawn));
  }
  return status::Ok();
}

}  // namespace backend
