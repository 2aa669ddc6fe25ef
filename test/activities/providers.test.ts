import { createModelProvider, loadModelConfig } from '../../activities';
import { KitError } from '../../domain/errors';

function protocolError(environment: Record<string, string>): KitError {
  try {
    loadModelConfig(environment);
  } catch (error) {
    expect(error).toBeInstanceOf(KitError);
    expect((error as KitError).kind).toBe('Protocol');
    return error as KitError;
  }
  throw new Error('expected a Protocol error');
}

test('without configuration the scripted model is used, and says so', () => {
  const provider = createModelProvider(loadModelConfig({}));
  expect(provider).toMatchObject({ name: 'scripted', scripted: true, defaultModel: 'agents-kit-scripted' });
  expect(provider.model('anything').modelId).toBe('agents-kit-scripted');
});

test('each provider is chosen by configuration', () => {
  expect(
    createModelProvider(
      loadModelConfig({
        AGENTS_KIT_MODEL_PROVIDER: 'openai',
        AGENTS_KIT_MODEL: 'gpt-4o-mini',
        OPENAI_API_KEY: 'k',
      }),
    ).model('gpt-4o-mini').provider,
  ).toMatch(/openai/);
  expect(
    createModelProvider(
      loadModelConfig({
        AGENTS_KIT_MODEL_PROVIDER: 'anthropic',
        AGENTS_KIT_MODEL: 'claude',
        ANTHROPIC_API_KEY: 'k',
      }),
    ).model('claude').provider,
  ).toMatch(/anthropic/);
  const local = createModelProvider(
    loadModelConfig({
      AGENTS_KIT_MODEL_PROVIDER: 'openai-compatible',
      AGENTS_KIT_MODEL: 'llama3.1',
      AGENTS_KIT_MODEL_BASE_URL: 'http://127.0.0.1:11434/v1',
    }),
  );
  expect(local).toMatchObject({ name: 'openai-compatible', defaultModel: 'llama3.1', scripted: false });
});

test('bad configuration is a Protocol error naming the variable', () => {
  expect(protocolError({ AGENTS_KIT_MODEL_PROVIDER: 'gemini' }).message).toContain(
    'AGENTS_KIT_MODEL_PROVIDER',
  );
  expect(protocolError({ AGENTS_KIT_MODEL_PROVIDER: 'openai', AGENTS_KIT_MODEL: 'x' }).message).toContain(
    'OPENAI_API_KEY',
  );
  expect(protocolError({ AGENTS_KIT_MODEL_PROVIDER: 'anthropic', ANTHROPIC_API_KEY: 'k' }).message).toContain(
    'AGENTS_KIT_MODEL',
  );
  expect(
    protocolError({ AGENTS_KIT_MODEL_PROVIDER: 'openai-compatible', AGENTS_KIT_MODEL: 'x' }).message,
  ).toContain('AGENTS_KIT_MODEL_BASE_URL');
  expect(
    protocolError({
      AGENTS_KIT_MODEL_PROVIDER: 'openai-compatible',
      AGENTS_KIT_MODEL: 'x',
      AGENTS_KIT_MODEL_BASE_URL: 'not a url',
    }).message,
  ).toContain('AGENTS_KIT_MODEL_BASE_URL');
});
