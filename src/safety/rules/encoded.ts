/**
 * Text hidden in base64: a run that decodes to readable text is scanned as well, so an instruction
 * or a link that would be blocked in the clear is blocked encoded ("aWdub3JlIGFsbC…"). Keys, hashes
 * and images decode to bytes, not prose, and are left alone; only one level is decoded.
 */
import type { Finding } from "./finding.ts";

const BASE64_RUN = /(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{24,}={0,2}(?![A-Za-z0-9+/=_-])/g;

/** Decoded text a person could read: printable, with spaces between words. */
function readable(bytes: Buffer): string | null {
  const text = bytes.toString("utf8");
  if (text.includes("\uFFFD") || !/\s/.test(text)) return null;
  // Letters, digits, punctuation, symbols and white space; control characters other than white space are bytes.
  const printable = [...text].filter((c) => /[\p{L}\p{N}\p{P}\p{S}\s]/u.test(c) && !/\p{Cc}/u.test(c.replace(/[\t\n\r]/, "x"))).length;
  return printable / [...text].length >= 0.95 ? text : null;
}

/** Findings of `scan` in every base64 run of `text` that decodes to readable text, marked as encoded. */
export function encodedFindings(text: string, scan: (decoded: string) => Finding[]): Finding[] {
  const out: Finding[] = [];
  for (const m of text.matchAll(BASE64_RUN)) {
    // Both alphabets: standard (+/) and URL-safe (-_).
    const decoded = readable(Buffer.from(m[0].replace(/-/g, "+").replace(/_/g, "/"), "base64"));
    if (decoded === null) continue;
    for (const f of scan(decoded)) out.push({ ...f, label: `${f.label} (base64-encoded)`, excerpt: m[0] });
  }
  return out;
}
