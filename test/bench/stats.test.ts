import { addCosts, eventTypeName, historyCost, perOperation } from '../../bench/actions';
import type { OperationResult } from '../../bench/measure';
import { compare } from '../../bench/report';
import { percentile, ratio, summarizeLatencies, throughput, withoutWarmup } from '../../bench/stats';

// Event type numbers of temporal.api.enums.v1.EventType.
const WorkflowExecutionStarted = 1;
const WorkflowTaskCompleted = 7;
const ActivityTaskScheduled = 10;
const TimerStarted = 17;
const MarkerRecorded = 25;
const WorkflowExecutionSignaled = 26;
const StartChildWorkflowExecutionInitiated = 29;
const ChildWorkflowExecutionStarted = 31;
const SignalExternalWorkflowExecutionInitiated = 37;
const UpsertWorkflowSearchAttributes = 40;
const WorkflowExecutionUpdateAccepted = 41;
const WorkflowExecutionUpdateCompleted = 43;
const events = (...types: number[]) => types.map((type) => ({ type }));

describe('percentile (nearest rank)', () => {
  it('picks measured samples, whatever their order', () => {
    expect(percentile([5, 1, 3, 2, 4], 0.5)).toBe(3);
    expect(percentile([5, 1, 3, 2, 4], 0.95)).toBe(5);
    expect(percentile([10, 20], 0.5)).toBe(10);
    expect(percentile([7], 0.99)).toBe(7);
  });

  it('puts p99 of 100 samples at the 99th and p95 at the 95th', () => {
    const samples = Array.from({ length: 100 }, (_, index) => 100 - index);
    expect(percentile(samples, 0.99)).toBe(99);
    expect(percentile(samples, 0.95)).toBe(95);
    expect(percentile(samples, 0.5)).toBe(50);
  });

  it('rejects no samples and fractions outside (0, 1]', () => {
    expect(() => percentile([], 0.5)).toThrow(RangeError);
    expect(() => percentile([1], 0)).toThrow(RangeError);
    expect(() => percentile([1], 1.5)).toThrow(RangeError);
  });
});

describe('latency summaries and throughput', () => {
  it('summarises after dropping the warm-up samples', () => {
    const kept = withoutWarmup([900, 800, 10, 20, 30, 40], 2);
    expect(kept).toEqual([10, 20, 30, 40]);
    expect(summarizeLatencies(kept)).toEqual({
      samples: 4,
      p50: 20,
      p95: 40,
      p99: 40,
      min: 10,
      max: 40,
      mean: 25,
    });
  });

  it('divides all operations by the time of all windows', () => {
    expect(
      throughput([
        { operations: 10, startMs: 0, endMs: 1000 },
        { operations: 30, startMs: 5000, endMs: 6000 },
      ]),
    ).toBe(20);
    expect(throughput([])).toBe(0);
  });

  it('gives ratios to two decimals, none against zero', () => {
    expect(ratio(25, 20)).toBe(1.25);
    expect(ratio(1, 3)).toBe(0.33);
    expect(ratio(1, 0)).toBeUndefined();
  });
});

describe('billable actions from history', () => {
  it('counts a child start twice: the parent’s intent and the child’s execution', () => {
    const parent = events(
      StartChildWorkflowExecutionInitiated,
      ChildWorkflowExecutionStarted,
      WorkflowTaskCompleted,
    );
    const child = events(WorkflowExecutionStarted, WorkflowTaskCompleted);
    const cost = historyCost([...parent, ...child]);
    expect(cost.actions).toBe(2);
    expect(cost.events).toBe(5);
  });

  it('counts a workflow-sent signal once, where it is received', () => {
    const sender = events(SignalExternalWorkflowExecutionInitiated);
    const receiver = events(WorkflowExecutionSignaled);
    expect(historyCost([...sender, ...receiver]).actions).toBe(1);
  });

  it('counts updates, timers, upserts and activities once each; workflow tasks never', () => {
    const cost = historyCost(
      events(
        WorkflowExecutionUpdateAccepted,
        WorkflowExecutionUpdateCompleted,
        TimerStarted,
        UpsertWorkflowSearchAttributes,
        ActivityTaskScheduled,
        WorkflowTaskCompleted,
      ),
    );
    expect(cost.actions).toBe(4);
    expect(cost.eventsByType).toMatchObject({ WorkflowTaskCompleted: 1, TimerStarted: 1 });
  });

  it('counts the markers of one workflow task as one action', () => {
    const cost = historyCost(
      events(WorkflowTaskCompleted, MarkerRecorded, MarkerRecorded, WorkflowTaskCompleted, MarkerRecorded),
    );
    expect(cost.actions).toBe(2);
  });

  it('divides and adds costs per operation', () => {
    const once = historyCost(events(WorkflowExecutionSignaled, WorkflowTaskCompleted));
    const twice = addCosts(once, once);
    expect(twice.actions).toBe(2);
    expect(perOperation(twice, 2)).toEqual(once);
  });

  it('names event types, and unknown ones by number', () => {
    expect(eventTypeName(WorkflowExecutionSignaled)).toBe('WorkflowExecutionSignaled');
    expect(eventTypeName(999)).toBe('Unknown999');
  });
});

describe('comparison with the primitive', () => {
  const result = (name: string, p50: number, opsPerSec: number, actions: number, primitive?: string) =>
    ({
      name,
      kind: primitive ? 'agents-kit' : 'primitive',
      ...(primitive ? { primitive } : {}),
      observedBy: 'client',
      description: '',
      latency: { samples: 1, p50, p95: p50, p99: p50, min: p50, max: p50, mean: p50 },
      throughputOpsPerSec: opsPerSec,
      cost: { events: actions * 3, actions, eventsByType: {}, actionsByRule: {} },
      costNote: '',
    }) satisfies OperationResult;

  it('applies the 1.10× latency and 0.9× throughput targets', () => {
    const [met, missed] = compare([
      result('update', 10, 100, 1),
      result('interrupt', 11, 90, 2, 'update'),
      result('spawn', 11.5, 89, 5, 'update'),
    ]);
    expect(met).toMatchObject({
      p50Ratio: 1.1,
      throughputRatio: 0.9,
      latencyMet: true,
      throughputMet: true,
      extraActions: 1,
    });
    expect(missed).toMatchObject({ latencyMet: false, throughputMet: false, extraActions: 4 });
    expect(met).not.toHaveProperty('floor');
  });

  it('adds the ratios to a host-routed floor beside the targets, which stay against the primitive', () => {
    const [send] = compare([
      result('signal', 10, 400, 1),
      result('relayed signal', 16, 160, 1),
      { ...result('sendMessage', 20, 120, 2, 'signal'), floor: 'relayed signal' },
    ]);
    expect(send).toMatchObject({
      p50Ratio: 2,
      throughputRatio: 0.3,
      latencyMet: false,
      throughputMet: false,
      floor: { primitive: 'relayed signal', p50Ratio: 1.25, throughputRatio: 0.75 },
    });
  });
});
