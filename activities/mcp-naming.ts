import { createHash } from 'node:crypto';
import {
  isProviderToolName,
  maxProviderToolName,
  mcpNameSeparator,
  sanitizeToolPart,
} from '../domain/mcp-names';

/** Eight hex digits of a tool's own name: the tie-break of names that would otherwise collide. */
const digest = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 8);

/**
 * The names a server's tools are offered under (SPEC S11.1): `<server>__<tool>`, provider-legal
 * (`[A-Za-z0-9_-]`, at most 64 characters). A tool whose name is legal and fits keeps it. Every other
 * tool — one with other characters, one too long, or one whose cleaned name another tool already has —
 * gets its cleaned, shortened name plus `_` and eight hex digits of its MCP name. The result depends only
 * on the set of names (never on the order the server lists them in), so the model activity and a tool
 * activity on another worker name the same list alike.
 *
 * @returns the namespaced name of each of `tools` (MCP name → namespaced name); a name listed twice
 * counts once.
 */
export function namespaceTools(server: string, tools: readonly string[]): Map<string, string> {
  const prefix = `${server}${mcpNameSeparator}`;
  const unique = [...new Set(tools)].sort();
  const plain = (tool: string) => `${prefix}${sanitizeToolPart(tool)}`;
  const keepsOwn = (tool: string) => isProviderToolName(`${prefix}${tool}`);
  // How many tools would take each plain (cleaned, cut) name: a name two want is nobody's as it is,
  // except for the one tool whose own name it is.
  const wanted = new Map<string, number>();
  for (const tool of unique) {
    const name = plain(tool).slice(0, maxProviderToolName);
    wanted.set(name, (wanted.get(name) ?? 0) + 1);
  }
  const names = new Map<string, string>();
  const taken = new Set<string>();
  for (const tool of unique.filter(keepsOwn)) {
    names.set(tool, `${prefix}${tool}`);
    taken.add(`${prefix}${tool}`);
  }
  for (const tool of unique.filter((candidate) => !keepsOwn(candidate))) {
    const name = plain(tool);
    if (name.length <= maxProviderToolName && wanted.get(name) === 1 && !taken.has(name)) {
      names.set(tool, name);
      taken.add(name);
      continue;
    }
    // Sorted order makes a (vanishingly rare) clash of digests resolve the same way everywhere.
    for (let attempt = 0; ; attempt++) {
      const suffix = `_${digest(attempt === 0 ? tool : `${tool}#${attempt}`)}`;
      const candidate = `${name.slice(0, maxProviderToolName - suffix.length)}${suffix}`;
      if (!taken.has(candidate)) {
        names.set(tool, candidate);
        taken.add(candidate);
        break;
      }
    }
  }
  return names;
}
