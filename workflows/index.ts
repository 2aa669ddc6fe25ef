// The worker's workflowsPath: every workflow type agents-kit registers.
export { rootRunWorkflow } from './root-run-workflow';
export { conversationWorkflow } from './conversation-workflow';
