/**
 * XML request bodies are scanned by their values (src/detection/xml-body.ts): the element and
 * attribute names of a feed, an SVG icon or a SOAP call are not attacks, while script-bearing
 * markup, payloads in values, XXE and HTML sent under an XML content type still are.
 */
import { describe, expect, it } from 'vitest';
import { createDetectionEngine, httpScanText } from '../../src/detection/index.ts';
import { isXmlContentType, xmlScanView } from '../../src/detection/xml-body.ts';

const engine = createDetectionEngine({ analysisCache: false });
const post = (contentType: string, body: string) =>
  engine.inspect({ kind: 'http', request: { method: 'POST', path: '/api/documents', headers: { host: 'api.example.com', 'content-type': contentType }, body } });

const ATOM = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Release notes</title>
  <link rel="alternate" type="text/html" href="https://example.org/releases"/>
  <link rel="self" href="https://example.org/releases.atom"/>
  <entry>
    <title>1.4.0</title>
    <link href="https://example.org/releases/1.4.0"/>
    <id>urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a</id>
    <updated>2026-11-20T18:30:02Z</updated>
    <content type="html">Faster &lt;b&gt;exports&lt;/b&gt;</content>
  </entry>
</feed>`;

describe('XML bodies: documents are not attacks', () => {
  it.each([
    ['an Atom feed with link elements', 'application/atom+xml', ATOM],
    ['an SVG icon', 'image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><style>.a{fill:#333}</style><circle class="a" cx="12" cy="12" r="10"/><title>Status</title></svg>'],
    ['a SOAP call', 'text/xml; charset=utf-8', '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><GetPrice><Item>Apples</Item></GetPrice></soap:Body></soap:Envelope>'],
    ['Java class names as element and attribute names', 'application/xml', '<config><java.lang.Runtime scope="app">on</java.lang.Runtime><entry java.io.File="ignored">x</entry></config>'],
  ])('%s is allowed', async (_name, contentType, body) => {
    const decision = await post(contentType, body);
    expect(decision.allowed, JSON.stringify(decision.patterns_matched)).toBe(true);
    expect(decision.categories).not.toContain('code-injection');
  });
});

describe('XML bodies: attacks are still stopped', () => {
  it.each([
    ['an SVG with an onload handler', 'image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(document.domain)"><circle r="4"/></svg>', 'xss'],
    ['an SVG with a script element', 'image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg"><script href="https://evil.example/x.js"/></svg>', 'xss'],
    ['an SVG embedding an iframe', 'image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg"><foreignObject><iframe xmlns="http://www.w3.org/1999/xhtml" src="https://evil.example/"/></foreignObject></svg>', 'xss'],
    ['an animation that sets a javascript: URL', 'image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg"><a><animate attributeName="href" values="javascript:alert(1)"/><text>go</text></a></svg>', 'xss'],
    ['a script in a comment', 'application/xml', '<r><!-- <script>alert(1)</script> --></r>', 'xss'],
    ['a javascript: URL split across CDATA sections', 'application/xml', '<c><![CDATA[<img src="javas]]><![CDATA[cript:alert(1)">]]></c>', 'xss'],
    ['SQL injection in a SOAP value', 'text/xml', '<Envelope><Body><GetUser><id>1 UNION SELECT password FROM users--</id></GetUser></Body></Envelope>', 'sqli'],
    ['command injection in an attribute value', 'application/xml', '<job run=";cat /etc/passwd"/>', 'path-traversal'],
    ['a php.ini directive in an attribute value', 'application/xml', '<root><a probe="opcache.jit_max_polymorphic_calls=50"></a></root>', 'code-injection'],
    ['an external entity (XXE)', 'application/xml', '<?xml version="1.0"?><!DOCTYPE foo [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><foo>&xxe;</foo>', 'xxe'],
    ['a parameter entity loading a DTD', 'application/xml', '<!DOCTYPE foo [<!ENTITY % p SYSTEM "http://evil.example/x.dtd"> %p;]><foo>1</foo>', 'xxe'],
    ['HTML sent as XML', 'application/xml', '<img src=x onerror=alert(1)>', 'xss'],
  ])('%s', async (_name, contentType, body, category) => {
    const decision = await post(contentType, body);
    expect(decision.allowed).toBe(false);
    expect(decision.categories).toContain(category);
  });
});

describe('XML scan view', () => {
  it('recognises XML media types only', () => {
    for (const type of ['application/xml', 'text/xml; charset=utf-8', 'application/atom+xml', 'image/svg+xml', 'application/soap+xml']) {
      expect(isXmlContentType(type), type).toBe(true);
    }
    for (const type of ['application/json', 'text/html', 'application/xml-dtd', 'multipart/form-data; boundary=xml', undefined]) {
      expect(isXmlContentType(type), String(type)).toBe(false);
    }
  });

  it('keeps values and active markup, drops ordinary names', () => {
    const view = xmlScanView('<feed><link href="https://example.org/" rel="self"/><title>Hi</title><script>x()</script></feed>');
    expect(view).toEqual(['=self', 'href="https://example.org/"', 'Hi', '<script>', 'x()', '</script>']);
  });

  it('returns null for what a strict parser refuses', () => {
    expect(xmlScanView('<img src=x onerror=alert(1)>')).toBeNull();
    expect(xmlScanView('<a>&undefined;</a>')).toBeNull();
    expect(xmlScanView('plain text')).toBeNull();
  });

  it('leaves non-XML bodies as they are', () => {
    const body = '<link rel="stylesheet" href="https://evil.example/x.css">';
    const { text } = httpScanText({ method: 'POST', path: '/', headers: { 'content-type': 'text/plain' }, body });
    expect(text).toContain(body);
  });
});
