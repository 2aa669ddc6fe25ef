// The worker's workflowsPath: every workflow type agents-kit registers.
export { agentWorkflow } from './agent-workflow';
export { rootRunWorkflow } from './root-run-workflow';
export { conversationWorkflow } from './conversation-workflow';
export { conversationPageWorkflow } from './conversation-page-workflow';
