import type { AgentSpec } from '../domain/schemas';
import type { Kernel } from './kernel';
import { ModelKernel } from './model-kernel';
import { ScriptedKernel } from './scripted-kernel';

/** The kernel that runs a thread's turns, chosen by its spec. Without one, a scripted echo of the task. */
export function kernelFor(spec: AgentSpec): Kernel {
  if (spec.kernel?.type === 'model') return new ModelKernel(spec, spec.kernel);
  return new ScriptedKernel(
    spec.kernel ?? { type: 'scripted', turns: [[{ type: 'reply', text: `(scripted) ${spec.task}` }]] },
  );
}
