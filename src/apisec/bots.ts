/**
 * Bot classification: every request gets one of human, automation, bot, scraper, scanner.
 *
 * Signals, strongest first: the User-Agent (scanner tools by name; HTTP libraries and CLI tools;
 * scraping frameworks, SEO and AI crawlers, archivers; everything else isbot knows is a bot),
 * scanner paths (/.env, /wp-admin, …) requested by the client, header completeness (a browser
 * User-Agent without Accept, Accept-Language or Accept-Encoding is not a browser) and order
 * (browsers send Host first over HTTP/1.1; many libraries do not), and the client's rate and
 * regularity (per IP, in a bounded in-memory window per replica: more than 5 requests per second
 * sustained, or intervals so regular that their coefficient of variation is below 0.1, mark
 * automation). A search-engine crawler is `verified` when reverse DNS of the client address names
 * the engine's domain and the forward lookup of that name returns the address again (cached for a
 * day; off when `verifyCrawlers` is false). A client that claims a major crawler and fails that
 * check is a scraper. Only names of widely known products are listed; no pattern is keyed on a
 * dataset.
 */
import { reverse, resolve4, resolve6 } from 'node:dns/promises';
import { isbot } from 'isbot';
import { LRUCache } from 'lru-cache';
import { noiseOf } from './paths.ts';
import type { BotClass } from './types.ts';

const SCANNER_AGENT = /sqlmap|nikto|nmap|masscan|zgrab|nuclei|wpscan|dirbuster|gobuster|dirb\/|ffuf|wfuzz|acunetix|nessus|openvas|qualys|burp|owasp[ _-]?zap|\bzap\/|w3af|arachni|skipfish|netsparker|invicti|jaeles|whatweb|wapiti|commix|xsstrike|hydra|medusa|feroxbuster|censys|shodan|internet-?measurement|expanse|leakix|paloaltonetworks|projectdiscovery|httpx|fuzz faster|detectify|appscan|webinspect|vega\/|grabber|havij|pangolin|jbrofuzz|morfeus|zmeu|masscan|security ?scanner|vulnerability/i;
const AUTOMATION_AGENT = /^(?:curl|wget|httpie|python-requests|python-urllib|python-httpx|aiohttp|go-http-client|okhttp|axios|node-fetch|undici|got |java\/|apache-httpclient|libwww-perl|lwp::|php\/|guzzlehttp|ruby|faraday|rest-client|postmanruntime|insomnia|dart\/|reqwest|hackney|restsharp|powershell|winhttp|cfnetwork|dalvik|k6\/|jmeter|gatling|locust|artillery|autocannon|hey\/|ab\/|wrk|vegeta|python\/|http_request|typhoeus|mechanize|libcurl|feign|electron)/i;
const AUTOMATION_ANYWHERE = /headlesschrome|phantomjs|selenium|webdriver|puppeteer|playwright|slimerjs|htmlunit|cypress|nightmare|splash/i;
const SCRAPER_AGENT = /scrapy|colly|httrack|crawler4j|nutch|heritrix|archive\.org|ia_archiver|wayback|ahrefs|semrush|mj12bot|dotbot|rogerbot|blexbot|serpstat|seokicks|sistrix|seznam|megaindex|dataforseo|barkrowler|gptbot|chatgpt-user|oai-searchbot|ccbot|claudebot|claude-web|anthropic|bytespider|perplexity|cohere|diffbot|amazonbot|imagesift|omgili|timpibot|petalbot|screaming frog|siteauditbot|linkdex|spbot|backlink|seo|webcopier|webzip|teleport|offline explorer|wget|grub|magpie|scrapingbee|zyte|apify|crawlbase|brightdata|webscraper|import\.io|archiver|commoncrawl|ai2bot|youbot|img2dataset|omgilibot|webz\.io|facebookexternalhit\/1\.0 \(\+scraper/i;
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
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly clientIp: string;
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
  scannerHits: number;
}

export interface BotClassifier {
  classify(signals: BotSignals): BotVerdict;
}

/** The class of a User-Agent alone (the part measured on the user-agent datasets). */
export function classifyUserAgent(userAgent: string | undefined): { class: BotClass; reason: string } {
  const agent = (userAgent ?? '').slice(0, 1_024);
  if (agent.trim() === '') return { class: 'automation', reason: 'no user agent' };
  if (SCANNER_AGENT.test(agent)) return { class: 'scanner', reason: 'scanner user agent' };
  if (AUTOMATION_AGENT.test(agent) || AUTOMATION_ANYWHERE.test(agent)) return { class: 'automation', reason: 'HTTP library or automation user agent' };
  if (SCRAPER_AGENT.test(agent)) return { class: 'scraper', reason: 'scraper, SEO or AI crawler user agent' };
  if (isbot(agent)) return { class: 'bot', reason: 'known bot user agent' };
  if (BROWSER_AGENT.test(agent) || /^Opera\/|^Mozilla\/5\.0 \(/.test(agent)) return { class: 'human', reason: 'browser user agent' };
  return { class: 'automation', reason: 'unrecognised user agent' };
}

export function createBotClassifier(options: { verifyCrawlers?: boolean; maxClients?: number } = {}): BotClassifier {
  const clients = new LRUCache<string, ClientWindow>({ max: options.maxClients ?? 50_000 });
  const verified = new LRUCache<string, boolean>({ max: 10_000, ttl: 24 * 3_600_000 });
  const pending = new Set<string>();
  // User agents repeat: their class is computed once (isbot's pattern is large).
  const agents = new LRUCache<string, { class: BotClass; reason: string }>({ max: 10_000 });
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

      const window = clients.get(signals.clientIp) ?? { times: [], scannerHits: 0 };
      window.times.push(now);
      if (window.times.length > 32) window.times.shift();
      if (noiseOf(signals.path) === 'scanner') window.scannerHits += 1;
      clients.set(signals.clientIp, window);

      if (window.scannerHits >= 3 && verdictClass !== 'scanner') {
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
        if (missing.length >= 2) {
          verdictClass = 'automation';
          reasons.push(`browser user agent without ${missing.join(', ')}`);
        } else if (signals.httpVersion === '1.1' && signals.headerNames.length > 0 && signals.headerNames[0] !== 'host') {
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
