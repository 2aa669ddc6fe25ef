import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { z } from 'zod';
import { ErrorKind, KitError, objectInput, parseInput } from '../domain/errors';
import { createScriptedModel } from './scripted-model';

const wordDelayRange = 'expected a whole number of milliseconds from 0 to 2000';

/**
 * Which model provider the worker uses (SPEC S6.3), from the environment:
 * `AGENTS_KIT_MODEL_PROVIDER` = `openai` | `anthropic` | `openai-compatible` (Ollama, vLLM, llama.cpp
 * server, …) | `scripted` (the default: a deterministic built-in model, so everything runs offline).
 * `AGENTS_KIT_SCRIPTED_WORD_DELAY_MS` (0 to 2000, default 0) paces the scripted model's streamed text a
 * word at a time, so a demo shows text arriving as a real model's would.
 */
export const ModelConfig = z
  .object({
    AGENTS_KIT_MODEL_PROVIDER: z
      .enum(['scripted', 'openai', 'anthropic', 'openai-compatible'])
      .default('scripted'),
    AGENTS_KIT_MODEL: z.string().min(1).optional(),
    AGENTS_KIT_MODEL_BASE_URL: z.url().optional(),
    AGENTS_KIT_MODEL_API_KEY: z.string().min(1).optional(),
    OPENAI_API_KEY: z.string().min(1).optional(),
    ANTHROPIC_API_KEY: z.string().min(1).optional(),
    AGENTS_KIT_SCRIPTED_WORD_DELAY_MS: z
      .string()
      .regex(/^\d{1,4}$/, wordDelayRange)
      .transform(Number)
      .pipe(z.number().max(2_000, wordDelayRange))
      .optional(),
  })
  .superRefine((config, context) => {
    const need = (field: keyof typeof config, why: string) => {
      if (!config[field]) context.addIssue({ code: 'custom', path: [field], message: `required ${why}` });
    };
    if (config.AGENTS_KIT_MODEL_PROVIDER === 'scripted') return;
    need('AGENTS_KIT_MODEL', `when AGENTS_KIT_MODEL_PROVIDER=${config.AGENTS_KIT_MODEL_PROVIDER}`);
    if (config.AGENTS_KIT_MODEL_PROVIDER === 'openai-compatible')
      need('AGENTS_KIT_MODEL_BASE_URL', 'for an OpenAI-compatible endpoint');
    if (config.AGENTS_KIT_MODEL_PROVIDER === 'openai' && !config.AGENTS_KIT_MODEL_API_KEY)
      need('OPENAI_API_KEY', 'for OpenAI');
    if (config.AGENTS_KIT_MODEL_PROVIDER === 'anthropic' && !config.AGENTS_KIT_MODEL_API_KEY)
      need('ANTHROPIC_API_KEY', 'for Anthropic');
  });
export type ModelConfig = z.infer<typeof ModelConfig>;

/** Reads and validates the model configuration; a bad value is a Protocol error naming the variable. */
export function loadModelConfig(environment: Record<string, string | undefined> = process.env): ModelConfig {
  const env = objectInput(environment, 'model configuration: the environment');
  const relevant = Object.fromEntries(
    Object.keys(ModelConfig.shape).map((key) => [key, env[key] || undefined]),
  );
  return parseInput(ModelConfig, relevant, 'model configuration');
}

/** A configured provider: the default model id, and a factory for a model by id. */
export interface ModelProvider {
  name: ModelConfig['AGENTS_KIT_MODEL_PROVIDER'];
  defaultModel: string;
  scripted: boolean;
  model(modelId: string): LanguageModelV3;
}

/** The settings that have a value: provider factories read a present `undefined` as a setting. */
function defined<Settings extends object>(
  settings: Settings,
): { [Key in keyof Settings]?: Exclude<Settings[Key], undefined> } {
  return Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined)) as never;
}

/** The provider the configuration names. */
export function createModelProvider(config: ModelConfig): ModelProvider {
  const apiKey = config.AGENTS_KIT_MODEL_API_KEY;
  const baseURL = config.AGENTS_KIT_MODEL_BASE_URL;
  const defaultModel = config.AGENTS_KIT_MODEL ?? 'agents-kit-scripted';
  switch (config.AGENTS_KIT_MODEL_PROVIDER) {
    case 'scripted':
      return {
        name: 'scripted',
        defaultModel,
        scripted: true,
        model: () => createScriptedModel({ wordDelayMs: config.AGENTS_KIT_SCRIPTED_WORD_DELAY_MS ?? 0 }),
      };
    case 'openai': {
      const openai = createOpenAI(defined({ apiKey: apiKey ?? config.OPENAI_API_KEY, baseURL }));
      return { name: 'openai', defaultModel, scripted: false, model: (id) => openai.chat(id) };
    }
    case 'anthropic': {
      const anthropic = createAnthropic(defined({ apiKey: apiKey ?? config.ANTHROPIC_API_KEY, baseURL }));
      return { name: 'anthropic', defaultModel, scripted: false, model: (id) => anthropic.languageModel(id) };
    }
    case 'openai-compatible': {
      if (!baseURL)
        throw new KitError(ErrorKind.Protocol, 'AGENTS_KIT_MODEL_BASE_URL is required for openai-compatible');
      const compatible = createOpenAICompatible({
        name: 'openai-compatible',
        baseURL,
        // Without it the endpoint need not report usage when it streams, and every call would count 0 tokens.
        includeUsage: true,
        ...defined({ apiKey }),
      });
      return {
        name: 'openai-compatible',
        defaultModel,
        scripted: false,
        model: (id) => compatible.chatModel(id),
      };
    }
  }
}
