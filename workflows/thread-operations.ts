import { patched, setHandler, uuid4 } from '@temporalio/workflow';
import type { Capability } from '../domain/capability';
import { ControlRequest, type AgentInterruptReceipt } from '../domain/control';
import { ErrorKind, KitError, parseInput } from '../domain/errors';
import { newId, parseId } from '../domain/ids';
import type { Mailbox } from '../domain/mailbox';
import { controlRequestSignal } from '../domain/messages';
import type { RecentAnswerLog } from '../domain/recent-answers';
import { isTerminal, SendMessageRequest, type AgentThread, type InterAgentMessage } from '../domain/schemas';
import type { ControlTransport } from './control-transport';
import { updateKey, type RunLifetime } from './run-lifetime';
import type { ThreadAuthority } from './thread-authority';
import { isThreadOperation, threadUpdateTypes, type ThreadUpdateType } from '../domain/operations';
import { registerOperationUpdates, type UpdateBody } from './operation-updates';
import type { PendingInteractions } from './pending-interactions';
import { patches } from './patches';
import { signalDropped } from './workflow-metrics';

/** A thread operation with no case above: a compile error, since the table gave it to threads. */
const unhandled = (operation: never): never => {
  throw new KitError(ErrorKind.InvalidState, `unhandled thread operation ${JSON.stringify(operation)}`);
};

/** What a thread's operations act on. */
export interface ThreadOperationPorts {
  thread(): AgentThread;
  mailbox: Mailbox;
  /** The thread is closing: it takes no more messages. */
  closing(): boolean;
  requestTurn(): void;
  interrupt(): { cancellationRequested: boolean; interruptedTurn?: number };
  /** The interactions it waits on (SPEC S5.4): the `resolve` operation's check and effect. */
  interactions: Pick<PendingInteractions, 'checkResolve' | 'resolve'>;
  /** More the owner checks of a sender it knows (the root run knows every thread's status). */
  checkSender?(caller: Capability, request: SendMessageRequest): void;
}

/** A message as remembered for a retry: without its content (the retry carries it again). */
type Remembered = Omit<InterAgentMessage, 'content'>;

/**
 * The operations a thread's own workflow owns (SPEC S3.1): sendMessage to it (it numbers its mailbox),
 * interrupt of its turn and resolve of the interactions it waits on. Clients reach them by update, other workflows by `control-request`; the
 * caller's capability is checked before anything changes (SPEC S3.9), and a retried update or request
 * id answers what the first attempt did, also across continue-as-new (SPEC S3.10).
 */
export class ThreadOperations {
  constructor(
    private readonly authority: ThreadAuthority,
    private readonly transport: ControlTransport,
    private readonly ports: ThreadOperationPorts,
    private readonly recent: RecentAnswerLog,
    private readonly lifetime: RunLifetime,
  ) {}

  /** The client updates the table gives a thread's workflow (SPEC S3.1), each checked before it acts. */
  private readonly updates: Record<ThreadUpdateType, UpdateBody> = {
    'send-message': {
      check: (capability, request) => {
        const parsed = parseInput(SendMessageRequest, request, 'message');
        // A validator leaves no history, so it may give the room of a full mailbox without the patch.
        if (this.recent.find(updateKey(true), parsed) === undefined)
          this.checkSend(capability, parsed, () => true);
      },
      perform: (capability, request) => {
        const { content: _content, ...receipt } = this.send(capability, request, updateKey());
        return receipt;
      },
    },
    interrupt: {
      check: (capability, threadId) => this.checkInterrupt(capability, threadId),
      perform: (capability, threadId) => this.interrupt(capability, threadId, updateKey()),
    },
    // Idempotent by its request id (the same answer gets the same resolution), so no answer log.
    resolve: {
      check: (capability, request) => this.ports.interactions.checkResolve(capability, request),
      perform: (capability, request) => this.ports.interactions.resolve(capability, request),
    },
  };

  /** Registers the thread's client updates, from the operation table. */
  registerUpdates(): void {
    registerOperationUpdates(threadUpdateTypes, this.updates, this.lifetime);
  }

  /**
   * Registers `control-request`: the same operations asked by another workflow of the tree. `track` keeps
   * each answer so the workflow waits for it before it ends or continues as new.
   */
  registerRequests(track: (work: Promise<void>) => void): void {
    setHandler(controlRequestSignal, (raw) => this.accept(raw, track));
  }

