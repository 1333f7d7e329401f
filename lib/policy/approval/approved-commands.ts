// SPDX-License-Identifier: MIT
// Session and always approvals of one exact network or destructive command. They answer only the
// identical command text (trimmed), and only when every risky category of the request was
// approved: never a prefix of it, never a wider command. The command still runs sandboxed.

/** The risks an approval of a command can cover. */
export const APPROVABLE_RISKS = ['network', 'destructive'] as const;

/** One approval: the exact text and the risks approved for it. */
export interface CommandApproval {
  command: string;
  risks: readonly string[];
}

/** The approvable risks among a request's categories, sorted and without duplicates. */
export function approvableRisks(categories: readonly string[]): string[] {
  return [...new Set(categories.filter((c) => (APPROVABLE_RISKS as readonly string[]).includes(c)))].sort();
}

/** Whether an approval in `list` covers `command` with every one of `needed`. */
export function coversCommand(list: readonly CommandApproval[], command: string, needed: readonly string[]): boolean {
  return list.some((a) => a.command === command && needed.every((r) => a.risks.includes(r)));
}

/** The in-memory approvals of an engine's session, per tool. */
export class SessionApprovals {
  private readonly byTool = new Map<string, CommandApproval[]>();

  /** Records (or widens the risks of) the approval of `command`. */
  add(toolName: string, command: string, risks: readonly string[]): void {
    const list = this.byTool.get(toolName) ?? [];
    const at = list.findIndex((a) => a.command === command);
    const merged = approvableRisks([...(at === -1 ? [] : (list[at] as CommandApproval).risks), ...risks]);
    if (at === -1) list.push({ command, risks: merged });
    else list[at] = { command, risks: merged };
    this.byTool.set(toolName, list);
  }

  /** The session approvals of a tool. */
  of(toolName: string): readonly CommandApproval[] {
    return this.byTool.get(toolName) ?? [];
  }
}
