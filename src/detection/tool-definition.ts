/**
 * The `tool_definition` kind: an MCP tool's model-visible metadata (name, description, input
 * schema with its property descriptions and enums, annotations) as one text for the catalogue
 * (tool poisoning: instructions to the model, hidden directives, credential or file requests,
 * shadowing) plus a malicious-capability check.
 *
 * Malicious capability (the rule, also in docs/detection.md): a tool whose purpose is to carry
 * out an offensive action against a system or account — credential access (dumping, harvesting,
 * cracking, spraying, relaying, forging tickets), exploitation (running exploits, webshells,
 * injection exploitation that extracts data), payload or malware generation, lateral movement
 * with supplied credentials, persistence and privilege escalation, command and control,
 * defense evasion (AV/EDR/AMSI/application-allowlist bypass), exfiltration, disruption
 * (deauthentication, jamming, denial of service). Dual-use tools are allowed: discovery, port
 * and vulnerability scanning that detects without exploiting, enumeration, OSINT, reverse
 * engineering, forensics, generic exec/admin/file tools. The check reads the name and the
 * description (not parameter names alone) and needs an offensive action, not just a security
 * word: "scan for SQL injection" is dual-use, "exploit SQL injection and dump the tables" is not.
 * All regular expressions are linear (literals, bounded gaps, no nested quantifiers).
 */
import type { Finding, ToolDefinitionShape } from './types.ts';

const MAX_TEXT = 65_536;

function schemaText(schema: unknown, depth: number, out: string[]): void {
  if (depth > 6 || schema === null || typeof schema !== 'object') return;
  const node = schema as Record<string, unknown>;
  for (const key of ['title', 'description']) if (typeof node[key] === 'string') out.push(node[key] as string);
  if (Array.isArray(node.enum)) out.push(node.enum.filter((value) => typeof value === 'string').join(', '));
  if (typeof node.default === 'string') out.push(node.default);
  const properties = node.properties;
  if (properties !== null && typeof properties === 'object') {
    for (const [name, value] of Object.entries(properties as Record<string, unknown>)) {
      out.push(name);
      schemaText(value, depth + 1, out);
    }
  }
  if (node.items !== undefined) schemaText(node.items, depth + 1, out);
  for (const key of ['anyOf', 'oneOf', 'allOf']) if (Array.isArray(node[key])) for (const item of node[key] as unknown[]) schemaText(item, depth + 1, out);
}

/** The model-visible text of a tool: name, description, schema texts, annotations. */
export function toolDefinitionText(tool: ToolDefinitionShape): string {
  const parts: string[] = [tool.name, tool.description ?? ''];
  const schema: string[] = [];
  schemaText(tool.inputSchema, 0, schema);
  if (schema.length > 0) parts.push(schema.join('\n'));
  if (tool.annotations !== undefined && tool.annotations !== null) {
    try {
      parts.push(JSON.stringify(tool.annotations));
    } catch {
      // Unserializable annotations carry nothing the model sees.
    }
  }
  const text = parts.filter((part) => part.length > 0).join('\n');
  return text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) : text;
}

interface CapabilityRule {
  readonly id: string;
  readonly name: string;
  readonly pattern: RegExp;
}

/** A tool name/description split into words: snake_case, kebab-case and camelCase become spaces. */
function words(text: string): string {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_\-/.]+/g, ' ')
    .toLowerCase();
}

const G = '[^.\\n]{0,60}?'; // a bounded gap inside one sentence

