import { check } from 'recheck';
import { describe, expect, it } from 'vitest';
import { CATALOGUE, compileCatalogue, createDetectionEngine, REDOS_CHECK_FLAGS, regularExpressionsOf, superLinearPatterns } from '../../src/detection/index.ts';
import { splitPattern, topLevelAlternatives } from '../../src/detection/catalogue/index.ts';
import { buildAutomaton } from '../../src/detection/catalogue/keywords.ts';
import { normalize } from '../../src/detection/normalize/index.ts';
import { scanVariants } from '../../src/detection/tiers/t1.ts';
import { RECHECK_OPTIONS, REFRESHING, loadVerdicts, saveVerdicts, settleUncached, verdictKey } from './redos-verdicts.ts';

const catalogue = compileCatalogue();

describe('pattern catalogue', () => {
  it('has unique ids and compiles every pattern', () => {
    expect(catalogue.size).toBe(CATALOGUE.length);
    expect(new Set(CATALOGUE.map((entry) => entry.id)).size).toBe(CATALOGUE.length);
  });

  it('rejects a catalogue entry with upper-case keywords at compile time', () => {
    const [first] = CATALOGUE;
    expect(() => compileCatalogue([{ ...first!, keywords: ['Ignore'] }])).toThrow();
  });

  it('matches every example written for each pattern, through the keyword prefilter', () => {
    const misses: string[] = [];
    for (const entry of CATALOGUE) {
      expect(entry.examples.length).toBeGreaterThan(0);
      for (const example of entry.examples) {
        const kind = entry.kinds[0]!;
        const result = scanVariants(catalogue, kind, normalize(example, { kind }).variants);
        if (!result.findings.some((finding) => finding.id === entry.id)) misses.push(`${entry.id}: ${example}`);
      }
    }
    expect(misses).toEqual([]);
  });

  it('finds exactly the keywords a text contains, overlapping and nested ones included', () => {
    const keywords = ['he', 'she', 'his', 'hers', 'ignor', 'ignore all', 'gnore', '@', 'ünï', 'a'];
    const automaton = buildAutomaton(keywords);
    const texts = ['ushers', 'please ignore all of it', 'ignor', 'mail me @ home', 'ünïcode', 'x', '', 'shhe', 'hishers', 'ÜNÏ ünï'];
    for (const text of texts) {
      const expected = keywords.flatMap((keyword, id) => (text.includes(keyword) ? [id] : [])).sort();
      expect([...automaton.find(text)].sort(), text).toEqual(expected);
    }
  });

  it('keeps ordinary HTTP values below the challenge band', () => {
    const benign = [
      Buffer.from('{"Runtime":"nodejs18.x","Handler":"index.handler"}').toString('base64'),
      'If you are looking for a recommendation, let me know.',
      'for each item in (the list) we do the same',
      '{"onboarding": true, "one": 1}',
      'alias: john.doe@example.com',
      'step=confirm',
      'sort={created_at,desc}',
      'Thanks for your help\r\nBest regards',
      '<?xml version="1.0"?><note><body>time to go</body></note>',
      'Q3 status: on track',
    ];
    for (const value of benign) {
      const { score } = scanVariants(catalogue, 'http', normalize(value, { kind: 'http' }).variants);
      expect(score, value).toBeLessThan(0.6);
    }
  });

  describe('XML API bodies', () => {
    const engine = createDetectionEngine({ analysisCache: false });
    const inspectBoth = async (body: string) => [
      await engine.inspect({ kind: 'http', request: { method: 'POST', path: '/pay/notify', headers: { 'content-type': 'application/xml' }, body } }),
      await engine.inspect({ kind: 'http', content: body }),
    ];

    it('allows plain XML documents, with or without a prolog, an <xml> root, a SOAP envelope or HTML-named elements', async () => {
      const documents = [
        '<?xml version="1.0"?><xml><appid>app-42</appid><mch_id>1900</mch_id><total_fee>100</total_fee><sign>5K8264ILTKCH16CQ2502SI8ZNMTM67VS</sign></xml>',
        '<xml><ToUserName><![CDATA[acct_1]]></ToUserName><CreateTime>1700000000</CreateTime><MsgType><![CDATA[text]]></MsgType><Content><![CDATA[order shipped]]></Content></xml>',
        '<?xml version="1.0" encoding="UTF-8"?>\n<xml>\n  <return_code>SUCCESS</return_code>\n  <return_msg>OK</return_msg>\n</xml>',
        '<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Header/><soap:Body><GetQuote><Symbol>ACME</Symbol></GetQuote></soap:Body></soap:Envelope>',
        '<xml><item><name>swap rule</name><rule><![CDATA[if a]]]]><![CDATA[>b then swap]]></rule></item></xml>',
      ];
      for (const body of documents) {
        for (const decision of await inspectBoth(body)) {
          expect(decision.allowed, body).toBe(true);
          expect(decision.categories, body).not.toContain('xss');
        }
      }
      // Elements named like HTML tags (<title>, <link>, <meta>, <base>, <set>, <form>, <style>)
      // without a loading or redirecting attribute are logged at most, never challenged or blocked.
      const htmlNamed = [
        '<?xml version="1.0"?><rss version="2.0"><channel><title>Release notes</title><link>https://example.com/releases</link><item><title>v2.1</title><description>Faster sync</description></item></channel></rss>',
        '<response><meta><page>1</page><total>2</total></meta><base>EUR</base><set><rate currency="USD">1.08</rate></set><form>W-9</form><style>casual</style></response>',
        '<?xml version="1.0"?>\n<response>\n  <meta>\n    <page>1</page>\n  </meta>\n  <title>\n    Q3\n  </title>\n</response>\n',
      ];
      for (const body of htmlNamed) {
        for (const decision of await inspectBoth(body)) expect(['allow', 'log'], body).toContain(decision.decision);
      }
    });

    it('still blocks XSS through XML data islands and active content inside XML', async () => {
      const attacks = [
        '<xml id="i"><x><c><![CDATA[<img src="javas]]><![CDATA[cript:alert(1)">]]></c></x></xml><span datasrc="#i" datafld="c" dataformatas="html"></span>',
        '<xml src="//attacker.example/island.xml" id="x"></xml>',
        '<xml onreadystatechange="alert(document.domain)"></xml>',
        '<?xml version="1.0"?><xml><note><![CDATA[<script>alert(1)</script>]]></note></xml>',
        '<xml><a><![CDATA[<img src=x onerror=alert(1)>]]></a></xml>',
        '<xml><link>javascript:alert(document.cookie)</link></xml>',
        '<xml:namespace prefix="t" ns="urn:schemas-microsoft-com:time">',
        '<link rel="stylesheet" href="//attacker.example/x.css">',
        '"><meta http-equiv="refresh" content="0;url=//attacker.example/">',
      ];
      for (const body of attacks) {
        for (const decision of await inspectBoth(body)) {
          expect(decision.decision, body).toBe('block');
          expect(decision.categories, body).toContain('xss');
        }
      }
    });
  });

  // Deterministic complement to the analyser below (whose verdicts depend on its time budget on a
  // loaded machine): every regular expression T1 runs scans 50,000 repetitions of single
  // characters and short units in linear time. A pattern that can start at every character of a
  // run and rescan it (e.g. `//+admin` on a run of slashes) takes seconds here.
  it('scans long runs of one character or unit in linear time', () => {
    const units = [' ', '/', '.', '\\', '"', "'", '<', '>', '=', ';', '(', ')', '[', ']', '{', '}', ':', ',', '-', '_', '%', '$', '&', '|', '#', '@', '!', '?', '*', '+', 'a', 'e', 'x', '0', '1', '\n', '\t', 'ab', 'a ', '/.', '..', '%2', '\\x', '<a', 'a=', '${', '/*', '--', 'on', 'or ', '1 ', ', '];
    const slow: string[] = [];
    for (const entry of CATALOGUE) {
      const alternatives = splitPattern(entry.pattern).gaps.length === 0 ? [entry.pattern] : topLevelAlternatives(entry.pattern);
      for (const alternative of alternatives) {
        for (const part of splitPattern(alternative).parts) {
          const pattern = new RegExp(part, 'gm');
          for (const unit of units) {
            const input = `${unit.repeat(Math.ceil(50_000 / unit.length))}\u0001`;
            // The best of up to three scans: a super-linear pattern is slow every time, while a
            // scheduler pause on this shared machine only slows one.
            let elapsed = Number.POSITIVE_INFINITY;
            for (let attempt = 0; attempt < 3 && elapsed > 300; attempt += 1) {
              pattern.lastIndex = 0;
              const started = performance.now();
              for (let matches = 0; pattern.exec(input) !== null && matches < 100_000; matches += 1) if (pattern.lastIndex === 0) break;
              elapsed = Math.min(elapsed, performance.now() - started);
            }
            if (elapsed > 300) slow.push(`${entry.id} on ${JSON.stringify(unit)}: ${Math.round(elapsed)} ms`);
          }
        }
      }
    }
    expect(slow).toEqual([]);
  });

  // Each regular expression T1 runs (a pattern, or each part of a gapped sequence) goes through
  // recheck with recall validation: recheck confirms its attack string on V8 itself, so a
  // pattern fails only when its attack is really super-linear on the engine svc runs on. A fixed
  // fuzzing seed keeps the verdicts reproducible. The analysis takes minutes, so 'safe' verdicts
  // are kept in a committed file keyed by a hash of the exact regular expression, its flags,
  // recheck's version and the options: a new or changed pattern has no verdict there and is
  // analysed; nothing but an identical expression can reuse one (see redos-verdicts.ts).
  // The same check a sensor runs over a pattern pack before loading it (superLinearPatterns).
  it('contains no regular expression that the recheck ReDoS analyser finds vulnerable', { timeout: REFRESHING ? 86_400_000 : 1_200_000 }, async () => {
    const verdicts = loadVerdicts();
    const fresh: string[] = [];
    const key = (expression: string) => verdictKey(expression, REDOS_CHECK_FLAGS, RECHECK_OPTIONS);
    await settleUncached(CATALOGUE.flatMap((entry) => regularExpressionsOf(entry.pattern)), REDOS_CHECK_FLAGS, RECHECK_OPTIONS, verdicts, fresh);
    const vulnerable = await superLinearPatterns(CATALOGUE, { known: (expression) => verdicts.has(key(expression)), found: (expression) => fresh.push(key(expression)) });
    if (fresh.length > 0) saveVerdicts(verdicts, fresh);
    expect(vulnerable.map((pattern) => `${pattern.id} (${pattern.complexity}): ${pattern.expression.slice(0, 60)}`)).toEqual([]);
  });

  it('the ReDoS check itself flags a catastrophic pattern', async () => {
    const diagnostics = await check('^(a+)+$', '', { timeout: 4_000, recallTimeout: 1_000 });
    expect(diagnostics.status).toBe('vulnerable');
  });
});
