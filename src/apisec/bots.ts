/**
 * Bot classification: every request gets one of human, automation, bot, scraper, scanner.
 *
 * Signals, strongest first: the User-Agent (scanner tools by name; HTTP libraries and CLI tools;
 * scraping frameworks, SEO and AI crawlers, archivers; everything else isbot knows is a bot),
 * scanner paths (/.env, /wp-admin, …) requested by the client, header completeness (a browser
 * User-Agent without Accept, Accept-Language or Accept-Encoding is not a browser) and order
 * (browsers send Host first over HTTP/1.1; many libraries do not), and the client's rate and
 * regularity (more than 5 requests per second sustained, or intervals so regular that their
 * coefficient of variation is below 0.1, mark automation).
 *
 * What a client did (its timing, its scanner paths) is kept per client, never per address alone:
 * the key is the scope (the gateway), the address, the User-Agent, Accept-Language and the
 * credential it presents (hashed), so one scanner among many clients behind one NAT or load
 * balancer marks itself, not its neighbours. Only scanner paths of the last SCANNER_WINDOW_MS
 * count, and the mark lasts SCANNER_MARK_MS after the client's last scanner path;
 * a client's window is forgotten after CLIENT_IDLE_MS without requests. Windows are in memory
 * per replica, bounded (LRU). A search-engine crawler is `verified` when reverse DNS of the client address names
 * the engine's domain and the forward lookup of that name returns the address again (cached for a
 * day; off when `verifyCrawlers` is false). A client that claims a major crawler and fails that
 * check is a scraper. Only names of widely known products are listed; no pattern is keyed on a
 * dataset.
 */
import { createHash } from 'node:crypto';
import { reverse, resolve4, resolve6 } from 'node:dns/promises';
import { isbot } from 'isbot';
import { LRUCache } from 'lru-cache';
import { noiseOf } from './paths.ts';
import type { BotClass } from './types.ts';
import { entryBound } from '../platform/lru.ts';

const SCANNER_AGENT = /sqlmap|nikto|nmap|masscan|zgrab|nuclei|wpscan|dirbuster|gobuster|dirb\/|ffuf|wfuzz|acunetix|nessus|openvas|qualys|burp|owasp[ _-]?zap|\bzap\/|w3af|arachni|skipfish|netsparker|invicti|jaeles|whatweb|wapiti|commix|xsstrike|hydra|medusa|feroxbuster|censys|shodan|internet-?measurement|expanse|leakix|paloaltonetworks|projectdiscovery|httpx|fuzz faster|detectify|appscan|webinspect|vega\/|grabber|havij|pangolin|jbrofuzz|morfeus|zmeu|masscan|security ?scanner|vulnerability/i;
const AUTOMATION_AGENT = /^(?:curl|wget|httpie|python-requests|python-urllib|python-httpx|aiohttp|go-http-client|okhttp|axios|node-fetch|undici|got |java\/|apache-httpclient|libwww-perl|lwp::|php\/|guzzlehttp|ruby|faraday|rest-client|postmanruntime|insomnia|dart\/|reqwest|hackney|restsharp|powershell|winhttp|k6\/|jmeter|gatling|locust|artillery|autocannon|hey\/|ab\/|wrk|vegeta|python\/|http_request|typhoeus|mechanize|libcurl|feign)/i;
const AUTOMATION_ANYWHERE = /headlesschrome|phantomjs|selenium|webdriver|puppeteer|playwright|slimerjs|htmlunit|cypress|nightmare|splash/i;
const SCRAPER_AGENT = /scrapy|colly|httrack|crawler4j|nutch|heritrix|archive\.org|ia_archiver|wayback|ahrefs|semrush|mj12bot|dotbot|rogerbot|blexbot|serpstat|seokicks|sistrix|megaindex|dataforseo|barkrowler|gptbot|chatgpt-user|oai-searchbot|ccbot|claudebot|claude-web|anthropic|bytespider|perplexity|cohere|diffbot|amazonbot|imagesift|omgili|timpibot|petalbot|screaming frog|siteauditbot|linkdex|spbot|backlink|seo|webcopier|webzip|teleport|offline explorer|wget|grub|magpie|scrapingbee|zyte|apify|crawlbase|brightdata|webscraper|import\.io|archiver|commoncrawl|ai2bot|youbot|img2dataset|omgilibot|webz\.io|facebookexternalhit\/1\.0 \(\+scraper/i;
const BROWSER_AGENT = /^Mozilla\/5\.0 \([^)]{3,200}\) (?:AppleWebKit|Gecko)\//;

