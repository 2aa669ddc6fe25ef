import {
  condition,
  getExternalWorkflowHandle,
  ParentClosePolicy,
  startChild,
  uuid4,
  workflowInfo,
  log,
} from '@temporalio/workflow';
import {
  ControlOperation,
  WaitRequest,
  type ControlOperationInput,
  type ControlResults,
  type ThreadEvent,
  type WaitResult,
} from '../domain/control';
import { ErrorKind, KitError, parseInput } from '../domain/errors';
import { newId, parseId } from '../domain/ids';
import { controlResponseSignal, deliverMessageSignal } from '../domain/messages';
import type { RootRunState, ThreadRecord } from '../domain/run-state';
import {
  isTerminal,
  type AgentSpec,
  type AgentThread,
  type ControlScope,
  type InterAgentMessage,
} from '../domain/schemas';
import { searchAttributes } from '../domain/search-attributes';
import { agentWorkflow } from './agent-workflow';
import type { AgentControls } from './kernel';

/**
 * Performs control operations for a root run (SPEC S4): decisions are made synchronously on the
 * RootRunState, side effects (child starts, deliveries, answers to agents) follow in the background,
 * tracked so the run can drain them before it returns or continues-as-new.
 */
export class RootHost {
  private readonly background = new Set<Promise<void>>();
  private readonly started = new Map<string, Promise<void>>();

  constructor(
    readonly state: RootRunState,
    private readonly onRootMessage: (message: InterAgentMessage) => void,
  ) {}

  /** Executes one operation for `scope`; throws KitError on rejection. */
  async execute<Type extends keyof ControlResults>(
    scope: ControlScope,
    rawOperation: ControlOperationInput & { type: Type },
  ): Promise<ControlResults[Type]> {
    return (await this.dispatch(scope, rawOperation)) as ControlResults[Type];
  }

  private async dispatch(
    scope: ControlScope,
    rawOperation: unknown,
  ): Promise<ControlResults[keyof ControlResults]> {
    const operation = parseInput(ControlOperation, rawOperation, 'control operation');
    switch (operation.type) {
      case 'spawn':
        return this.spawn(scope, operation.request, undefined);
      case 'spawn-remote': {
        const { target, ...request } = operation.request;
        return this.spawn(scope, request, target);
      }
      case 'send-message':
        return this.sendMessage(scope, operation.request);
      case 'load-thread':
        return this.state.load(scope, operation.threadId);
      case 'list-threads':
        return this.state.list(scope);
      case 'wait':
        return this.wait(scope, operation.request);
    }
  }

  /** Controls for the root kernel, bound to the root's scope. */
  rootControls(): AgentControls {
    const scope = { rootId: this.state.rootId, threadId: this.state.rootId };
    return {
      spawn: (request) => this.execute(scope, { type: 'spawn', request }),
      spawnRemote: (request) => this.execute(scope, { type: 'spawn-remote', request }),
      sendMessage: (request) => this.execute(scope, { type: 'send-message', request }),
      loadThread: (threadId) => this.execute(scope, { type: 'load-thread', threadId }),
      listThreads: () => this.execute(scope, { type: 'list-threads' }),
      wait: (request) => this.execute(scope, { type: 'wait', request }),
    };
  }

  /** Answers an agent's control request by signal, whatever the outcome. */
  answer(callerId: string, operationId: string, scope: ControlScope, operation: unknown): void {
    this.track(
      (async () => {
        let response;
        try {
          response = { operationId, result: await this.dispatch(scope, operation) };
        } catch (error) {
          const kitError =
            error instanceof KitError
              ? error
              : new KitError(ErrorKind.InvalidState, `internal error: ${String(error)}`);
          response = {
            operationId,
            error: { kind: kitError.kind, message: kitError.message, details: kitError.details },
          };
        }
        await getExternalWorkflowHandle(callerId).signal(controlResponseSignal, response);
      })(),
    );
  }

  /** Applies an agent's report about itself. */
  applyEvent(event: ThreadEvent): void {
    switch (event.type) {
      case 'turn-start':
        return this.state.turnStarted(event.threadId, event.turn, event.at);
      case 'turn-end':
        return this.state.turnEnded(event.threadId, event.outcome, event.nextStatus);
      case 'thread-end':
        return this.state.threadEnded(event.threadId, event.status, event.at);
    }
  }

