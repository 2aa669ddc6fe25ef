// Helpers of the continue-as-new bound tests (test/domain/*-carry-bound, continue-as-new-input).
import { messageEnvelopeBytes, triggerRoomBytes } from '../../domain/mailbox';

/** `n` control characters: 6 bytes each as JSON, the most any character takes. */
export const worst = (n: number) => '\u0001'.repeat(n);
const hex = (n: number) => n.toString(16).padStart(32, '0');
/** A well-formed id of `prefix` numbered `n` (`thread_000…01`). */
export const id = <P extends string>(prefix: P, n: number) => `${prefix}_${hex(n)}` as `${P}_${string}`;
/** The longest worst content a full mailbox still takes in a message with `triggerTurn`. */
export const worstAskingContent = () => worst(Math.floor((triggerRoomBytes - messageEnvelopeBytes - 2) / 6));