/** Major crawlers whose operators publish reverse-DNS verification, with their domains. */
const VERIFIABLE_CRAWLERS: readonly { agent: RegExp; domains: readonly string[] }[] = [
  { agent: /googlebot|google-inspectiontool|googleother|adsbot-google|mediapartners-google|storebot-google/i, domains: ['googlebot.com', 'google.com', 'googleusercontent.com'] },
  { agent: /bingbot|msnbot|bingpreview|adidxbot/i, domains: ['search.msn.com'] },
  { agent: /applebot/i, domains: ['applebot.apple.com'] },
  { agent: /yandex(?:bot|images|mobilebot)/i, domains: ['yandex.ru', 'yandex.net', 'yandex.com'] },
  { agent: /baiduspider/i, domains: ['baidu.com', 'baidu.jp'] },
  { agent: /duckduckbot/i, domains: ['duckduckgo.com'] },
];

export interface BotSignals {
  readonly userAgent: string | undefined;
  /** Header names in the order received (lower case). */
  readonly headerNames: readonly string[];
  /** Header names in the order received, as the client spelled them (optional). */
  readonly rawHeaderNames?: readonly string[];
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly clientIp: string;
  /** Where the client's behaviour counts (a gateway id): a mark earned on one gateway never follows the client to another. */
  readonly scope?: string;
  readonly path: string;
  readonly httpVersion: string;
  readonly now?: number;
}

export interface BotVerdict {
  readonly class: BotClass;
  readonly reasons: readonly string[];
  /** true: a crawler confirmed by reverse DNS; false: a claimed crawler that failed; null: not a claimed crawler or not checked yet. */
  readonly verifiedCrawler: boolean | null;
}

interface ClientWindow {
  times: number[];
  /** When the client's last scanner paths were requested (at most SCANNER_PATH_THRESHOLD). */
  scannerTimes: number[];
  /** The client is a scanner until then (0: not marked). */
  scannerUntil: number;
}

/** Scanner paths a client must request within SCANNER_WINDOW_MS to be marked a scanner. */
export const SCANNER_PATH_THRESHOLD = 3;
export const SCANNER_WINDOW_MS = 10 * 60_000;
/** How long the scanner mark lasts after the client's last scanner path. */
export const SCANNER_MARK_MS = 10 * 60_000;
/** A client's window is forgotten after this long without a request. */
export const CLIENT_IDLE_MS = 30 * 60_000;

const headerOf = (headers: BotSignals['headers'], name: string): string => {
  const value = headers[name];
  return (Array.isArray(value) ? value.join(',') : (value ?? '')).slice(0, 1_024);
};

/**
 * One client behind an address: scope, address, User-Agent, Accept-Language and presented
 * credential (Authorization or X-API-Key), hashed so that no credential is kept.
 */
export function clientKeyOf(signals: Pick<BotSignals, 'scope' | 'clientIp' | 'userAgent' | 'headers'>): string {
  const hash = createHash('sha256');
  for (const part of [signals.scope ?? '', signals.clientIp, (signals.userAgent ?? '').slice(0, 1_024), headerOf(signals.headers, 'accept-language'), headerOf(signals.headers, 'authorization'), headerOf(signals.headers, 'x-api-key')]) {
    hash.update(part);
    hash.update('\0');
  }
  return hash.digest('base64url');
}

export interface BotClassifier {
  classify(signals: BotSignals): BotVerdict;
}

