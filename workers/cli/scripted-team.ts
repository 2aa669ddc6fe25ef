import type { AgentSpec, ScriptStepShape } from '../../domain/schemas';

/**
 * The root spec `agents-kit run` uses when no model is configured: a deterministic scripted root that
 * spawns one sub-agent per name (each counts the words of its part with a tool and reports back), waits
 * for each, lists its team and answers. Same tools and control operations a model would use.
 */
export function scriptedTeam(task: string, agents: readonly string[]): AgentSpec {
  const spawns: ScriptStepShape[] = agents.map((name) => ({
    type: 'spawn',
    as: name,
    request: {
      name,
      task: `${name}: ${task}`,
      kernel: {
        type: 'scripted',
        turns: [
          [
            { type: 'tool', tool: 'word_count', input: { text: task } },
            { type: 'reply', text: `${name} looked at the task ({{last}} words)` },
          ],
        ],
      },
    },
  }));
  const waits: ScriptStepShape[] = agents.map((name) => ({ type: 'wait', on: [name], timeoutMs: 60_000 }));
  const answer: ScriptStepShape =
    agents.length > 0
      ? { type: 'reply', text: `done with ${agents.length} sub-agent(s): {{last}}` }
      : { type: 'reply', text: `(scripted) ${task}` };
  return {
    name: 'root',
    task,
    kernel: {
      type: 'scripted',
      turns: [[...spawns, ...waits, ...(agents.length > 0 ? [{ type: 'list' } as const] : []), answer]],
    },
  };
}
