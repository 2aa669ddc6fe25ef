/**
 * `agents-kit/worker`: what a worker process needs to run agents-kit's workflows and activities.
 *
 * - {@link createAgentWorker} — a Temporal worker on one task queue with every agents-kit workflow
 *   (the prebuilt workflow bundle that ships in the package, unless you pass your own).
 * - {@link createActivities} — the model and tool activities; {@link defineTool} declares a user tool;
 *   {@link createModelProvider} / {@link loadModelConfig} choose the model from configuration;
 *   {@link loadModelPrices} reads the usage ledger's price table (SPEC S11.3).
 * - {@link createMcpTools} — tools of MCP servers (SPEC S11.1) for `createActivities({ mcp })`;
 *   {@link loadMcpServers} reads them from `AGENTS_KIT_MCP_SERVERS`.
 * - {@link bundleOptions} — for `bundleWorkflowCode` when you build the workflow bundle yourself.
 * - {@link startDevServer} — the real Temporal dev server (SQLite, Web UI, our search attributes),
 *   for local development and for your own tests.
 * - {@link runWorker} / {@link loadConfig} — a whole worker process from the environment (SPEC S8.3).
 * - {@link createEncryptionCodec} / {@link loadCodecKeys} — AES-256-GCM payload encryption (SPEC S3.9),
 *   for `createAgentWorker({ codec })` and your clients; {@link startCodecServer} — the codec server
 *   the Web UI decrypts with.
 * - {@link createTracing} / {@link tracingFromEnvironment} — OpenTelemetry spans of the tree over OTLP
 *   (SPEC S11.2), for `createAgentWorker({ tracing })`; {@link tracingSinks} for a worker built by hand.
 *
 * @example
 * import { NativeConnection } from '@temporalio/worker';
 * import { createActivities, createAgentWorker, defineTool } from 'agents-kit/worker';
 * const worker = await createAgentWorker({ connection: await NativeConnection.connect(), taskQueue: 'agents-kit', activities: createActivities({ tools: [myTool] }) });
 * await worker.run();
 */
export {
  createAgentWorker,
  bundleOptions,
  defaultMaxCachedWorkflows,
  payloadConverterPath,
  prebuiltUntracedWorkflowBundlePath,
  prebuiltWorkflowBundlePath,
  untracedBundleOptions,
  workflowsPath,
  type AgentWorkerOptions,
  type WorkflowSource,
} from './create-worker';
export {
  builtinTools,
  createActivities,
  createMcpTools,
  McpServers,
  McpTools,
  mcpServersFromJson,
  parseMcpServers,
  type McpServerConfig,
  type McpServerConfigInput,
  type McpServersInput,
  type McpTool,
  createModelProvider,
  defineTool,
  loadModelConfig,
  loadModelPrices,
  type ActivityDependencies,
  type ModelPrices,
  type ModelProvider,
  type ToolCallContext,
  type ToolDefinition,
} from '../activities';
export { ModelConfig } from '../activities/providers';
export { EnvironmentConfig, loadConfig, loadMcpServers } from './config';
export { configuredCodec, connectClient, connectWorker } from './connect';
export { CodecKey, loadCodecKeys } from '../client/codec-keys';
export { createEncryptionCodec, type EncryptionCodecOptions } from '../client/encryption-codec';
export { createTracing, tracingFromEnvironment, type Tracing, type TracingOptions } from '../client/tracing';
export { tracingSinks } from './tracing-sink';
export {
  defaultCodecCorsOrigins,
  defaultCodecMaxBodyBytes,
  defaultCodecMaxPayloads,
  startCodecServer,
  type CodecServer,
  type CodecServerOptions,
} from './codec-server';
export { runWorker, type RunWorkerOptions } from './run-worker';
export {
  defaultDataDir,
  devServerPragmas,
  devServerSettings,
  freePort,
  startDevServer,
  type DevServer,
  type DevServerOptions,
} from './dev-server';
export { ensureTemporalBinary, findTemporalBinary, temporalCliModule } from './temporal-binary';
export { searchAttributeRegistrations } from '../domain/search-attributes';