  /** Waits for every background side effect started so far (and any they start). */
  async drain(): Promise<void> {
    while (this.background.size > 0) await Promise.all([...this.background]);
  }

  private async spawn(
    scope: ControlScope,
    request: unknown,
    remoteTarget: string | undefined,
  ): Promise<AgentThread> {
    const taskQueue = remoteTarget ? this.state.remoteTaskQueue(remoteTarget) : workflowInfo().taskQueue;
    const admission = this.state.admit(scope, request, {
      threadId: newId('thread', uuid4),
      taskQueue,
      remoteTarget,
      now: new Date().toISOString(),
    });
    const { record, request: admitted } = admission;
    if (!admission.existing) {
      const { task, name, instructions, model, kernel } = admitted;
      this.startThread(record, { task, name, instructions, model, kernel, tools: record.thread.tools });
    }
    return record.thread;
  }

  private startThread(record: ThreadRecord, spec: AgentSpec): void {
    const { thread } = record;
    const start = (async () => {
      try {
        await startChild(agentWorkflow, {
          workflowId: thread.id,
          taskQueue: thread.taskQueue,
          // Threads outlive the root run's current execution (continue-as-new); the root closes them itself.
          parentClosePolicy: ParentClosePolicy.ABANDON,
          args: [{ thread, spec, idleTimeoutMs: this.state.grant.idleTimeoutMs }],
          typedSearchAttributes: [
            { key: searchAttributes.rootThreadId, value: thread.rootId },
            { key: searchAttributes.parentThreadId, value: thread.parentId ?? '' },
            { key: searchAttributes.depth, value: thread.depth },
            { key: searchAttributes.name, value: thread.name },
            { key: searchAttributes.status, value: thread.status },
          ],
          staticSummary: `${thread.path}: ${truncate(thread.task, 180)}`,
          staticDetails: `agents-kit sub-agent ${thread.id}\n\nroot run: ${thread.rootId}\nparent: ${thread.parentId}\ndepth: ${thread.depth}\ntask queue: ${thread.taskQueue}\n\ntask:\n${thread.task}`,
        });
      } catch (error) {
        log.error('sub-agent failed to start', { threadId: thread.id, error: String(error) });
        this.state.threadEnded(thread.id, 'failed', new Date().toISOString());
      }
    })();
    this.started.set(thread.id, start);
    this.track(start);
  }

  private sendMessage(scope: ControlScope, request: unknown): InterAgentMessage {
    const message = this.state.prepareMessage(
      scope,
      request,
      newId('message', uuid4),
      new Date().toISOString(),
    );
    if (message.recipient === this.state.rootId) {
      this.onRootMessage(message);
    } else {
      if (message.triggerTurn) this.state.turnRequested(message.recipient);
      const started = this.started.get(message.recipient) ?? Promise.resolve();
      this.track(
        started.then(() =>
          getExternalWorkflowHandle(message.recipient)
            .signal(deliverMessageSignal, message)
            .catch((error: unknown) =>
              log.warn('message delivery failed', { messageId: message.id, error: String(error) }),
            ),
        ),
      );
    }
    return message;
  }

  private async wait(scope: ControlScope, rawRequest: unknown): Promise<WaitResult> {
    const request = parseInput(WaitRequest, rawRequest, 'wait request');
    for (const threadId of request.threadIds) {
      if (!this.state.load(scope, parseId('thread', threadId, 'threadIds'))) {
        throw new KitError(ErrorKind.NotFound, `thread ${threadId} is not in the subtree of the caller`);
      }
    }
    const threads = () => request.threadIds.map((threadId) => this.state.record(threadId)!.thread);
    const settled = () => threads().some((thread) => thread.status === 'idle' || isTerminal(thread.status));
    const ready = request.timeoutMs === 0 ? settled() : await condition(settled, request.timeoutMs);
    return {
      timedOut: !ready,
      outcomes: threads().map((thread) => ({
        threadId: thread.id,
        status: thread.status,
        ...(thread.latestTurn ? { latestTurn: thread.latestTurn } : {}),
      })),
    };
  }

  private track(work: Promise<void>): void {
    this.background.add(work);
    void work.finally(() => this.background.delete(work));
  }
}

const truncate = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