const RULES: readonly CapabilityRule[] = [
  {
    id: 'credential-dumping',
    name: 'Dumps, harvests or steals credentials',
    pattern: new RegExp(
      `\\b(?:dump|dumps|dumping|harvest|harvests|harvesting|steal|steals|stealing|exfiltrate|exfiltrates|grab|grabs)\\b${G}\\b(?:credentials?|creds|passwords?|hashes|ntlm|lsass|secrets|tickets|tokens?|cookies|keychain|dpapi)\\b|\\b(?:extract|extracts|extracting|sniff|sniffs|capture|captures|capturing|relay|relays|relaying|intercept|intercepts)\\b${G}\\b(?:credentials?|creds|passwords?|password\\s{1,3}hashes|hashes|hash|ntlm|net-?ntlm|lsass|sam\\s{1,3}(?:database|hive)|ntds|kerberos\\s{1,3}tickets?|handshakes?|wifi\\s{1,3}passwords?|browser\\s{1,3}passwords?|gpp\\s{1,3}passwords?|laps\\s{1,3}passwords?)\\b|\\b(?:lsass|ntds(?:\\.dit)?|sam)\\s{1,3}dump|\\b(?:mimikatz|secretsdump|lazagne|pypykatz|responder|rubeus|kekeo|hashdump|credential\\s{1,3}dump(?:ing|er)?|credential\\s{1,3}harvest(?:ing|er)?|keylogger|keylogging|dcsync|dc\\s{1,3}sync|unpac[\\s-]the[\\s-]hash)\\b|\\b(?:obtain|obtains|retrieve|retrieves|recover|recovers|request|requests|for|returns?)\\b${G}\\b(?:nt|ntlm)\\s{1,3}hash(?:es)?\\b|\\b(?:tgt|tickets?)\\s{0,3}(?:\\+|and)\\s{0,3}(?:nt|ntlm)\\s{1,3}hash`,
    ),
  },
  {
    id: 'credential-attack',
    name: 'Cracks, brute-forces or sprays credentials',
    pattern: new RegExp(
      `\\b(?:crack\\w{0,4}|brute[\\s-]?forc\\w{0,4}|bruteforc\\w{0,4}|spray|spraying|password\\s{1,3}spray\\w{0,3}|credential\\s{1,3}stuffing|guess(?:ing)?\\s{1,3}passwords?)\\b${G}\\b(?:passwords?|hash(?:es)?|credentials?|logins?|accounts?|ssh|rdp|smb|ftp|kerberos|ntlm|wpa2?|handshakes?|pins?|zip|pdf|users?|community\\s{1,3}strings?|group\\s{1,3}names?|psks?|pre-?shared\\s{1,3}keys?|secrets?|otps?|one-time\\s{1,3}codes?)\\b|\\b(?:hashcat|john\\s{1,3}the\\s{1,3}ripper|hydra|medusa|kerbrute|crackmapexec|aircrack)\\b|\\b(?:dictionary|brute[\\s-]?force|mask|hybrid|combinator|wordlist|rainbow\\s{1,3}table)\\s{1,3}attacks?\\b|\\boffline\\s{1,3}cracking\\b|\\bcombo\\s?lists?\\b|\\b(?:hash|ntlm\\w{0,4}|net-?ntlm\\w{0,4}|credential|handshake)\\s{1,3}capture\\b|\\b(?:trigger|triggers|coerce|coerces|force|forces)\\s{1,3}(?:ntlm|smb|kerberos|machine\\s{1,3}account)\\s{1,3}authentication\\b|\\b(?:single|one|common)\\s{1,3}password\\s{1,3}against\\s{1,3}(?:multiple|many|all|a\\s{1,3}list\\s{1,3}of)\\b|\\bpasswordspray\\w{0,3}\\b|\\b(?:kerberoast\\w{0,4}|as-?rep\\s{0,2}roast\\w{0,4}|asreproast\\w{0,4})\\b`,
    ),
  },
  {
    id: 'ticket-forging',
    name: 'Forges tickets, tokens or certificates',
    pattern: /\b(?:golden|silver|diamond|sapphire)\s{1,3}tickets?\b|\b(?:forge|forges|forging|forged)\b[^.\n]{0,60}?\b(?:tickets?|tgt|tgs|certificates?|tokens?|jwt|saml|pac)\b|\bpass[\s-]the[\s-](?:hash|ticket|cert|certificate)\b|\bover[\s-]?pass[\s-]the[\s-]hash\b|\bshadow\s{1,3}credentials\b|\besc(?:1|2|3|4|6|8)\b[^.\n]{0,40}\b(?:certificate|adcs|template)|\bcertificate\b[^.\n]{0,80}?\besc(?:[1-9]|1[0-6])\b/,
  },
  {
    id: 'exploitation',
    name: 'Runs exploits against a target',
    pattern: new RegExp(
      `\\b(?:run|runs|running|launch|launches|launching|execute|executes|executing|fire|deliver|use|uses|trigger|triggers)\\b${G}\\b(?:exploits?|exploit\\s{1,3}modules?|exploit\\s{1,3}scripts?|exploit\\s{1,3}code|poc\\s{1,3}exploits?)\\b|\\bexploit(?:s|ing|ation)?\\b${G}\\b(?:vulnerabilit(?:y|ies)|targets?|hosts?|systems?|services?|servers?|cve-\\d{4}|injection|lfi|rfi|ssti|xxe|ssrf|deserialization|buffer\\s{1,3}overflow|rce|remote\\s{1,3}code|sql\\s{1,3}injection|sqli|command\\s{1,3}injection|eternalblue|log4shell)\\b|\\bexploit(?:s|ing)?\\s{1,3}esc\\d{1,2}\\b|\\b(?:adcs|active\\s{1,3}directory|kerberos|web|wireless|bluetooth|network|aws|cloud|iot|api|ai)\\s{1,3}exploitation\\b|\\bexploitation\\s{1,3}(?:framework|toolkit|tool|module|kit|suite|engine)\\b|\\b(?:and|&)\\s{1,3}exploitation\\b|\\bexploiters?\\b|\\bzero[\\s-]?day\\s{1,3}(?:exploit\\w{0,4}|attacks?)\\b|\\boffensive\\s{1,3}(?:security\\s{1,3})?(?:operations?|tools?|capabilit\\w{1,3}|actions?)\\b|\\battempt\\w{0,2}\\s{1,3}(?:[a-z]{2,12}\\s{1,3}){0,2}(?:injection|poisoning|exploitation|traversal|xss|xxe|ssti|ssrf|rce|overflow|takeover)\\b|\\bxp\\s{1,3}cmdshell\\b|\\b(?:prepare|prepares|stage|stages|weaponi[sz]e|weaponi[sz]es|compile|compiles)\\s{1,3}(?:the\\s{1,3}|an?\\s{1,3})?exploits?\\b|\\bpayloads?\\b${G}\\b(?:rce|remote\\s{1,3}code\\s{1,3}execution)\\b|\\b(?:via|through|using|exploiting)\\s{1,3}(?:the\\s{1,3}|an?\\s{1,3})?(?:confirmed\\s{1,3}|known\\s{1,3})?(?:lfi|rfi|ssti|xxe|ssrf|sql\\s{1,3}injection|sqli|path\\s{1,3}traversal|directory\\s{1,3}traversal|command\\s{1,3}injection|deserialization|php\\s{1,3}filter\\s{1,3}wrapper)\\b|\\b(?:hack|hacks|hacking)\\b${G}\\b(?:networks?|systems?|devices?|accounts?|servers?|targets?|wifi|wireless|bluetooth|websites?|web\\s{1,3}apps?)\\b|\\b(?:network|wifi|wireless|bluetooth|web|ethical|mobile|iot|car|drone)\\s{1,3}hacking\\b|\\bjailbreak\\w{0,4}\\b${G}\\b(?:ai|models?|llms?|servers?|assistants?|chatbots?)\\b|\\b(?:eternalblue|ms17-010|zerologon|printnightmare|petitpotam|log4shell)\\b|\\b(?:upload|deploy|plant|install)s?\\b${G}\\b(?:web\\s?shells?|backdoors?)\\b|\\b(?:dump|dumps|dumping|extract|exfiltrate)\\b${G}\\b(?:databases?|tables?|db)\\b${G}\\b(?:sql\\s{1,3}injection|sqli|sqlmap|injection)\\b|\\bsqlmap\\b${G}\\b(?:dump|--dump|os-shell|exploit)|\\b(?:run|runs|execute|executes|launch|launches)\\s{1,3}(?:an?\\s{1,3}|the\\s{1,3})?(?:metasploit|msf)\\s{1,3}(?:exploit\\s{1,3})?modules?\\b|\\bexploits?\\b${G}\\bagainst\\s{1,3}(?:an?\\s{1,3}|the\\s{1,3})?(?:targets?|victims?|remote\\s{1,3}hosts?)\\b|\\b(?:length[\\s-]extension|padding[\\s-]oracle|downgrade|arp\\s{1,3}(?:spoofing|poisoning)|dns\\s{1,3}(?:spoofing|poisoning)|session\\s{1,3}hijacking)\\s{1,3}attacks?\\b|\\bxss\\s{1,3}(?:callbacks?|hooks?)\\b`,
    ),
  },
  {
    id: 'payload-generation',
    name: 'Generates or deploys malicious payloads',
    pattern: new RegExp(
      `\\b(?:msfvenom|meterpreter|shellcode|reverse\\s{1,3}shells?|bind\\s{1,3}shells?|ransomware|rootkits?|trojans?|rats?\\b(?=\\s{1,3}(?:payload|client|server|builder))|malicious\\s{1,3}(?:[a-z]{2,12}\\s{1,3}){0,2}(?:payloads?|documents?|macros?|office|files?|executables?|apks?|dlls?|links?)|payload\\s{1,3}(?:generat\\w{0,4}|builder|creation|obfuscat\\w{0,5})|malware\\s{1,3}(?:generat\\w{0,4}|builder|creation|deploy\\w{0,4}|dropper)|droppers?|loaders?\\s{1,3}(?:that|to)\\s{1,3}(?:evade|bypass)|ysoserial|deserialization\\s{1,3}(?:gadgets?|payloads?)|stagers?|implants?|stage(?:less|d)\\s{1,3}(?:loaders?|payloads?|beacons?))\\b|\\b(?:generate|generates|generating|create|creates|build|builds|craft|crafts|obfuscate|obfuscates)\\b${G}\\b(?:payloads?|malware|virus|worm|backdoor|exploit)\\b`,
    ),
  },
  {
    id: 'lateral-movement',
    name: 'Moves laterally with supplied credentials',
    pattern: /\bcredential\w{0,2}\b[^.\n]{0,60}?\b(?:remote\s{1,3})?command\s{1,3}execution\b|\b(?:psexec|wmiexec|smbexec|atexec|dcomexec|evil-?winrm|netexec|nxc|crackmapexec|lateral\s{1,3}movement|pivot(?:ing)?\s{1,3}(?:to|into|through))\b|\b(?:remote(?:ly)?\s{1,3}execut\w{0,4}|execute\s{1,3}commands?)\b[^.\n]{0,80}?\b(?:ntlm\s{1,3}hash|hashes|pass[\s-]the|stolen|harvested|captured)\b/,
  },
  {
    id: 'persistence-privesc',
    name: 'Establishes persistence or escalates privileges on a target',
    // "Privilege escalation" alone is a topic an ordinary permissions tool names too ("flags
    // policies that allow privilege escalation"); an action on it is the capability.
    pattern: /\b(?:(?:perform|performs|performing|achieve|achieves|gain|gains|attempt|attempts|attempting|automate|automates|automated|execute|executes|run|runs|carry\s{1,3}out|carries\s{1,3}out)\s{1,3}(?:an?\s{1,3}|the\s{1,3})?(?:[a-z]{2,12}\s{1,3}){0,2}privilege\s{1,3}escalation|privilege\s{1,3}escalation\s{1,3}(?:exploits?|attacks?|payloads?)|escalat\w{0,4}\s{1,3}privileges?|privesc|persistence\s{1,3}(?:mechanism|backdoor|via|using|on)|establish\w{0,3}\s{1,3}persistence|(?:add|grant|write)s?\s{1,3}(?:genericall|dcsync|writedacl|writeowner)|resource[\s-]based\s{1,3}constrained\s{1,3}delegation|rbcd|suid\s{1,3}(?:shell|binary\s{1,3}backdoor)|uac\s{1,3}bypass|bypass(?:es|ing)?\s{1,3}uac|(?:malicious|rogue|immediate)\s{1,3}(?:scheduled\s{1,3})?(?:gpo|task|service)|token\s{1,3}(?:impersonation|theft|stealing)|potato\s{1,3}(?:exploit|attack)|(?:juicy|rotten|sweet|god)potato)\b|\b(?:delegation|acl|dacl|ace|gpo|template|permission|privilege)s?\s{1,3}abuse\b|\babus(?:e|es|ing)\s{1,3}(?:the\s{1,3}|of\s{1,3})?(?:(?:constrained|unconstrained|resource[\s-]based|kerberos)\s{1,3})?(?:delegation|acls?|dacls?|gpos?|certificate\s{1,3}templates?|permissions?|privileges?)\b|\bs4u2(?:self|proxy)\b|\bforce[\s-]?chang(?:e|es|ing)\s{1,3}(?:(?:a|an|the|another|any)\s{1,3})?[a-z]{2,12}(?:'s|s')\s{1,3}passwords?\b|\brequir(?:e|es|ing)\s{1,3}(?:the\s{1,3})?(?:forcechangepassword|genericall|genericwrite|writedacl|writeowner|allextendedrights)\b/,
  },
  {
    id: 'remote-execution-on-target',
    name: 'Runs arbitrary commands on a target or victim system',
    // Generic exec on the user's own machine or server is dual-use; on "the target", "a victim" or
    // "a compromised host" it is an attack step.
    pattern: /\b(?:run|runs|running|execute|executes|executing|exec|issue|issues|send|sends)\b[^.\n]{0,40}?\bcommands?\b[^.\n]{0,40}?\bon\s{1,3}(?:an?\s{1,3}|the\s{1,3}|any\s{1,3}|each\s{1,3}|multiple\s{1,3}|remote\s{1,3})?(?:targets?|victims?|compromised\s{1,3}[a-z]{2,12}|target\s{1,3}(?:hosts?|systems?|machines?|servers?))\b|\barbitrary\s{1,3}(?:command|code)\s{1,3}execution\s{1,3}on\s{1,3}(?:an?\s{1,3}|the\s{1,3})?(?:targets?|victims?|remote)\b/,
  },
  {
    id: 'command-and-control',
    name: 'Command and control or post-exploitation session control',
    pattern: /\bupgrade\w{0,2}\s{1,3}(?:a\s{1,3}|the\s{1,3})?(?:dumb\s{1,3}|reverse\s{1,3}|basic\s{1,3})?shell\b|\b(?:command\s{1,3}and\s{1,3}control|c2\s{1,3}(?:server|channel|framework|agent|beacon|listener|implant|session)s?|beacons?\s{1,3}(?:command|callback|interval)|(?:meterpreter|msf|metasploit|sliver|empire|cobalt\s{1,3}strike|havoc)\s{1,3}(?:sessions?|listeners?|agents?|handlers?|beacons?)|(?:reverse|bind)[\s-]shell\s{1,3}(?:listener|handler|session)s?|post[\s-]exploitation|(?:session|shell)\s{1,3}(?:command|interact\w{0,3})\s{1,3}(?:on|in|with)\s{1,3}(?:a|the)\s{1,3}(?:compromised|exploited|victim))\b/,
  },
  {
    id: 'defense-evasion',
    name: 'Evades or disables defenses',
    pattern: /\b(?:bypass(?:es|ing)?|evad(?:e|es|ing)|disabl(?:e|es|ing)|kill(?:s|ing)?|blind(?:s|ing)?|unhook(?:s|ing)?|patch(?:es|ing)?)\b[^.\n]{0,60}?\b(?:antivirus|anti-virus|av\b|edr|xdr|amsi|etw|defender|applocker|app\s{1,3}locker|wdac|application\s{1,3}(?:allow|white)list\w{0,4}|applicationwhitelist\w{0,4}|endpoint\s{1,3}(?:detection|protection|security)|security\s{1,3}(?:products?|software|controls?|monitoring)|sandbox(?:es)?|event\s{1,3}logs?|audit\s{1,3}logs?|logging)\b|\b(?:av|edr)[\s-]evasion\b|\bclear(?:s|ing)?\s{1,3}(?:the\s{1,3})?(?:event|security|audit)\s{1,3}logs?\b|\bprocess\s{1,3}(?:hollowing|injection|doppelg[aä]nging)\b|\b(?:dll|shellcode|reflective)\s{1,3}(?:injection|loading|loader)\b|\blolbins?\b|\blolbas\b|\b(?:bypass(?:es|ing)?|defeat(?:s|ing)?|break(?:s|ing)?)\b[^.\n]{0,30}?\bcaptchas?\b|\bcaptchas?\b[^.\n]{0,40}?\b(?:bypass\w{0,4}|defeat\w{0,4})\b|\b(?:loader|payload|implant|beacon|shellcode)s?\s{1,3}(?:is\s{1,3}|are\s{1,3})?(?:getting\s{1,3}|being\s{1,3})?detected\b/,
  },
  {
    id: 'exfiltration',
    name: 'Exfiltrates data from a target',
    pattern: /\b(?:exfiltrat\w{1,5}|data\s{1,3}exfil\w{0,7}|covert\s{1,3}channel|dns\s{1,3}tunnel\w{0,5}|icmp\s{1,3}tunnel\w{0,5})\b|\b(?:dump|dumps|dumping|download|downloads|extract|extracts)\s{1,3}(?:an?\s{1,3}|the\s{1,3})?exposed\b/,
  },
  {
    id: 'disruption',
    name: 'Disrupts a target (deauthentication, jamming, denial of service)',
    pattern: /\b(?:deauth\w{0,10}|jamm(?:ing|er)|jam\s{1,3}(?:signals?|wifi|gps|rf|frequenc\w{0,3})|(?:launch|perform|run|execute|start)s?\s{1,3}(?:a\s{1,3})?(?:d?dos|denial[\s-]of[\s-]service|flood)\s{0,3}(?:attacks?)?|syn\s{1,3}flood\w{0,3}|(?:http|udp|icmp)\s{1,3}flood\w{0,3}|wipe\s{1,3}(?:the\s{1,3})?(?:target|victim|remote)|evil\s{1,3}twin|rogue\s{1,3}access\s{1,3}points?|wifi\s{1,3}pineapple)\b/,
  },
  {
    id: 'phishing',
    name: 'Phishing or social-engineering kits',
    pattern: /\b(?:phishing\s{1,3}(?:pages?|sites?|kits?|campaigns?|emails?|templates?)|credential\s{1,3}phishing|clone\s{1,3}(?:a\s{1,3}|the\s{1,3})?(?:login|website|site)\s{1,3}(?:page|to\s{1,3}(?:capture|harvest|steal))|(?:spoof|spoofs|spoofing)\s{1,3}(?:emails?|sender|caller\s{1,3}id|sms))\b/,
  },
];

