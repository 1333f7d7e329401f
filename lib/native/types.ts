// SPDX-License-Identifier: MIT
// NativeBinding: the hand-maintained mirror of what native/common/addon.cc exports.

/** One capability the native probe tried for real. */
export interface NativeFact {
  attempted: boolean;
  ok: boolean;
  /** errno of the failing call (0 when it succeeded or was not tried). */
  errno: number;
  /** The call that failed, when one did. */
  syscall?: string;
  /** A numeric result, e.g. the Landlock ABI version. */
  value: number;
}

export interface NativeProbe {
  platform: string;
  arch: string;
  release: string;
  /** Effective uid, or -1 where that is not meaningful. */
  uid: number;
  facts: Record<string, NativeFact>;
}

export interface NativeBinding {
  probe(): Promise<NativeProbe>;
  probeSync(): NativeProbe;
}
