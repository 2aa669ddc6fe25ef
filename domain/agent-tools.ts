import { z } from 'zod';
import { ThreadName } from './schemas';

/**
 * The agent-control tools a model sees (SPEC S4): name, description and zod input of each. Each is the
 * `tool` of one row of the operation table (`domain/operations.ts`), which is where the model's tool
 * list, the tools' operations and their lookups are derived: a tool exists because a row names it. The
 * same schema describes the tool to the provider (as JSON Schema) and parses the model's calls.
 */
export interface AgentToolDefinition {
  name: string;
  description: string;
  input: z.ZodType;
}

export const spawnAgentTool = {
  name: 'spawn_agent',
  description: 'Start a sub-agent that works on a task in parallel. Returns its id and path.',
  input: z
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
} as const satisfies AgentToolDefinition;

export const sendAgentMessageTool = {
  name: 'send_agent_message',
  description: 'Send a message to another agent of your tree (your parent or your descendants).',
  input: z
    .object({
      recipient: z
        .string()
        .describe('Thread id (thread_…) of your parent, a descendant, or, for the root, any agent.'),
      content: z.string().min(1),
      trigger_turn: z.boolean().optional().describe('Start a turn on an idle recipient now.'),
    })
    .strict(),
} as const satisfies AgentToolDefinition;

export const waitAgentsTool = {
  name: 'wait_agents',
  description:
    "Wait until one of the given agents finishes a turn; returns each one's status and latest result.",
  input: z
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
} as const satisfies AgentToolDefinition;

export const listAgentsTool = {
  name: 'list_agents',
  description: 'List the agents in your subtree (id, path, status).',
  input: z.object({}).strict(),
} as const satisfies AgentToolDefinition;

export const interruptAgentTool = {
  name: 'interrupt_agent',
  description: 'Stop the running turn of one of your descendants; it stays alive.',
  input: z.object({ id: z.string() }).strict(),
} as const satisfies AgentToolDefinition;

export const closeAgentTool = {
  name: 'close_agent',
  description: 'End one of your descendants and its subtree.',
  input: z.object({ id: z.string() }).strict(),
} as const satisfies AgentToolDefinition;
