import { condition, getExternalWorkflowHandle, log, setHandler, sleep } from '@temporalio/workflow';
import { capabilityRefusal, type Capability } from '../domain/capability';
import {
  ControlResponse,
  errorAnswer,
  fromErrorAnswer,
  type ControlOperationInput,
  type ControlRequest,
} from '../domain/control';
import { jsonBytes } from '../domain/bytes';
import { ErrorKind, KitError } from '../domain/errors';
import { controlRequestSignal, controlResponseSignal } from '../domain/messages';
import type { TaskBudget } from './task-budget';
import { signalDropped } from './workflow-metrics';

/** How often a request to a workflow that is not there (yet) is sent again: a child being started. */
const notFoundRetries = [250, 1_000, 2_000];

/** Whether a signal failed because its target workflow is not there (not started yet, or ended). */
export const looksNotFound = (error: unknown) =>
  /not ?found|already completed|ExternalWorkflowExecutionNotFound/i.test(String(error));

/**
 * The workflow-to-workflow side of the control protocol (SPEC S3.1, S3.9): sends a control request to
 * the workflow that owns the operation, proven with this workflow's capability, and waits for that
 * owner's proven answer. Answers from anyone else, or for operations nobody waits on, are dropped, so a
 * forged or repeated `control-response` changes nothing (SPEC S3.10).
 */
export class ControlTransport {
  /** Operation id → the workflow whose answer it waits for. */
  private readonly awaiting = new Map<string, string>();
  private readonly responses = new Map<string, ControlResponse>();

  constructor(
    private readonly self: () => Capability,
    private readonly runKey: string,
    /** Operations sent so far (carried through continue-as-new, so ids stay unique). */
    public operations = 0,
    /** What the workflow's task may still send (SPEC S3.10): a spawn by request may be 512 KiB. */
    private readonly budget?: TaskBudget,
  ) {}

  /** Registers the `control-response` handler. */
  register(): void {
    setHandler(controlResponseSignal, (raw) => {
      const parsed = ControlResponse.safeParse(raw);
      const expected = parsed.success ? this.awaiting.get(parsed.data.operationId) : undefined;
      // Answers come from the owner's workflow itself, not from a service holding its delegated capability.
      const proven =
        parsed.success &&
        capabilityRefusal(this.runKey, this.self().rootId, parsed.data.from, true) === undefined;
      const valid =
        proven &&
        expected !== undefined &&
        parsed.data.from.threadId === expected &&
        !this.responses.has(parsed.data.operationId);
      if (!valid) {
        signalDropped(
          controlResponseSignal.name,
          !parsed.success ? 'malformed' : proven ? 'refused' : 'unproven',
          'dropped a control response nobody waits for',
          { threadId: this.self().threadId },
        );
        return;
      }
      this.responses.set(parsed.data.operationId, parsed.data);
    });
  }

  /** Performs `operation` at `ownerId` and returns its result; its KitError is thrown. */
  async call(ownerId: string, operation: ControlOperationInput): Promise<unknown> {
    const self = this.self();
    const operationId = `${self.threadId}/${++this.operations}`;
    const request = { from: self, operationId, operation } as ControlRequest;
    // A thread whose workflow is gone is answered for by the root run, from its registry (SPEC S4.3:
    // PermissionDenied outside the caller's reach, Closed for a terminal thread).
    let answering = ownerId;
    try {
      this.awaiting.set(operationId, answering);
      // The root run itself has the registry: it falls back on no one.
      const reached = await this.send(
        ownerId,
        request,
        ownerId === self.rootId || self.threadId === self.rootId,
      );
      if (!reached) {
        answering = self.rootId;
        this.awaiting.set(operationId, answering);
        await this.send(self.rootId, request, true);
      }
      await condition(() => this.responses.has(operationId));
    } finally {
      this.awaiting.delete(operationId);
    }
    const response = this.responses.get(operationId)!;
    this.responses.delete(operationId);
    if (response.error) throw fromErrorAnswer(response.error);
    return response.result;
  }

  /** Answers a request this workflow owns: its result, or the KitError it failed with. */
  async respond(request: ControlRequest, answer: () => Promise<unknown>): Promise<void> {
    let response: ControlResponse;
    try {
      response = { from: this.self(), operationId: request.operationId, result: await answer() };
    } catch (error) {
      response = { from: this.self(), operationId: request.operationId, error: errorAnswer(error) };
    }
    const later = this.budget?.take(jsonBytes(response));
    if (later) await later;
    await getExternalWorkflowHandle(request.from.threadId)
      .signal(controlResponseSignal, response)
      .catch((error: unknown) =>
        log.warn('answer to a control request failed', { to: request.from.threadId, error: String(error) }),
      );
  }

  /**
   * Signals the owner; false when there is no such workflow (it has ended, or never was). A workflow
   * that is not found may be a child whose start is still on its way, so it is asked again a few times.
   * `last`: no one else can answer, so not finding it is Closed.
   */
  private async send(ownerId: string, request: ControlRequest, last: boolean): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      const later = this.budget?.take(jsonBytes(request));
      if (later) await later;
      try {
        await getExternalWorkflowHandle(ownerId).signal(controlRequestSignal, request);
        return true;
      } catch (error) {
        if (looksNotFound(error) && attempt < notFoundRetries.length) {
          await sleep(notFoundRetries[attempt]!);
          continue;
        }
        if (looksNotFound(error) && !last) return false;
        throw new KitError(ErrorKind.Closed, `thread ${ownerId} cannot be reached: ${String(error)}`);
      }
    }
  }
}