// Vocabulary of a declared bot's self-description, for bots isbot knows but no list names: what
// the agent says it does decides its class. Generic words only (no product names), checked in
// this order: security/compliance scanning, then harvesting (crawling for SEO, AI data or archives),
// else a bot (search engines, monitoring, previews, feed readers).
const SCANNER_WORDS = /scann?(?:er|ing)?\b|scan\/|security|vulnerab|pentest|\bvuln|\bssl\b|\btls\b|certificate|abuse|cyber|threat|exploit|\brecon\b|dork|attack ?surface|exposure|\baudit(?:or|ing)?\b|compliance|cookie ?(?:bot|scan|audit|consent)/i;
const HARVEST_WORDS = /archiv|harvest|preserv|web ?capture|mirror|sucker|copier|downloader|\bseo\b|seo[a-z]*bot|backlink|\brank|keyword|\bserp|link ?(?:check|analy|index|intel)|site ?audit|scrap(?:e|er|ing)\b|\bdata(?:set|feed)?[- ]?(?:crawl|collect|mining)|\bai\b|\.ai\b|[-_ ]ai(?:bot|crawler|agent)|\bllm|gpt|(?:ai|ml)[-_ ]?(?:crawler|bot|agent|fetcher)/i;
const CLEARLY_BOT_WORDS = /monitor|uptime|status ?(?:check|page)|health ?check|ping(?:dom|er|bot)?\b|preview|embed|unfurl|link ?expand|feed|\brss\b|\batom\b|podcast|news ?reader|search ?engine|\bindex(?:er|ing)\b/i;
const BOT_WORDS = /bot\b|bot[/;_-]|robot|crawl|spider|slurp|fetcher|\bagent\b/i;
// An HTTP client library by the shape of its product token: one `name/version` whose name says it
// is an HTTP client (…-http, …client, lib…, request…, sdk…), and no bot vocabulary.
const LIBRARY_PRODUCT = /^[a-z][\w.-]{0,40}(?:http|client|curl|request|fetch|sdk|lib|connector)[\w.-]{0,40}(?:\/v?\d[\w.-]*)?(?: \([^)]*\))?(?: [\w.-]+\/v?\d[\w.-]*)*$/i;

/**
 * Browsers that are not Chrome, Firefox or Safari and that isbot's patterns take for bots ("Dillo/3.0.5"
 * has no platform comment) or that svc's vocabulary would misread ("Lynx … SSL-MM/1.4.1"): text-mode
 * browsers, the small graphical ones, and feature-phone browsers. A person reads through each.
 */
const OTHER_BROWSER = /^(?:lynx|w3m|links2?|elinks|dillo|netsurf|browsh|retawq|edbrowse|chawan|amaya|konqueror|midori|epiphany|qutebrowser|falkon|seamonkey|palemoon|k-meleon|otter|iceweasel|icecat|luakit|uzbl|surf)(?:[/ (]|$)|Profile\/MIDP-|UP\.Browser\/|Opera Mini\/|NetFront\/|Obigo|Openwave/i;

/**
 * The device model of an Android user agent ("Android 10; CUBOT X30)"), replaced before any word is
 * read: a brand or model is a name, and one that ends in "bot" or holds "seo" says nothing about
 * the client. isbot is asked about the masked agent too (its generic "bot" pattern matched them).
 */
const ANDROID_DEVICE = /(\bAndroid[ \d._]{0,12};(?: [a-z]{2}[-_][A-Za-z]{2};)?[ ]?)[^;)]{1,120}/;

function withoutDeviceModel(agent: string): string {
  return agent.replace(ANDROID_DEVICE, '$1device');
}

/**
 * The class of a User-Agent alone (the part measured on the user-agent datasets). A bot class comes
 * from isbot's patterns or from svc's named tools and bot vocabulary, read on the agent with its
 * device model masked; "automation" only from a named HTTP library, CLI tool or headless browser,
 * or from an empty agent. An agent with no such evidence is `human`: the header-shape and cadence
 * signals of createBotClassifier decide whether its requests are a person's.
 */
