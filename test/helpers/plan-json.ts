// Prints, as JSON, resolvePlan's answer for each case given as JSON in argv[2] (the plan, or the
// error's code and message), and whether the addon offers fsListRoots: the plan-root-walk test
// runs it with the addon as built and with one lacking that verb (ZERO_SANDBOX_BINDING).
import { HostFacts } from '../../lib/host-facts.js';
import { loadNative } from '../../lib/native/load.js';
import { resolvePlan } from '../../lib/sandbox/plan.js';

interface PlanCase {
  workspace: string;
  /** HOME of the environments the credential baseline is computed from. */
  home: string;
  allowWrite?: string[];
  denyRead?: string[];
  denyWrite?: string[];
}

const cases = JSON.parse(process.argv[2] as string) as PlanCase[];
const answers = cases.map((c) => {
  try {
    const options = { workspace: c.workspace, cwd: undefined, network: 'deny' as const, allowWrite: c.allowWrite ?? [], allowRead: [], denyRead: c.denyRead ?? [], denyReadIfAppears: [], denyWrite: c.denyWrite ?? [], envPass: [], limits: {}, timeoutMs: undefined };
    return { plan: resolvePlan({ argv: ['/bin/true'], options, envs: [{ HOME: c.home }], commandEnv: {}, runtimeWriteRoots: [], facts: new HostFacts() }) };
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    return { code, message };
  }
});
process.stdout.write(JSON.stringify({ verb: typeof loadNative().fsListRoots, answers }));
