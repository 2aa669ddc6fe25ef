import { temporal } from '@temporalio/proto';

type History = temporal.api.history.v1.IHistory;
const HistoryType = temporal.api.history.v1.History;

/**
 * A history as plain JSON (protobuf object form: 64-bit ints and bytes as strings, enums by name).
 * Not `historyToJSON`: in this install @temporalio/common and @temporalio/proto each carry their own
 * protobufjs 8, and the proto3-JSON converter of one rejects the types of the other ("type must be a Type").
 */
export function historyToFixture(history: History): unknown {
  return HistoryType.toObject(HistoryType.fromObject(history), {
    longs: String,
    bytes: String,
    enums: String,
    defaults: false,
  });
}

/** The History a fixture holds, ready for `Worker.runReplayHistory`. */
export function historyFromFixture(fixture: unknown): temporal.api.history.v1.History {
  return HistoryType.fromObject(fixture as Record<string, unknown>);
}

/** A recorded history file: the workflow id it ran under and its events. */
export interface HistoryFixture {
  workflowId: string;
  workflowType: string;
  history: unknown;
}

/** The patch ids a run's markers record (what `patched()` answered true to). */
export function patchesOf(events: readonly temporal.api.history.v1.IHistoryEvent[]): string[] {
  return events.flatMap((event) => {
    const data = event.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
    return data ? [(JSON.parse(Buffer.from(data).toString('utf8')) as { id: string }).id] : [];
  });
}
