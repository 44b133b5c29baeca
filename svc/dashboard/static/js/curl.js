// "Copy as cURL" (docs/repro-kit.md): a captured request as a shell command. A value that was
// redacted in the report is never pasted as if it were real: its header or parameter is left
// out, and a comment above the command says so.

const REDACTED = /\[redacted\]|%5bredacted%5d/i;

// Printable ASCII goes in '...' as it is; anything else (controls, DEL, C1, line breaks,
// U+2028/9, any non-ASCII) makes the value $'...' with escapes, as browsers' own "Copy as cURL
// (bash)" does: a raw Ctrl-C or newline pasted into a terminal ends the command and runs the
// rest as the reporter wrote it.
const UNPRINTABLE = /[^\x20-\x7e]/;
const C_ESCAPES = { "\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t", "!": "\\x21" };

// A character by its code point, as bash's $'...' and a reader of a comment both take it.
function codePoint(character) {
  const code = character.codePointAt(0);
  return code < 0x10000 ? `\\u${code.toString(16).padStart(4, "0")}` : `\\U${code.toString(16).padStart(8, "0")}`;
}

function escaped(character) {
  if (C_ESCAPES[character]) return C_ESCAPES[character];
  const code = character.codePointAt(0);
  if (code >= 0x20 && code < 0x7f) return character;
  // \xNN is one byte: only for ASCII; other characters by code point, which bash writes as UTF-8.
  if (code < 0x80) return `\\x${code.toString(16).padStart(2, "0")}`;
  return codePoint(character);
}

export function quote(value) {
  const text = String(value);
  if (!UNPRINTABLE.test(text)) return `'${text.replace(/'/g, "'\\''")}'`;
  return `$'${Array.from(text, escaped).join("")}'`;
}

// A comment line holds no raw control either: what is not printable ASCII is written \uXXXX.
const oneLine = (text) => String(text).replace(/[^\x20-\x7e]/gu, codePoint);

function headerPairs(headers) {
  if (Array.isArray(headers)) {
    return headers.map((item) => (Array.isArray(item) ? item : [item && item.name, item && item.value]))
      .filter(([name]) => name);
  }
  return headers && typeof headers === "object" ? Object.entries(headers) : [];
}

// The address without the parameters whose values were redacted (and without a redacted
// user:password@); as captured, byte for byte, when nothing in it was.
function sendableUrl(captured, notes) {
  if (!REDACTED.test(captured)) return captured;
  try {
    const url = new URL(captured);
    if (REDACTED.test(url.password)) {
      url.username = "";
      url.password = "";
      notes.push("# the address's user and password were redacted in the report: left out");
    }
    for (const [name, value] of [...url.searchParams]) {
      if (REDACTED.test(value)) {
        url.searchParams.delete(name);
        notes.push(`# query parameter ${oneLine(name)} left out: redacted in the report`);
      }
    }
    return url.href;
  } catch (_) {
    notes.push("# parts of this address were redacted in the report: fill them in");
    return captured;
  }
}

// What a browser's URL parser and a reader (or the service's urlsplit) read differently: a
// backslash, spaces, tabs and line breaks (which the parser drops), controls.
const AMBIGUOUS = /[\\\x00-\x20\x7f]/;

// The address as the command sends it (contract v6): an http(s) address the WHATWG parse reads
// plainly, normalised; null for anything else. curl's first word is never the reporter's: `-Lo`
// would be options, `[1-3]` three requests, `file:` and `gopher:` other protocols.
function commandUrl(address) {
  if (AMBIGUOUS.test(address)) return null;
  let url;
  try {
    url = new URL(address);
  } catch (_) {
    return null;
  }
  if (!["http:", "https:"].includes(url.protocol) || url.username || url.password) return null;
  return url.href;
}

export function curlCommand(entry) {
  const notes = [];
  const method = String(entry.method || "GET").toUpperCase();
  const captured = String(entry.url || "");
  const address = commandUrl(sendableUrl(captured, notes));
  if (address === null) {
    return [...notes, `# not a command: only http(s) addresses become one (${oneLine(captured)})`].join("\n");
  }
  const parts = [`curl --globoff --url ${quote(address)}`];
  if (method !== "GET") parts.push(`-X ${quote(method)}`);
  for (const [name, value] of headerPairs(entry.requestHeaders)) {
    if (REDACTED.test(String(value))) notes.push(`# header ${oneLine(name)} left out: redacted in the report`);
    else parts.push(`-H ${quote(`${name}: ${value}`)}`);
  }
  const body = entry.requestBody;
  if (body !== undefined && body !== null) {
    const text = typeof body === "string" ? body : JSON.stringify(body);
    if (REDACTED.test(text)) notes.push("# the body holds values redacted in the report: fill them in before sending");
    parts.push(`--data-raw ${quote(text)}`);
  }
  return [...notes, parts.join(" \\\n  ")].join("\n");
}
