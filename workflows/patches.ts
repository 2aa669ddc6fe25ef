/**
 * Every patch id of the workflow code, each with the change it guards (SPEC S7.4, S7.6). Protocol v1 is
 * the one clean break: it starts with none, and its golden histories (test/fixtures/histories/v1-*)
 * replay as recorded. From v1 on, a change that would make a recorded history replay differently is
 * guarded by `patched(patches.<name>)` with its entry here, and histories of the new path are recorded
 * beside the v1 ones (`npx tsx scripts/record-histories.ts --add <name>` keeps the runs that took the
 * patch, as `<name>-*.json`), and the v1 ones keep replaying.
 * test/workflows/patches.test.ts checks that no workflow calls `patched` with an id not listed here.
 *
 * A change that every thread of a tree takes may instead be decided once, by the client that attaches
 * the root, and carried in the workflows' inputs (root → every thread it starts → continue-as-new): a
 * recorded history replays the path its input names, and no thread pays the `TemporalChangeVersion`
 * upsert (a billable action) that `patched` adds to each workflow. Those features:
 * - `usageLedger` (RootRunInput, AgentInput; SPEC S11.3): a model call holds its reservation (its
 *   maximum output, which the provider is told, and its input's estimate) before it starts, refused
 *   when that would pass a budget, and settles at what the provider reported (`AgentControls.calls`),
 *   instead of being charged after it ran.
 * - `approvalPolicy` (RootRunInput, AgentInput; SPEC S11.4): the tree's approval policy, the newest the
 *   workflow has (carried through continue-as-new). With it, every kernel's tool calls pass one
 *   approval gate (workflows/approval-gate.ts): a scripted `tool` step of a `needsApproval` tool asks
 *   first (before, it ran without approval), the model kernel asks as the policy says. Its histories
 *   are recorded beside the v1 ones (`record-histories.ts --approval`, `approvalPolicy-*.json`).
 * - `callSizedAllowance` (RootRunInput, AgentInput; SPEC S6.4): a thread's allowance refills ask for four
 *   of its latest call's reservations when that is more than the fixed grant (20,000 tokens), and start
 *   once it holds less than two of them. Before it, a thread with a long transcript (a reservation of
 *   ~78,000 tokens at 144 KiB) asked its root before nearly every model call: 2 round trips per 8-step
 *   turn in the bench's agent step, on the step's path.
 * - `transcriptDelta` (RootRunInput, AgentInput): a model call carries only the transcript entries after
 *   the ones its thread's previous call sent (`transcriptBase`: a key and a count); the model activity's
 *   worker keeps each thread's transcript (activities/transcript-cache.ts) and, not keeping it, reads it
 *   with the thread's `model-transcript` query. Before it, every call carried the whole transcript
 *   (25–93 KB in the agent-step bench, up to 144 KiB): written to history, sent and decoded per step.
 * - a budget in US dollars (`DelegationGrant.budgetUsd` in RootRunInput, a spawn's `limits.budgetUsd`;
 *   `AgentInput.dollarBudget`; SPEC S11.3): model calls also hold micro-dollars at the worker's prices
 *   (a `modelPrice` local activity once per run), threads keep a second allowance and report it. Its
 *   histories: `record-histories.ts --budgets`, `budgets-*.json`, which hold `refusedCallGivesBack` too.
 * - `outsideEndsCheckMs` (RootRunInput; SPEC S4.4): a run that starts with sub-agents of its earlier runs
 *   live asks every that many ms whether their workflows still run (a timer and the `threadWorkflowEnds`
 *   activity) and winds down those that ended (workflows/outside-ends.ts `watch`), until none is left.
 *   Its histories: `record-histories.ts --outside-ends-check`, `outsideEndsCheckMs-*.json`.
 * - `turnTokens` (RootRunInput, AgentInput; SPEC S6.4): a turn's outcome (`latestTurn`, `wait`, its
 *   report to the root) counts the input and output tokens its model calls reported (and a scripted
 *   reply's `tokens`), also when it fails or is interrupted; before it, `tokens` was 0 but for replies
 *   of histories recorded before `scriptedTokensCharged`. No command changes, only that number.
 */
