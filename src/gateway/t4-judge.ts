/**
 * Detection T4 through the AI gateway: when DETECTION_T4_PROVIDER / DETECTION_T4_MODEL are set,
 * inputs the cheaper tiers leave in the uncertain band are shown to that model with the
 * deployment's own key for it (the provider's environment variable), through the same adapters
 * and pooled connections as completions. It is svc's own spend, not an org's: no org budget or
 * routing applies. Posture: a strict deadline (DETECTION_T4_TIMEOUT_MS); T4 fails open on
 * timeout or error and the decision says so (src/detection/ml/t4.ts).
 */
import { createT4, type T4Like } from '../detection/index.ts';
import type { DetectionT4Config } from '../platform/config.ts';
import { invokeCompletion, isProviderId } from './registry.ts';

/** Tokens the judge may answer with: the verdict is one short JSON object. */
const JUDGE_MAX_TOKENS = 120;

export function createT4Judge(config: DetectionT4Config, envKeys: Readonly<Record<string, string>>, allowPrivateTargets: boolean): T4Like {
  return createT4({ timeoutMs: config.timeoutMs, complete: createJudgeCompletion(config, envKeys, allowPrivateTargets) });
}

/**
 * The deployment's judge model as a plain completion function (prompt → text), for other
 * capabilities that escalate to it (verification's grounding tier 3). Same key, target and
 * deadline rules as T4 above.
 */
export function createJudgeCompletion(config: DetectionT4Config, envKeys: Readonly<Record<string, string>>, allowPrivateTargets: boolean): (prompt: string, signal: AbortSignal) => Promise<string> {
  const provider = config.provider;
  if (!isProviderId(provider)) throw new Error(`unknown judge provider ${provider}`);
  const target = { apiKey: envKeys[provider] ?? '', ...(config.baseUrl === null ? {} : { baseUrl: config.baseUrl }) };
  return async (prompt, signal) => {
    const result = await invokeCompletion(
      provider,
      { model: config.model, messages: [{ role: 'user', content: prompt }], max_tokens: JUDGE_MAX_TOKENS, temperature: 0, stream: false },
      target,
      { signal, timeoutMs: config.timeoutMs, publicOnly: config.baseUrl !== null && !allowPrivateTargets },
    );
    return result.content;
  };
}