/**
 * Phrases of a defensive or detecting purpose: the tool finds, reports or tests for a weakness
 * without exploiting it. They lower a capability match to a weak signal, except where the
 * description itself also states the offensive action (the stronger reading wins then).
 */
const DEFENSIVE = /\b(?:detect|detects|detecting|detection\s{1,3}of|scan\s{1,3}for|scans\s{1,3}for|check\s{1,3}(?:for|whether|if)|checks\s{1,3}(?:for|whether|if)|audit|audits|assess|assesses|test\s{1,3}(?:for|whether|if)|tests\s{1,3}(?:for|whether|if)|without\s{1,3}exploit\w{0,6}|does\s{1,3}not\s{1,3}exploit|defensive|hunt\s{1,3}for|harden|hardens|remediat\w{1,5}|mitigat\w{1,5}|rotate|rotates|revoke|revokes)\b/;

/**
 * A description whose main verb reads, lists, removes or analyses (or whose purpose is a named
 * analysis/enumeration/scanning tool) describes a dual-use tool even when its objects are
 * offensive ("list active Meterpreter sessions", "remove DCSync rights", "attack path analysis").
 */
const ANALYTIC_OPENING = /^(?:[a-z]{3,12}ly\s{1,3})?(?:list|lists|get|gets|show|shows|view|views|display|displays|describe|describes|enumerate|enumerates|find|finds|search|searches|query|queries|read|reads|lookup|look\s{1,3}up|discover|discovers|identify|identifies|detect|detects|scan|scans|check|checks|audit|audits|assess|assesses|analy[sz]e|analy[sz]es|map|maps|remove|removes|clear|clears|terminate|terminates|stop|stops|kill|kills|close|closes|revert|reverts|restore|restores|monitor|monitors|validate|validates|verify|verifies)\b/;
const ANALYTIC_PURPOSE = /\b(?:analysis|enumeration|reconnaissance|recon|discovery|scanning|scanner|assessment|auditing|monitoring|detection|threat\s{1,3}hunting|hunting|forensics?|visuali[sz]ation)\s{1,3}(?:and\s{1,3}[a-z]{3,15}\s{1,3})?(?:tool|toolkit|assistant|capabilities|workflow|framework)\b/;

