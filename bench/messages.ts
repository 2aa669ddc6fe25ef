import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

// Message definitions of the bench-only workflows (bench/workflows.ts), shared with the harness.

/** Bench parent: start a bench child with this workflow id; answers once the child has started. */
export const startBenchChildUpdate = defineUpdate<string, [string]>('bench-start-child');
/** Bench target: answers its argument at once (the update round trip). */
export const echoUpdate = defineUpdate<number, [number]>('bench-echo');
/** Bench target: one item pushed (the signal primitive; handler only records it). */
export const pushSignal = defineSignal<[number]>('bench-push');
/** Bench target: long-poll for the item after `seen` items; answers once it has been pushed. */
export const nextItemUpdate = defineUpdate<number, [number]>('bench-next-item');
/**
 * Bench relay: signals `item` to the bench target `targetId` and answers at once, without waiting for
 * the signal (the one hop a host adds: an update whose handler sends a signal on).
 */
export const relayUpdate = defineUpdate<number, [string, number]>('bench-relay');
/** Any bench workflow: finish. */
export const stopSignal = defineSignal<[]>('bench-stop');
/** Bench step workflow: start a turn of this many steps; answers at once, as sendMessage does. */
export const startTurnUpdate = defineUpdate<number, [number]>('bench-start-turn');
/** Bench step workflow: the turns it has finished. */
export const turnsDoneQuery = defineQuery<number>('bench-turns-done');
