/**
 * `agents-kit/workflows`: every workflow type agents-kit registers — the worker's `workflowsPath`.
 * Import it only from a workflow bundle (it runs in Temporal's deterministic sandbox); to build one
 * yourself, pass `bundleOptions` from `agents-kit/worker` to `bundleWorkflowCode`, which also preloads
 * the shared modules every agents-kit bundle needs.
 */
export { agentWorkflow } from './agent-workflow';
export { rootRunWorkflow } from './root-run-workflow';
export { conversationWorkflow } from './conversation-workflow';
export { conversationPageWorkflow } from './conversation-page-workflow';