/**
 * Exploiting a named weakness to reach data or a system ("read a file via LFI", "execute a query
 * via injection", "enumerate databases on a confirmed vulnerable target"): offensive whatever the
 * main verb, so an analytic opening does not soften it.
 */
const THROUGH_VULNERABILITY = /\b(?:via|through|using|use|uses|by\s{1,3}exploiting|exploiting)\s{1,3}(?:the\s{1,3}|an?\s{1,3})?(?:confirmed\s{1,3}|known\s{1,3}|detected\s{1,3})?(?:(?:sql|no\s?sql|command|code|os|template|ldap|xpath)\s{1,3})?(?:injection|lfi|rfi|ssti|xxe|ssrf|path\s{1,3}traversal|directory\s{1,3}traversal|deserialization|php\s{1,3}filter\s{1,3}wrapper|the\s{1,3}vulnerability)\b|\bon\s{1,3}(?:a|the)\s{1,3}(?:confirmed\s{1,3})?vulnerable\s{1,3}(?:target|host|server|system|endpoint|application)\b/;

/**
 * Objects that only an attack produces or reaches, whatever the main verb: showing cracked
 * passwords, hunting a target's stores for credentials, coercing a machine to authenticate.
 * A "list"/"search" opening does not make these dual-use.
 */
const ATTACK_OBJECT = /\bcracked\s{1,3}(?:passwords?|hash(?:es)?|credentials?)\b|\b(?:search|searches|searching|find|finds|hunt|hunts|hunting|look|looks)\s{1,3}(?:for\s{1,3})?(?:credentials?|passwords?|creds)(?:[\s-](?:like|related|bearing))?\s{1,3}(?:data|tables?|entries|fields?|columns?|values?|records?)\b|\b(?:trigger|triggers|triggering|coerce|coerces|coercing|force|forces|forcing)\s{1,3}(?:an?\s{1,3}|the\s{1,3})?(?:ntlm|smb|kerberos|machine\s{1,3}account)\s{1,3}authentication\b/;

