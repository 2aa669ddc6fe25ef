import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdReusePolicy,
  type Client,
  type WorkflowHandle,
} from '@temporalio/client';
import { randomBytes, randomUUID } from 'node:crypto';
import { initialApprovalPolicy, type InitialApprovalPolicy } from '../domain/approval-policy';
import { attachRefusal } from '../domain/attach-rules';
import { defaultOutsideEndsCheckMs } from '../domain/control';
import { ErrorKind, KitError, objectInput, parseInput } from '../domain/errors';
import { conversationSummaryQuery } from '../domain/conversation-messages';
import { newId, parseId, relatedId, type ThreadId } from '../domain/ids';
import { runCountsQuery } from '../domain/messages';
import {
  DelegationGrant,
  RootRunInput,
  type AgentSpecInput,
  type DelegationGrantInput,
} from '../domain/schemas';
import { searchAttributes } from '../domain/search-attributes';
import type { rootRunWorkflow } from '../workflows/root-run-workflow';
import { withDeadline } from './deadline';
import { checkClient, describeIfAny, kitCall, toKitError } from './errors';

/** How to attach a new root run (SPEC S3.2). */
export interface AttachOptions {
  /** The worker fleet's task queue. */
  taskQueue: string;
  /** Who attaches: must be the grant's owner. */
  owner: string;
  /** The root agent. */
  root: AgentSpecInput;
  /** The delegation grant; its rootThreadId, when given, must be the new root's id. */
  grant: Omit<DelegationGrantInput, 'rootThreadId'> & { rootThreadId?: string };
  /** The root thread id; a new one when omitted. */
  rootThreadId?: string;
  /** How long shutdown waits for threads to confirm their end (default 60 s). */
  shutdownGraceMs?: number;
  /** History length at which the run's workflows continue-as-new (default 4000 events). */
  continueAsNewAfterEvents?: number;
  /** How often the root asks if its earlier runs' sub-agents still run (ms; default 300,000; ≥ 1,000). */
  outsideEndsCheckMs?: number;
  /**
   * SPEC S11.4: the tree's approval policy to start with: tools that never ask (even if they declare
   * `needsApproval`) and tools that always do. Changeable later with `ThreadService.setApprovalPolicy`.
   */
  approvalPolicy?: InitialApprovalPolicy;
}

/** The workflow type of every root run. */
const rootRunType = 'rootRunWorkflow';

/**
 * SPEC S3.2: starts a new root run, its whole input checked first by the schema the workflow checks it
 * with, so bad options are a Protocol error naming the field and start nothing (a run the workflow
 * refused would keep its id for good). Refusals of an existing id say why (Conflict, InvalidState).
 */
export async function startRootRun(client: Client, rawOptions: AttachOptions) {
  checkClient(client, 'attach');
  const options = objectInput(rawOptions, 'attach options');
  const rootThreadId = options.rootThreadId
    ? parseId('thread', options.rootThreadId, 'rootThreadId')
    : newId('thread', randomUUID);
  const spec = parseInput(RootRunInput.shape.spec, options.root, 'root');
  const grantInput = objectInput(options.grant, 'grant');
  const grant = parseInput(
    DelegationGrant,
    { ...grantInput, rootThreadId: grantInput.rootThreadId ?? rootThreadId },
    'grant',
  );
  // The workflow checks these rules again itself (a raw client cannot skip them); here they fail fast.
  const refusal = attachRefusal(rootThreadId, grant);
  if (refusal) throw refusal;
  parseInput(DelegationGrant.shape.owner, options.owner, 'owner');
  if (grant.owner !== options.owner) {
    throw new KitError(
      ErrorKind.PermissionDenied,
      `the grant belongs to ${grant.owner}, not ${options.owner}`,
    );
  }
  if (options.rootThreadId) await checkRootConversation(client, rootThreadId);
  const runKey = randomBytes(32).toString('hex');
  const input = {
    protocolVersion: 1 as const,
    rootThreadId,
    runKey,
    spec,
    grant,
    taskQueue: options.taskQueue,
    shutdownGraceMs: options.shutdownGraceMs,
    continueAsNewAfterEvents: options.continueAsNewAfterEvents,
    // SPEC S4.4: sub-agents of earlier runs ended from outside are found within this period.
    outsideEndsCheckMs: options.outsideEndsCheckMs ?? defaultOutsideEndsCheckMs,
    // SPEC S11.3: every model call of the tree holds its reservation before it starts.
    usageLedger: true as const,
    // SPEC S6.4: threads' allowance refills sized by their calls' reservations.
    callSizedAllowance: true as const,
    // Model calls carry only the transcript entries their worker does not keep yet.
    transcriptDelta: true as const,
    // SPEC S6.4: a turn's outcome says how many tokens it used.
    turnTokens: true as const,
    // SPEC S11.4: every kernel's tool calls pass the tree's approval gate.
    approvalPolicy: initialApprovalPolicy(options.approvalPolicy),
  };
  // Every option the workflow would refuse, refused here before anything starts (the fields keep their names).
  parseInput(RootRunInput, input, 'attach options');
  try {
    const handle = await client.workflow.start<typeof rootRunWorkflow>(rootRunType, {
      taskQueue: input.taskQueue,
      workflowId: rootThreadId,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      args: [input],
      typedSearchAttributes: [
        { key: searchAttributes.rootThreadId, value: rootThreadId },
        { key: searchAttributes.parentThreadId, value: '' },
        { key: searchAttributes.depth, value: 0 },
        { key: searchAttributes.name, value: spec.name ?? 'root' },
        { key: searchAttributes.status, value: 'pending' },
      ],
      staticSummary: `/root: ${spec.task.length > 180 ? `${spec.task.slice(0, 179)}…` : spec.task}`,
      staticDetails: `agents-kit root run ${rootThreadId}\n\nowner: ${grant.owner}\nmaxDepth ${grant.maxDepth} · maxConcurrent ${grant.maxConcurrent} · maxTotal ${grant.maxTotal} · budget ${grant.budgetTokens} tokens${grant.budgetUsd === undefined ? '' : ` · $${grant.budgetUsd}`}\n\ntask:\n${spec.task}`,
    });
    return { rootThreadId, handle, runKey };
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw toKitError(error, 'attach');
    throw await explainExisting(client, rootThreadId, error);
  }
}

