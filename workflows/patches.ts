/**
 * Every patch id of the workflow code, each with the change it guards (SPEC S7.4, S7.6). Protocol v1 is
 * the one clean break: it starts with none, and its golden histories (test/fixtures/histories/v1-*)
 * replay as recorded. From v1 on, a change that would make a recorded history replay differently is
 * guarded by `patched(patches.<name>)` with its entry here, and histories of the new path are recorded
 * beside the v1 ones (`npx tsx scripts/record-histories.ts --add <name>`), which keep replaying.
 * test/workflows/patches.test.ts checks that no workflow calls `patched` with an id not listed here.
 */
export const patches: Readonly<Record<string, string>> = {};
