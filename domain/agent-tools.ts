import { z } from 'zod';
import { ThreadName } from './schemas';

/**
 * The agent-control tools a model sees (SPEC S4): names, descriptions and zod inputs. The same schemas
 * describe the tools to the provider (as JSON Schema) and parse the model's calls in workflow code.
 */
export const agentToolInputs = {
  spawn_agent: z
    .object({
      task: z.string().min(1).describe('What the new sub-agent must do, self-contained.'),
      name: ThreadName.optional().describe('Short lowercase name, unique among your live children.'),
      instructions: z.string().optional().describe('Extra system instructions for the sub-agent.'),
      tools: z.array(z.string()).optional().describe('Tools the sub-agent may use (a subset of yours).'),
      fork: z
        .enum(['none', 'full', 'last_turn'])
        .optional()
        .describe('How much of your conversation the sub-agent starts with.'),
    })
    .strict(),
  send_agent_message: z
    .object({
      recipient: z
        .string()
        .describe('Thread id (thread_…) of your parent, a descendant, or, for the root, any agent.'),
      content: z.string().min(1),
      trigger_turn: z.boolean().optional().describe('Start a turn on an idle recipient now.'),
    })
    .strict(),
  wait_agents: z
    .object({
      ids: z.array(z.string()).min(1).describe('Thread ids to wait for.'),
      timeout_ms: z
        .number()
        .int()
        .min(0)
        .max(3_600_000)
        .optional()
        .describe('Default 30000; 0 returns a snapshot.'),
    })
    .strict(),
  list_agents: z.object({}).strict(),
  interrupt_agent: z.object({ id: z.string() }).strict(),
  close_agent: z.object({ id: z.string() }).strict(),
} as const;
export type AgentToolName = keyof typeof agentToolInputs;

export const agentToolDescriptions: Record<AgentToolName, string> = {
  spawn_agent: 'Start a sub-agent that works on a task in parallel. Returns its id and path.',
  send_agent_message: 'Send a message to another agent of your tree (your parent or your descendants).',
  wait_agents:
    "Wait until one of the given agents finishes a turn; returns each one's status and latest result.",
  list_agents: 'List the agents in your subtree (id, path, status).',
  interrupt_agent: 'Stop the running turn of one of your descendants; it stays alive.',
  close_agent: 'End one of your descendants and its subtree.',
};

export const agentToolNames = Object.keys(agentToolInputs) as AgentToolName[];
export const isAgentToolName = (name: string): name is AgentToolName => name in agentToolInputs;