  /** SPEC S4.3: admits a message (checked first), numbered by this mailbox. */
  private send(capability: Capability, request: unknown, key: string | undefined): InterAgentMessage {
    const parsed = parseInput(SendMessageRequest, request, 'message');
    const earlier = this.recent.find(key, parsed) as Remembered | undefined;
    if (earlier) return { ...earlier, content: parsed.content };
    const caller = this.checkSend(capability, parsed, () => patched(patches.triggerTurnRoom));
    const message = this.ports.mailbox.admit({
      id: newId('message', uuid4),
      sender: caller.threadId,
      recipient: this.authority.threadId,
      content: parsed.content,
      triggerTurn: parsed.triggerTurn,
      sentAt: new Date().toISOString(),
    });
    if (message.triggerTurn) this.ports.requestTurn();
    // The turn that takes it: the next to start (this one's, when idle; after the running one's end).
    const receipt = message.triggerTurn
      ? { ...message, turn: this.ports.thread().turnsStarted + 1 }
      : message;
    const { content: _content, ...remembered } = receipt;
    this.recent.remember(key, parsed, remembered);
    return receipt;
  }

  /** `useRoom`: whether a full mailbox may take a short message that asks for the turn (domain/mailbox.ts). */
  private checkSend(capability: unknown, request: SendMessageRequest, useRoom: () => boolean): Capability {
    const caller = this.authority.caller(capability);
    const thread = this.ports.thread();
    if (request.recipient !== thread.id) {
      throw new KitError(
        ErrorKind.InvalidState,
        `this is the workflow of ${thread.id}, not of ${request.recipient}: send to the recipient's own workflow`,
      );
    }
    this.authority.checkMayMessage(caller, thread.path);
    this.ports.checkSender?.(caller, request);
    if (isTerminal(thread.status) || this.ports.closing()) {
      throw new KitError(
        ErrorKind.Closed,
        `thread ${thread.path} is ${isTerminal(thread.status) ? thread.status : 'closing'}: it takes no more messages`,
      );
    }
    const refusal = this.ports.mailbox.refusal(thread.path, request, useRoom);
    if (refusal) throw refusal;
    return caller;
  }

  /** SPEC S4.6: cancels the running turn (the thread stays alive) and says what it did. */
  private interrupt(
    capability: Capability,
    threadId: unknown,
    key: string | undefined,
  ): AgentInterruptReceipt {
    const earlier = this.recent.find(key, threadId) as AgentInterruptReceipt | undefined;
    if (earlier) return earlier;
    this.checkInterrupt(capability, threadId);
    const receipt = { thread: this.authority.threadId, ...this.ports.interrupt() };
    this.recent.remember(key, threadId, receipt);
    return receipt;
  }

  private checkInterrupt(capability: unknown, threadId: unknown): void {
    const caller = this.authority.caller(capability);
    this.checkTarget(threadId);
    this.authority.checkMayInterrupt(caller, this.ports.thread().path);
  }

  /** An operation that names its target thread is sent to that thread's own workflow. */
  private checkTarget(threadId: unknown): void {
    const id = parseId('thread', threadId, 'threadId');
    const thread = this.ports.thread();
    if (id !== thread.id)
      throw new KitError(ErrorKind.InvalidState, `this is the workflow of ${thread.id}, not of ${id}`);
  }

  /**
   * A `control-request` from another workflow of the tree: proven senders get an answer; anything else is
   * dropped (a signal cannot be refused, and answering an unproven sender would signal whoever it names).
   */
  private accept(raw: unknown, track: (work: Promise<void>) => void): void {
    const parsed = ControlRequest.safeParse(raw);
    if (!parsed.success) {
      signalDropped(controlRequestSignal.name, 'malformed', 'dropped a malformed control request', {
        threadId: this.authority.threadId,
      });
      return;
    }
    const request = parsed.data;
    try {
      this.authority.caller(request.from);
    } catch {
      signalDropped(
        controlRequestSignal.name,
        'unproven',
        'dropped a control request without a valid proof',
        {
          threadId: this.authority.threadId,
        },
      );
      return;
    }
    track(this.transport.respond(request, async () => this.perform(request)));
  }

  /**
   * Performs a proven control request's operation for its sender, another workflow of the tree: the
   * same checks and effects as a client's update, and a repeated operation id answers as the first did.
   * The root run's host hands it the requests that name the root thread itself.
   */
  perform(request: ControlRequest): unknown {
    const key = `${request.from.threadId}|${request.operationId}`;
    const { operation } = request;
    if (!isThreadOperation(operation))
      throw new KitError(
        ErrorKind.InvalidState,
        `${operation.type} is an operation of the root run, not of thread ${this.authority.threadId}`,
      );
    // Every operation the table gives a thread's workflow is handled here (the compiler checks).
    switch (operation.type) {
      case 'send-message': {
        const { content: _content, ...withoutContent } = this.send(request.from, operation.request, key);
        return withoutContent;
      }
      case 'interrupt':
        return this.interrupt(request.from, operation.threadId, key);
      case 'resolve':
        this.checkTarget(operation.threadId);
        return this.ports.interactions.resolve(request.from, operation.request);
      default:
        return unhandled(operation);
    }
  }
}
