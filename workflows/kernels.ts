import type { AgentSpec } from '../domain/schemas';
import type { Kernel } from './kernel';
import { ModelKernel } from './model-kernel';
import { ScriptedKernel } from './scripted-kernel';

/**
 * Whether a thread's kernel calls a model, so spends tokens as it goes and starts its turns with an
 * allowance (a scripted reply's tokens are asked for when the reply is reached: `chargeReported`).
 */
export const usesModelKernel = (spec: AgentSpec): boolean => spec.kernel?.type === 'model';

/** The kernel that runs a thread's turns, chosen by its spec. Without one, a scripted echo of the task. */
export function kernelFor(spec: AgentSpec, features: { transcriptDelta?: boolean } = {}): Kernel {
  if (spec.kernel?.type === 'model') return new ModelKernel(spec, spec.kernel, features);
  return new ScriptedKernel(
    spec.kernel ?? { type: 'scripted', turns: [[{ type: 'reply', text: `(scripted) ${spec.task}` }]] },
  );
}