/**
 * SPEC S3.3: the handle of the root run `rootThreadId`: NotFound when no workflow has that id, or when the
 * one that has it is not a root run (a sub-agent's or a conversation's).
 */
export async function rootRunHandle(
  client: Client,
  rootThreadId: ThreadId,
): Promise<WorkflowHandle<typeof rootRunWorkflow>> {
  checkClient(client, 'reopen');
  const handle = client.workflow.getHandle<typeof rootRunWorkflow>(rootThreadId);
  const description = await describeIfAny(client, rootThreadId, 'reopen');
  if (!description) throw new KitError(ErrorKind.NotFound, `no root run ${rootThreadId}`);
  if (description.type !== rootRunType)
    throw new KitError(
      ErrorKind.NotFound,
      `no root run ${rootThreadId}: the workflow with that id is a ${description.type}, not a root run`,
    );
  return handle;
}

/** Why the id of a root to attach is taken (SPEC S3.2). */
async function explainExisting(client: Client, rootThreadId: ThreadId, cause: Error): Promise<KitError> {
  const handle = client.workflow.getHandle<typeof rootRunWorkflow>(rootThreadId);
  const description = await kitCall('attach', () => handle.describe());
  if (description.type !== rootRunType) {
    return new KitError(
      ErrorKind.Conflict,
      `${rootThreadId} is the id of a ${description.type}, not of a root run: attach with another rootThreadId`,
      undefined,
      { cause },
    );
  }
  if (description.status.name !== 'RUNNING') {
    return new KitError(
      ErrorKind.InvalidState,
      `root ${rootThreadId} has already finished (${description.status.name.toLowerCase()}): it cannot be attached again`,
      undefined,
      { cause },
    );
  }
  const counts = await kitCall('attach', () => handle.query(runCountsQuery));
  if (counts.threads > 1) {
    return new KitError(
      ErrorKind.InvalidState,
      `root ${rootThreadId} already has ${counts.threads - 1} sub-agents: reopen it instead of attaching`,
      undefined,
      { cause },
    );
  }
  return new KitError(ErrorKind.Conflict, `root ${rootThreadId} is already attached`, undefined, { cause });
}

/**
 * SPEC S3.2, S3.9: the conversation id of a root id the caller chose is free, or held by a conversation
 * no thread has claimed yet (a receiver opened it first; the root claims it). One started by a raw
 * client for another owner would refuse everything the root publishes: its approvals and questions
 * would reach nobody. A root that already runs is explained as such.
 */
async function checkRootConversation(client: Client, rootThreadId: ThreadId): Promise<void> {
  const conversationId = relatedId('conversation', rootThreadId);
  const handle = client.workflow.getHandle(conversationId);
  const description = await describeIfAny(client, conversationId, 'attach');
  if (description?.status.name !== 'RUNNING') return;
  const summary =
    description.type === conversationType
      ? await withDeadline(client.workflow, conversationReadMs, () =>
          handle.query(conversationSummaryQuery),
        ).catch(() => undefined)
      : undefined;
  if (summary && !summary.owner) return;
  const root = await kitCall('attach', () => client.workflow.getHandle(rootThreadId).describe()).catch(
    () => undefined,
  );
  if (root) throw await explainExisting(client, rootThreadId, new Error(`${rootThreadId} exists`));
  const holder =
    description.type !== conversationType
      ? `a ${description.type}`
      : summary
        ? `a conversation of ${summary.owner}, started before this root`
        : `a conversation that answered no query within ${conversationReadMs / 1000} s`;
  throw new KitError(
    ErrorKind.Conflict,
    `root ${rootThreadId} cannot be attached: its conversation's id ${conversationId} is taken by ${holder}; attach with another rootThreadId`,
  );
}

const conversationType = 'conversationWorkflow';
/** How long attach waits for an existing conversation under the root's conversation id to answer. */
const conversationReadMs = 10_000;
