import { z } from 'zod';
import { KitError, parseInput } from '../domain/errors';

/** Environment of every agents-kit process (SPEC S8.3), validated at start-up. */
export const EnvironmentConfig = z.object({
  TEMPORAL_ADDRESS: z.string().min(1).default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_API_KEY: z.string().min(1).optional(),
  TEMPORAL_TLS: z.enum(['true', 'false']).optional(),
  TEMPORAL_TLS_CERT_PATH: z.string().min(1).optional(),
  TEMPORAL_TLS_KEY_PATH: z.string().min(1).optional(),
  AGENTS_KIT_TASK_QUEUE: z.string().min(1).default('agents-kit'),
});
export type EnvironmentConfig = z.infer<typeof EnvironmentConfig>;

export function loadConfig(environment: Record<string, string | undefined> = process.env): EnvironmentConfig {
  const config = parseInput(EnvironmentConfig, environment, 'environment');
  if (Boolean(config.TEMPORAL_TLS_CERT_PATH) !== Boolean(config.TEMPORAL_TLS_KEY_PATH)) {
    throw KitError.protocol(
      'environment: set both TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH, or neither',
    );
  }
  return config;
}
