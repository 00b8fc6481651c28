/**
 * What the T5 baseline of completions observes (detection's subject profiles,
 * docs/detection.md "T5 behavioural baselines"): per org and end user (the body's `user`, as
 * OpenAI's field; Anthropic's `metadata.user_id` on the compatible surface), else per API key (or
 * dashboard user): the request rate and hour of day, the prompt's size in characters, the tokens
 * it may spend (the budget's estimate: prompt tokens plus max_tokens or the default reserve), the
 * number of messages, the model asked for, and the tools it declares.
 *
 * Posture: the observation runs beside screening (in memory it is synchronous; on Redis its round
 * trips overlap the detection engine's work), and its anomalies join the completion's threat
 * decision as weak evidence (`withBehaviour`). An error in it never fails a completion.
 */
import type { ProfileEvent } from '../detection/index.ts';
import type { Caller } from './admission.ts';
import { DEFAULT_COMPLETION_RESERVE } from './budget.ts';
import { contentText } from './content.ts';
import type { CompletionBody } from './schemas.ts';

/** The subject a completion is attributed to, and how explanations name it. */
export function completionSubject(body: CompletionBody, caller: Caller): { subject: string; label: string } {
  if (typeof body.user === 'string' && body.user !== '') return { subject: `ai:${caller.orgId}:user:${body.user}`, label: 'this end user' };
  if (caller.keyId !== undefined && caller.keyId !== null) return { subject: `ai:${caller.orgId}:key:${caller.keyId}`, label: 'this API key' };
  if (caller.userId !== undefined && caller.userId !== null) return { subject: `ai:${caller.orgId}:account:${caller.userId}`, label: 'this user' };
  return { subject: `ai:${caller.orgId}`, label: 'this org' };
}

/** One completion request as the baseline observes it. */
export function completionObservation(body: CompletionBody, caller: Caller): ProfileEvent {
  let characters = 0;
  for (const message of body.messages) characters += contentText(message.content).length;
  for (const source of body.sources ?? []) characters += typeof source === 'string' ? source.length : source.content.length;
  const { subject, label } = completionSubject(body, caller);
  return {
    subject,
    label,
    sizes: {
      prompt_chars: characters,
      // The budget's estimate (estimatePromptTokens) of what the request may spend.
      tokens: Math.ceil(characters / 4) + 4 * body.messages.length + (body.max_tokens ?? DEFAULT_COMPLETION_RESERVE),
      messages: body.messages.length,
    },
    values: {
      model: [`${body.provider ?? 'auto'}/${body.model}`],
      tools: (body.tools ?? []).map((tool) => ('function' in tool ? tool.function.name : tool.name)),
    },
  };
}
