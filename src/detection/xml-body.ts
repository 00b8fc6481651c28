/**
 * The scan view of an XML request body. A body sent as XML is a document, not HTML: its element
 * and attribute names are the API's vocabulary (`<link href>` in an Atom feed, `<svg>` in an SVG
 * upload, `<java.Runtime>` as an element name), and what an attacker controls are the values.
 * Like a WAF's XML body processor, svc therefore scans the values of a well-formed XML body
 * (text, CDATA, attribute values, comments, processing instructions, the DOCTYPE) and drops the
 * markup, except what is active content wherever XML is rendered: script-bearing elements
 * (`<script>`, `<iframe>`, `<foreignObject>`, …) are kept whole, and event-handler and URL
 * attribute names are kept with their values.
 *
 * Anything the strict parser refuses (HTML soup sent as XML, an undefined entity such as an XXE
 * reference, a body without a single root element) is scanned raw, as before.
 */
import { SaxesParser } from 'saxes';
import { MAX_SCAN_LENGTH } from './normalize/index.ts';

/** XML media types: text/xml, application/xml, application/<anything>+xml (Atom, RSS, SOAP, SVG …). */
const XML_MEDIA_TYPE = /^\s*(?:text\/xml|application\/xml|[a-z]+\/[a-z0-9!#$&^_.-]+\+xml)\s*(?:;|$)/i;

/** Elements that run script or load active content where XHTML or SVG is rendered. */
const ACTIVE_ELEMENTS = new Set([
  'script', 'iframe', 'frame', 'frameset', 'object', 'embed', 'applet', 'foreignobject', 'handler', 'listener',
  'base', 'meta', 'form', 'import', 'portal', 'xml', 'html', 'body', 'include',
]);

/** Attribute names that run script or load a URL; kept with their value. */
const ACTIVE_ATTRIBUTE = /^(?:on[a-z]+|href|xlink:href|src|srcdoc|action|formaction|data|style|datasrc|dynsrc|lowsrc|background|implementation|values|to|from|by)$/i;

export function isXmlContentType(contentType: string | undefined): boolean {
  return contentType !== undefined && XML_MEDIA_TYPE.test(contentType);
}

function localName(qualified: string): string {
  const colon = qualified.indexOf(':');
  return (colon >= 0 ? qualified.slice(colon + 1) : qualified).toLowerCase();
}

/** The values of a well-formed XML document, one entry per node; null when it is not well-formed. */
export function xmlScanView(body: string): string[] | null {
  // Larger bodies are cut by normalization, so they could not parse whole: scanned raw.
  if (body.length > MAX_SCAN_LENGTH) return null;
  const lines: string[] = [];
  // Adjacent text and CDATA of one element form one value ("javas]]><![CDATA[cript:" reads whole).
  let run = '';
  const flush = () => {
    if (run.trim() !== '') lines.push(run);
    run = '';
  };
  const parser = new SaxesParser({ position: false });
  parser.on('text', (text) => {
    run += text;
  });
  parser.on('cdata', (text) => {
    run += text;
  });
  parser.on('opentag', (tag) => {
    flush();
    const active = ACTIVE_ELEMENTS.has(localName(tag.name));
    const kept: string[] = [];
    for (const [name, value] of Object.entries(tag.attributes)) {
      // Namespace declarations are not data; an active element keeps them (`<x:script xmlns:x=…>`).
      if (!active && /^xmlns(?::|$)/i.test(name)) continue;
      if (active || ACTIVE_ATTRIBUTE.test(name)) kept.push(`${name}="${value}"`);
      else if (value.trim() !== '') lines.push(`=${value}`);
    }
    if (active) lines.push(`<${tag.name}${kept.length > 0 ? ' ' + kept.join(' ') : ''}>`);
    else if (kept.length > 0) lines.push(kept.join(' '));
  });
  parser.on('closetag', (tag) => {
    flush();
    if (ACTIVE_ELEMENTS.has(localName(tag.name))) lines.push(`</${tag.name}>`);
  });
  parser.on('comment', (text) => {
    flush();
    lines.push(`<!--${text}-->`);
  });
  parser.on('processinginstruction', ({ target, body: instruction }) => {
    flush();
    lines.push(`<?${target} ${instruction}?>`);
  });
  parser.on('doctype', (text) => {
    flush();
    lines.push(`<!DOCTYPE${text}>`);
  });
  try {
    parser.write(body).close();
  } catch {
    return null;
  }
  flush();
  return lines;
}
