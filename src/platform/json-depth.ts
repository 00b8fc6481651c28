/**
 * How deep a JSON text nests, checked before it is parsed. Code that walks a parsed body
 * recursively (detection's normalization, schema compilers, canonical JSON, the MCP inspector)
 * would overflow the stack on a body nested thousands deep, and that would surface as a 500.
 * A linear scan of the text refuses such a body first; strings are skipped, escapes honoured.
 */

/** Deepest nesting of objects and arrays a client's JSON may have: far beyond any real payload (JSON Schemas, OpenAPI documents, tool arguments nest a few dozen levels at most). */
export const MAX_JSON_DEPTH = 128;

/** Whether `text`, read as JSON, nests objects and arrays deeper than `limit`. */
export function jsonNestedDeeper(text: string, limit = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c) index += 1; // backslash: skip the escaped character
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) {
      inString = true;
    } else if (code === 0x7b || code === 0x5b) {
      depth += 1;
      if (depth > limit) return true;
    } else if (code === 0x7d || code === 0x5d) {
      depth -= 1;
    }
  }
  return false;
}