export const patches = {
  /**
   * SPEC S5.9: a settled interaction's mirror in the root's conversation is settled by the thread's own
   * conversation, which made the mirror: the thread's settle says so (`settleMirror`), and the
   * conversation forwards it. The thread's task that takes an answer sends one settle signal instead of
   * two (its conversation's and the root's), the same number of actions in all. Only the thread asks
   * `patched`: the conversation follows the signal, which is in its history, so it replays the same
   * whatever code its thread ran.
   */
  mirrorSettledByConversation: 'mirrorSettledByConversation',
  /**
   * SPEC S7.3: a root run, agent or conversation that is due to continue as new less than
   * `minimumRunLifetimeMs` after its execution time waits out the rest first (a timer; the run keeps
   * serving meanwhile), so Temporal never holds its successor's first workflow task back. Asked only on
   * that path (workflows/run-lifetime.ts), so a run that lived longer pays no marker.
   */
  continueAsNewPaced: 'continueAsNewPaced',
  /**
   * SPEC S11.3: a thread whose model call its token budget refused gives back what it still holds (less
   * than that call) in the background, so threads still running can spend it: a tree's budget is used up
   * to about one call's hold instead of one per thread. Asked only on that path. A thread's allowance in
   * micro-dollars (a budget in dollars, which came later) always gives back.
   */
  refusedCallGivesBack: 'refusedCallGivesBack',
  /**
   * SPEC S3.5, S4.8: a cancel request from Temporal (the Web UI's Cancel, `temporal workflow cancel`,
   * a client's `handle.cancel()`) stops a root run as `shutdown` does and an agent as `close` does: its
   * thread is reported cancelled (the root frees its slot), its conversation says so, and the run then
   * ends as cancelled. Before it, the request tore the workflow down where it stood: the root kept an
   * agent listed and counted live, and a root's sub-agents and conversations ran on. Asked only on that
   * path (workflows/cancel-request.ts).
   */
  cancelRequestStops: 'cancelRequestStops',
  /**
   * SPEC S3.5: a cancel request that comes while a workflow is ending by itself (a close, a shutdown, an
   * idle timeout) lets the ending finish, then the run ends as cancelled. Before it, the request tore the
   * ending down: an agent closed by its root run — which sends the close signal and Temporal's cancel
   * request to each sub-agent at once, often landing in one task — ended without reporting its end, so
   * the root waited out its shutdown grace period (60 s by default) for it; a root cancelled during its
   * shutdown never answered the shutdown's caller. Asked only on that path (workflows/cancel-request.ts).
   */
  cancelWhileEnding: 'cancelWhileEnding',
  /**
   * SPEC S3.5, S7.3: a cancel request that comes while a root run or an agent prepares to continue as new
   * (waiting out its pacing timer, or draining its side effects and handlers) stops it as one during its
   * main loop does: the run stays, does what it had kept for its next run, and ends the way it stops (a
   * root shuts its tree down), then as cancelled. Before it, the request tore the run down where it
   * stood: a root left its sub-agents running and listed, an agent never reported its end. Asked only on
   * that path (workflows/cancel-request.ts `stopOn`).
   */
  cancelWhileReleasing: 'cancelWhileReleasing',
  /**
   * SPEC S4.8: an agent stopped by Temporal's cancel request (`cancelRequestStops`) takes its live
   * sub-agents with it, as a close does: when its end reaches the root run, the root closes the threads
   * below it. Before it, they ran on under an ended parent, still counted live. Asked only when the
   * cancelled agent has live sub-agents (workflows/root-host.ts `closeBelow`).
   */
  cancelClosesSubtree: 'cancelClosesSubtree',
  /**
   * A sub-agent whose workflow closed without reporting its end (terminated from the UI or CLI, timed
   * out, failed) is ended by the root run as Temporal closed it (`failed`, `cancelled`, or the status the
   * workflow returned): its slot comes back and a shutdown does not wait for it. Before it, the root
   * kept it live for good. Seen for sub-agents started by the root's current run (Temporal tells a
   * parent, and a run that continued as new is no longer one). Asked only on that path
   * (workflows/thread-starter.ts).
   */
  childCloseEnds: 'childCloseEnds',
  /**
   * SPEC S4.8, S5.10: a sub-agent whose workflow ended without reporting its end is wound down by the
   * root as its own ending would have: its live sub-agents are closed, and its conversation is told the
   * thread ended (with the thread's capability), so it completes after its retention. A close signal
   * that finds the thread's workflow gone (ended after the run that started it continued as new, which
   * Temporal no longer tells) confirms its end, so a shutdown does not wait out its grace period for it.
   * Before it, such a thread's sub-agents ran on, its conversation stayed open for good, and a shutdown
   * waited for it. Asked only on those paths (workflows/outside-ends.ts).
   */
  outsideEndsWindDown: 'outsideEndsWindDown',
  /**
   * SPEC S4.1, S4.8: a spawn refused for room (maxConcurrent) while threads started by the root's earlier
   * runs count live makes the root ask whether their workflows still run (the local activity
   * `threadWorkflowEnds`, at most once per 30 s); those that closed are ended as Temporal closed them and
   * wound down (`outsideEndsWindDown`), and the spawn is admitted again. Temporal tells a run only of the
   * closes of workflows it started itself, so before it a sub-agent terminated after its root continued
   * as new held its slot until it was closed. Asked only on that path (workflows/outside-ends.ts).
   */
  earlierRunEndsChecked: 'earlierRunEndsChecked',
  /**
   * SPEC S4.7: a wait on threads that are not idle, one of them started by the root's earlier runs,
   * first asks whether their workflows still run (`threadWorkflowEnds`, at most once per 30 s, shared
   * with `earlierRunEndsChecked`) and winds down those that closed. Before it, a wait on a sub-agent
   * terminated mid-turn after its root continued as new ran to its timeout and answered it `running`.
   * Asked only on that path (workflows/outside-ends.ts).
   */
  earlierRunEndsOnWait: 'earlierRunEndsOnWait',
  /**
   * SPEC S4.1, S4.7: the ask of `earlierRunEndsChecked` and `earlierRunEndsOnWait` is an activity, and a
   * wait runs it beside its own condition (scheduled in one task with the wait's timer) instead of
   * awaiting it first: the wait answers once a thread is idle or ended — what the ask finds included — or
   * at its caller's `timeoutMs`. Before it, the ask was a local activity: while one ran (a busy server,
   * up to 3 attempts of 30 s) the SDK held the root's workflow task open, completing it only every 8 s
   * to keep it alive, so every operation on the root waited with it, and a wait answered past its
   * timeout. Asked only on those paths (workflows/outside-ends.ts).
   */
  earlierRunEndsAskedBeside: 'earlierRunEndsAskedBeside',
  /**
   * SPEC S3.9, S3.10: a conversation's page workflows are asked for their entries, and deliver them, with
   * a token each page holds in its input and its conversation in its reference to it (a UUID of the
   * conversation's). Before it, anyone who could signal and list workflows could ask a page that was not
   * the oldest to deliver: the conversation dropped it as out of turn, the page completed, and its
   * notifications were lost while the conversation waited for it for good; a forged delivery replaced the
   * oldest page's notifications. Asked when a page is cut (workflows/conversation-workflow.ts); pages cut
   * before it have no token and are asked and answered as before.
   */
  pageTokens: 'pageTokens',
  /**
   * SPEC S5.10: a thread's conversation that retires with pages nobody read (its retention passed) asks
   * each page workflow to cancel, so it ends too. Before it, those pages waited for good, each an open
   * workflow for ever. Asked only when pages are left (workflows/conversation-paging.ts).
   */
  retiredPagesEnd: 'retiredPagesEnd',
  /**
   * SPEC S3.10: a spawn update that names no request id (a raw client's; agents-kit's own client always
   * names one) is given one made from its update id, so the registry knows it on every later run: a
   * retry of the update after the root continued as new returns the thread the first attempt spawned.
   * Before it, that retry spawned a second thread (Temporal knows update ids only within a run). Asked
   * only for such spawns (workflows/root-updates.ts).
   */
  spawnKeyedByUpdate: 'spawnKeyedByUpdate',
  /**
   * SPEC S3.9: a thread's conversation (the root's too) takes an item that names a thread (an interaction,
   * a status) only from that thread itself, or a `child-spawned` status from its parent
   * (`misattributed` in domain/conversation-schemas.ts). Before it, any proven thread of the tree could
   * publish into the root's conversation approvals "of" a sibling or of the root, which nobody could
   * answer, so they stayed pending for good. Asked only for such a publish (workflows/conversation-workflow.ts);
   * a publish update is refused in its validator, which leaves no trace in history.
   */
  publisherSpeaksForItself: 'publisherSpeaksForItself',
  /**
   * SPEC S3.10: a full mailbox still takes one short message with `triggerTurn` while none of its
   * waiting messages asks for a turn (domain/mailbox.ts `triggerRoomBytes`), so the turn that takes them
   * can be asked for. Before it, that message was refused too and the thread waited for good (a peer
   * could wedge it by filling its mailbox with messages that ask for no turn). Asked only when that room
   * is used (workflows/thread-operations.ts); a client's update takes it in its validator as well.
   */
  triggerTurnRoom: 'triggerTurnRoom',
  /**
   * SPEC S3.9: a conversation without an owner (a standalone one, or one anybody started under a thread's
   * conversation id, e.g. after that thread's conversation completed, S5.10) gives a reader that proves a
   * capability no item: a receive that waited answers `idle`, and the reader's next poll is refused in
   * its validator (workflows/ownerless-readers.ts). And a thread no longer claims an owner-less
   * conversation that already took items nobody proved. Before it, both were read as the thread's own: a
   * forged item reached the tree's receivers. Asked only for such a receive or claim
   * (workflows/conversation-workflow.ts).
   */
  ownerlessNotForTrees: 'ownerlessNotForTrees',
  /**
   * SPEC S6.4: a scripted reply's `tokens` are charged when the reply is reached, before its turn
   * completes (workflows/scripted-kernel.ts `reply`, `AgentControls.chargeReported`): a thread spends
   * them from its allowance and asks its root for what it lacks, which the root grants while the budget
   * has room left (even past it) and refuses once it is used up, so the reply that goes past the budget
   * counts and fails its turn with QuotaExceeded, and later ones fail counting nothing. Its turn's
   * outcome reports no tokens then. Before it, the tokens were counted only from the turn's end: every
   * turn completed, and a tree passed its budget by any number of them. Asked only for a reply with
   * tokens.
   */
  scriptedTokensCharged: 'scriptedTokensCharged',
  /**
   * SPEC S4.4: a sub-agent whose report to its root run finds the root's workflow gone (terminated from
   * outside, which runs none of the root's code, so it closed nobody) ends as the root's close would end
   * it: its turn is cancelled, its conversation says so, and it ends cancelled. Before it, such threads
   * ran on, turns and all, outside any budget or admission, until their idle timeout. Asked only on that
   * path (workflows/agent-workflow.ts `rootGone`).
   */
  rootGoneEndsThread: 'rootGoneEndsThread',
  /**
   * SPEC S5.2, S7.3: while a conversation has spill to cut into pages, it cuts one page per loop, beside
   * the due page's request, and continues as new once the spill is cut (or when Temporal suggests
   * it, or the run took its most updates). Before it, the loop started every page of the spill before
   * asking for one: a publisher outpacing page starts kept receivers waiting for seconds (30 s with
   * worker kills) with every item stored. Asked only when there is page work
   * (workflows/conversation-workflow.ts).
   */
  pagesBeforeContinuing: 'pagesBeforeContinuing',
  /**
   * SPEC S5.2, S7.3: a conversation due to continue as new (not pressed), its spill cut, asks for no
   * more pages and continues once the page it asked for has answered and the pages it started and asked
   * for have ended. Before it, such an answer or end often arrived while the run continued: the task
   * failed (UnhandledCommand), the worker replayed the run from its start, and the server refused every
   * update and signal meanwhile, so receivers backed off for 1.5–5 s at a continue-as-new. Asked only
   * when there is page traffic then (workflows/conversation-workflow.ts).
   */
  pageTrafficBeforeContinuing: 'pageTrafficBeforeContinuing',
  /**
   * SPEC S3.5: a root run or agent told to stop while it released for continue-as-new (a shutdown or
   * complete the root answered while it waited out its shortest life; a close signalled to an agent,
   * which no validator refuses) ends in that run, as when cancelled there. Before it the run continued as
   * new and the next run, not told, lived on until its idle timeout: a shutdown did not end the root run,
   * a closed agent stayed (its root reported it unconfirmed). Asked only on that path.
   */
  stopWhileContinuing: 'stopWhileContinuing',
  /**
   * SPEC S3.10: an update id longer than the answer log keeps (200 characters; Temporal takes any) is
   * remembered by its hash, so its retry on a later run is answered, not applied again (a message
   * delivered twice, an interrupt of the next turn, root messages taken and lost). Before it such an
   * update was not remembered. Asked only for such an id (workflows/run-lifetime.ts `updateKey`).
   */
  longUpdateIdsRemembered: 'longUpdateIdsRemembered',
  /**
   * SPEC S3.10, S11.4: a `set-approval-policy` update is remembered by its update id in the root's answer
   * log, so its retry on a later run gets its answer instead of applying the change again (which
   * reverted any newer change). Asked at each such update (workflows/root-updates.ts).
   */
  policyChangeRemembered: 'policyChangeRemembered',
  /**
   * SPEC S5.9, S5.10: a conversation takes the settle of a question nobody answered (it timed out, its
   * turn was interrupted or its thread ended first), whose answer has empty text: the question stops
   * being offered, here and in the root's mirror, and the record says it went unanswered. Before it such
   * a settle was dropped as malformed and the question stayed pending in both conversations for good.
   * Asked only for such a settle (workflows/conversation-settlements.ts).
   */
  unansweredQuestionsSettle: 'unansweredQuestionsSettle',
  /**
   * SPEC S5.9, S5.10: a thread's end, reported to its conversation by the thread's workflow (or by its
   * root for a thread terminated from outside), settles the interactions the thread left pending there
   * as unanswered, records each, and settles their mirrors in the root's conversation. Before it they
   * stayed pending: offered to every receiver, unanswerable (the thread had ended), and the root's
   * conversation never completed. Asked only when there are such interactions
   * (workflows/conversation-owner-end.ts).
   */
  ownerEndSettlesInteractions: 'ownerEndSettlesInteractions',
  /**
   * SPEC S5.4, S5.9: a thread whose publish finds its conversation ended (cancelled or terminated from
   * outside while the thread lives) denies the interactions it waits on at once — nobody can see or
   * answer them: the mirror in the root's conversation is made by the thread's conversation. Before it
   * they waited for their timeout (10 minutes by default) with nothing listed or published. Asked when
   * a publish signal fails so (workflows/thread-conversation.ts).
   */
  conversationGoneDenies: 'conversationGoneDenies',
  /**
   * SPEC S10.1: a watch of live output whose thread has ended answers at once, saying so (the watcher's
   * iteration ends), instead of waiting out its long-poll: nothing streams from an ended thread. Before
   * it a watcher of an ended thread polled for good, each poll a billable update. Asked only for a watch
   * that arrives once the thread has ended (workflows/live-output-handlers.ts).
   */
  watchEndsWithThread: 'watchEndsWithThread',
  /**
   * SPEC S10.1: a watch of live output already waiting when its thread's end arrives answers then,
   * saying so, instead of at the end of its long-poll (up to 5 s later, and a second poll). Asked only
   * when such a watch is waiting (workflows/live-output-handlers.ts `threadEnded`).
   */
  watchWakesAtThreadEnd: 'watchWakesAtThreadEnd',
  /**
   * SPEC S4.7: the root kernel's wait on a thread its message triggered counts once that message's turn
   * has ended (the receipt names it), not while the thread is idle before it: the turn's start may reach
   * the root after the wait does. Before it such a wait could answer at once with the turn before.
   * Asked only by a wait that carries such a turn (workflows/root-controls.ts). An agent's waits need
   * none: the root's answer is in the agent's history, and the root counts a `turns` field it is sent.
   */
  rootWaitCountsAskedTurns: 'rootWaitCountsAskedTurns',
  /**
   * SPEC S4.6, S4.7: a model's `wait_agents` naming its own thread, or its `interrupt_agent` of itself,
   * is refused as a tool error (the root's model, acting with root authority, interrupted its own turn,
   * which ended with no answer; a wait on itself blocked to its timeout). Asked only by such a call
   * (workflows/model-kernel.ts `checkNotSelf`).
   */
  modelToolsSpareSelf: 'modelToolsSpareSelf',
} as const satisfies Readonly<Record<string, string>>;