/**
 * Brute force as a discovery method ("brute-force SID enumeration", "brute-force directories to
 * discover content") is enumeration: dual-use, unlike brute-forcing a secret.
 */
const DISCOVERY_BRUTE_FORCE = /\bbrute[\s-]?forc\w{0,4}\s{1,3}(?:[a-z]{2,12}\s{1,3}){0,2}(?:enumeration|discovery)\b|\bbrute[\s-]?forc\w{0,4}\s{1,3}(?:directories|paths|subdomains|vhosts|virtual\s{1,3}hosts|urls|endpoints)\b/;

/**
 * The purpose part of a description: what comes before a docstring's argument/return sections
 * ("Args:", "Parameters:", "Returns:"). Parameter documentation lists filters and options
 * ("filter for accounts vulnerable to Shadow Credentials", rights such as "dcsync") that say what
 * the tool can select or set, not what it is for.
 */
function purposeSection(description: string): string {
  const section = /\n[ \t]{0,8}(?:args|arguments|parameters|params|returns?|raises|examples?|options)\s{0,2}:/i.exec(description);
  return section === null ? description : description.slice(0, section.index);
}

/** The description without a leading emoji/markdown title ("🔐 **Title** - "). */
function descriptionBody(description: string): string {
  const plain = description.replace(/^[^a-z0-9*]{0,8}/i, '');
  const titled = /^\*\*[^*\n]{1,120}\*\*\s{0,3}[-–—:]\s{0,3}/.exec(plain);
  return titled === null ? plain : plain.slice(titled[0].length);
}

