/**
 * OpenAI-style message content: a string, null (an assistant turn that only calls tools), or an
 * array of parts — `{ type: "text", text }` and, in user messages, `{ type: "image_url",
 * image_url: { url, detail? } | url }`. svc normalizes it to one text (the text parts joined
 * with "\n", which is what screening, PII redaction and token estimates read) plus the images in
 * order after it (`ChatMessage.images`), so a part can never bypass redaction or screening.
 * Image URLs are passed to the provider, never fetched by svc: only `https:` and
 * `data:image/<type>;base64,` URLs are accepted.
 */
import { SvcError } from '../platform/errors.ts';
import type { ChatMessage, ImageInput } from './contract.ts';
import type { CompletionBody } from './schemas.ts';

type BodyMessage = CompletionBody['messages'][number];
type BodyContent = BodyMessage['content'];

const IMAGE_URL = /^(?:https:\/\/[^\s]+|data:image\/[a-z0-9.+-]{1,32};base64,[A-Za-z0-9+/=]+)$/;

/** The text of a content value: a string as is, text parts joined with "\n", null as "". */
export function contentText(content: BodyContent): string {
  if (content === null) return '';
  if (typeof content === 'string') return content;
  let text = '';
  let first = true;
  for (const part of content) {
    if (part.type !== 'text') continue;
    text = first ? part.text : `${text}\n${part.text}`;
    first = false;
  }
  return text;
}

function invalid(field: string, reason: string, message: string): SvcError {
  return new SvcError('VALIDATION_FAILED', { message, details: { field, reason } });
}

/** Body messages → the normalized ChatMessage list (throws VALIDATION_FAILED naming the part). */
export function normalizeMessages(messages: readonly BodyMessage[]): ChatMessage[] {
  return messages.map((message, index) => {
    const { content, ...rest } = message;
    const normalized: ChatMessage = { ...rest, content: contentText(content) };
    if (!Array.isArray(content)) return normalized;
    const images: ImageInput[] = [];
    content.forEach((part, partIndex) => {
      if (part.type !== 'image_url') return;
      const field = `body.messages[${index}].content[${partIndex}].image_url`;
      if (message.role !== 'user') throw invalid(field, 'image_not_allowed', `images are accepted in user messages only (message ${index} has role "${message.role}")`);
      const image = typeof part.image_url === 'string' ? { url: part.image_url } : part.image_url;
      if (!IMAGE_URL.test(image.url)) throw invalid(`${field}.url`, 'invalid_image_url', 'image_url.url must be an https:// URL or a data:image/<type>;base64,… URL');
      images.push(image.detail === undefined ? { url: image.url } : { url: image.url, detail: image.detail });
    });
    if (images.length > 0) normalized.images = images;
    return normalized;
  });
}
