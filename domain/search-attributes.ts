import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * Search attributes every agents-kit workflow carries (SPEC S8.1), so an operator can list one run's
 * tree, or filter it by status, parent and depth, in the Web UI or with `temporal workflow list`.
 * SQLite visibility has few slots per type: four Keywords and one Int.
 */
export const searchAttributes = {
  rootThreadId: defineSearchAttributeKey('AgentRootThreadId', SearchAttributeType.KEYWORD),
  parentThreadId: defineSearchAttributeKey('AgentParentThreadId', SearchAttributeType.KEYWORD),
  status: defineSearchAttributeKey('AgentStatus', SearchAttributeType.KEYWORD),
  name: defineSearchAttributeKey('AgentName', SearchAttributeType.KEYWORD),
  depth: defineSearchAttributeKey('AgentDepth', SearchAttributeType.INT),
} as const;

/** The `--search-attribute Name=Type` registrations for a dev server. */
export const searchAttributeRegistrations: Record<string, string> = {
  AgentRootThreadId: 'Keyword',
  AgentParentThreadId: 'Keyword',
  AgentStatus: 'Keyword',
  AgentName: 'Keyword',
  AgentDepth: 'Int',
};