/** Malicious-capability findings of a tool definition (name and description only). */
export function detectMaliciousCapability(tool: ToolDefinitionShape): Finding[] {
  const body = words(descriptionBody(purposeSection((tool.description ?? '').slice(0, 4096))));
  const purpose = `${words(tool.name)}. ${body}`;
  const findings: Finding[] = [];
  const through = THROUGH_VULNERABILITY.test(purpose);
  if (through) findings.push({ id: 'tool.capability.exploit-through-vulnerability', name: 'Malicious capability: reaches data or a system through a named vulnerability', category: 'malicious-capability', confidence: 0.75, tier: 't1' });
  const attackObject = ATTACK_OBJECT.test(purpose);
  if (attackObject) findings.push({ id: 'tool.capability.attack-object', name: 'Malicious capability: handles what only an attack yields (cracked or hunted credentials, coerced authentication)', category: 'malicious-capability', confidence: 0.75, tier: 't1' });
  for (const rule of RULES) {
    if (!rule.pattern.test(purpose)) continue;
    findings.push({ id: `tool.capability.${rule.id}`, name: `Malicious capability: ${rule.name}`, category: 'malicious-capability', confidence: 0.75, tier: 't1' });
  }
  if (findings.length === 0) return findings;
  const opening = body.trimStart();
  if (through || attackObject) return findings;
  const dualUse = ANALYTIC_OPENING.test(opening) || ANALYTIC_PURPOSE.test(body.slice(0, 300)) || DISCOVERY_BRUTE_FORCE.test(body);
  // A defensive purpose statement next to the match, or an analytic main verb: one weak finding instead (dual-use).
  if (dualUse || (DEFENSIVE.test(purpose) && findings.length === 1)) return [{ ...findings[0]!, confidence: 0.35, name: `${findings[0]!.name} (defensive wording: dual-use)` }];
  return findings;
}