export function classifyUserAgent(userAgent: string | undefined): { class: BotClass; reason: string } {
  const raw = (userAgent ?? '').slice(0, 1_024);
  if (raw.trim() === '') return { class: 'automation', reason: 'no user agent' };
  const agent = withoutDeviceModel(raw);
  // A crawler that borrows a browser's token still names itself and links its page ("(compatible; ichiro/mobile goo;+http://…)").
  if (OTHER_BROWSER.test(agent) && !/https?:\/\/|@|\bcompatible;/i.test(agent) && !BOT_WORDS.test(agent) && !SCANNER_AGENT.test(agent)) return { class: 'human', reason: 'text-mode, minor or feature-phone browser user agent' };
  // HTTP libraries first: a library name wins over a scanner word elsewhere in its version string.
  if (AUTOMATION_AGENT.test(agent) || AUTOMATION_ANYWHERE.test(agent)) return { class: 'automation', reason: 'HTTP library or automation user agent' };
  if (SCANNER_AGENT.test(agent)) return { class: 'scanner', reason: 'scanner user agent' };
  if (SCRAPER_AGENT.test(agent)) return { class: 'scraper', reason: 'scraper, SEO or AI crawler user agent' };
  const known = isbot(agent);
  if (known || BOT_WORDS.test(agent)) {
    if (VERIFIABLE_CRAWLERS.some((crawler) => crawler.agent.test(agent))) return { class: 'bot', reason: 'search-engine crawler user agent' };
    if (SCANNER_WORDS.test(agent)) return { class: 'scanner', reason: 'bot describing itself as a security or compliance scanner' };
    if (CLEARLY_BOT_WORDS.test(agent)) return { class: 'bot', reason: 'monitoring, preview, feed or search bot user agent' };
    if (HARVEST_WORDS.test(agent)) return { class: 'scraper', reason: 'bot describing itself as an SEO, AI-data or archive crawler' };
    if (!BOT_WORDS.test(agent) && LIBRARY_PRODUCT.test(agent)) return { class: 'automation', reason: 'HTTP client library product token' };
    return { class: 'bot', reason: 'known bot user agent' };
  }
  if (BROWSER_AGENT.test(agent) || /^Opera\/|^Mozilla\/5\.0 \(/.test(agent)) return { class: 'human', reason: 'browser user agent' };
  if (SCANNER_WORDS.test(agent)) return { class: 'scanner', reason: 'user agent describing a security or compliance scanner' };
  return { class: 'human', reason: 'unrecognised user agent, no bot or automation evidence in it' };
}

/**
 * `headerShape` (default true): judge the order and spelling of header names. Off behind a proxy
 * that rewrites them (TRUST_PROXY), where they describe the proxy rather than the client.
 */
export function createBotClassifier(options: { verifyCrawlers?: boolean; maxClients?: number; headerShape?: boolean } = {}): BotClassifier {
  const clients = new LRUCache<string, ClientWindow>({ ...entryBound(options.maxClients ?? 50_000), ttl: CLIENT_IDLE_MS });
  const verified = new LRUCache<string, boolean>({ ...entryBound(10_000), ttl: 24 * 3_600_000 });
  const pending = new Set<string>();
  // User agents repeat: their class is computed once (isbot's pattern is large).
  const agents = new LRUCache<string, { class: BotClass; reason: string }>(entryBound(10_000));
  const agentClass = (agent: string | undefined) => {
    const text = agent ?? '';
    let known = agents.get(text);
    if (known === undefined) {
      known = classifyUserAgent(agent);
      agents.set(text, known);
    }
    return known;
  };
  const verifyCrawlers = options.verifyCrawlers ?? true;
  const headerShape = options.headerShape ?? true;

  const startVerification = (ip: string, domains: readonly string[]): void => {
    if (pending.has(ip) || pending.size > 256) return;
    pending.add(ip);
    void (async () => {
      try {
        const names = await reverse(ip);
        const name = names.find((candidate) => domains.some((domain) => candidate === domain || candidate.endsWith(`.${domain}`)));
        if (name === undefined) {
          verified.set(ip, false);
          return;
        }
        const forward = ip.includes(':') ? await resolve6(name) : await resolve4(name);
        verified.set(ip, forward.includes(ip));
      } catch (error) {
        // ENOTFOUND/ENODATA: no PTR record, a failed claim; anything else (no DNS): unknown, retried later.
        const code = (error as { code?: string }).code;
        if (code === 'ENOTFOUND' || code === 'ENODATA') verified.set(ip, false);
      } finally {
        pending.delete(ip);
      }
    })();
  };

  return {
    classify(signals) {
      const now = signals.now ?? Date.now();
      const reasons: string[] = [];
      const base = agentClass(signals.userAgent);
      let verdictClass: BotClass = base.class;
      reasons.push(base.reason);
      let verifiedCrawler: boolean | null = null;

      const key = clientKeyOf(signals);
      const window = clients.get(key) ?? { times: [], scannerTimes: [], scannerUntil: 0 };
      window.times.push(now);
      if (window.times.length > 32) window.times.shift();
      if (noiseOf(signals.path) === 'scanner') {
        window.scannerTimes = [...window.scannerTimes.filter((time) => now - time < SCANNER_WINDOW_MS), now].slice(-SCANNER_PATH_THRESHOLD);
        if (window.scannerTimes.length >= SCANNER_PATH_THRESHOLD) window.scannerUntil = now + SCANNER_MARK_MS;
      }
      clients.set(key, window);

      if (now < window.scannerUntil && verdictClass !== 'scanner') {
        verdictClass = 'scanner';
        reasons.push('requested several scanner paths');
      }
      if (verdictClass === 'bot' && verifyCrawlers) {
        const crawler = VERIFIABLE_CRAWLERS.find((candidate) => candidate.agent.test(signals.userAgent ?? ''));
        if (crawler !== undefined) {
          const known = verified.get(signals.clientIp);
          if (known === undefined) startVerification(signals.clientIp, crawler.domains);
          else {
            verifiedCrawler = known;
            if (!known) {
              verdictClass = 'scraper';
              reasons.push('claims a search-engine crawler, reverse DNS disagrees');
            } else reasons.push('crawler verified by reverse DNS');
          }
        }
      }
      if (verdictClass === 'human') {
        const headers = signals.headers;
        const missing = ['accept', 'accept-language', 'accept-encoding'].filter((name) => headers[name] === undefined);
        // Browsers over HTTP/1.x send Host first and spell header names in canonical case
        // (Host, User-Agent); HTTP libraries given a browser's User-Agent often do neither.
        const http1 = signals.httpVersion.startsWith('1.');
        const hostNotFirst = headerShape && http1 && signals.headerNames.length > 0 && signals.headerNames[0] !== 'host';
        const raw = signals.rawHeaderNames ?? [];
        const lowerCaseNames = headerShape && http1 && raw.length >= 3 && raw.every((name) => name === name.toLowerCase());
        if (missing.length >= 2) {
          verdictClass = 'automation';
          reasons.push(`browser user agent without ${missing.join(', ')}`);
        } else if (lowerCaseNames) {
          verdictClass = 'automation';
          reasons.push('browser user agent with every header name in lower case over HTTP/1.1');
        } else if (hostNotFirst && missing.length === 1) {
          verdictClass = 'automation';
          reasons.push(`browser user agent without ${missing[0]!}, Host not first`);
        } else if (hostNotFirst) {
          reasons.push('header order unlike a browser');
        }
        if (verdictClass === 'human' && window.times.length >= 20) {
          const span = window.times[window.times.length - 1]! - window.times[0]!;
          const rate = ((window.times.length - 1) * 1_000) / Math.max(span, 1);
          const intervals = window.times.slice(1).map((time, index) => time - window.times[index]!);
          const mean = intervals.reduce((sum, value) => sum + value, 0) / intervals.length;
          const deviation = Math.sqrt(intervals.reduce((sum, value) => sum + (value - mean) ** 2, 0) / intervals.length);
          if (rate > 5) {
            verdictClass = 'automation';
            reasons.push(`sustained ${Math.round(rate)} requests per second`);
          } else if (mean > 0 && deviation / mean < 0.1) {
            verdictClass = 'automation';
            reasons.push('requests at machine-regular intervals');
          }
        }
      }
      return { class: verdictClass, reasons, verifiedCrawler };
    },
  };
}
