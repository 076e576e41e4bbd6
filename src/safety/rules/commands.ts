/**
 * Network commands that move data out: curl, wget, fetch and the like carrying environment
 * variables, secrets, cookies or local files, piping data into the network, or downloading a
 * script and running it. Read line by line, with shell continuations joined.
 */
import type { Finding } from "./finding.ts";
import { rx } from "./pattern.ts";

/** Variables that say nothing secret; `curl localhost:$PORT/health` is ordinary. */
const HARMLESS_VARS = new Set(["HOME", "PWD", "PORT", "TMPDIR", "VERSION", "ARCH", "OS", "PATH", "SHELL", "LANG", "TERM", "NODE_ENV", "STAGE", "REGION", "BRANCH"]);
/** Variable names that hold a secret; also what makes `printenv NAME` a leak (exfiltration.ts). */
export const SENSITIVE_NAME = /API[_-]?KEY|TOKEN|SECRET|PASSW(?:OR)?D|CREDENTIAL|PRIVATE[_-]?KEY|ACCESS[_-]?KEY|SESSION|COOKIE|AUTH/i;
const SENSITIVE_UPPER = /(?<![A-Za-z_])[A-Z_]{0,40}?(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)[A-Z_]{0,40}(?![a-z])/;

const NET_TOOL = rx(
  String.raw`(?<![\w.-])(?:curl|wget|invoke-webrequest|invoke-restmethod|iwr|irm|ncat|netcat|socat|nslookup|telnet|httpie|sendBeacon|XMLHttpRequest|new\s+WebSocket)(?![\w-])|(?<![\w.-])nc\s+(?:-\w+\s+)*[\w.$-]+\s+\d{2,5}(?!\w)|(?<![\w.])(?:fetch|axios(?:\.\w+)?|requests\.(?:get|post|put|patch)|http\.request|https\.request|urllib\.request\.urlopen)\s*\(`,
);

/** Physical lines joined across shell (`\`) and PowerShell (backtick) continuations. */
function logicalLines(text: string): string[] {
  return text.replace(/[\\`][ \t]*\r?\n/g, " ").split(/\r?\n/);
}

/** Shell substitution that runs a command: `$(...)`, or backticks around a command word. */
const SUBSTITUTION = /\$\(|`\s*(?:cat|whoami|id|hostname|env|printenv|uname|base64|head|tail|ls|pwd|echo)\b[^`]*`|%[A-Z_]+%/i;
const UPLOAD_FILE = /\s-d\s*@|--data(?:-binary|-raw|-urlencode|-ascii)?[\s=]+["']?@|\s-F\s+["']?[\w-]+=@|--form\s+["']?[\w-]+=@|\s-T\s+\S|--upload-file/;
const PIPE_TO_SHELL = /\|\s*(?:sudo\s+)?(?:ba|z|k|da|fi)?sh(?![\w-])|\|\s*(?:iex|invoke-expression)(?![\w-])/i;
const ENV_DATA = /process\.env\b(?!\.(?:PORT|HOST|NODE_ENV)\b)|os\.environ|os\.getenv|document\.cookie|localStorage|sessionStorage/;

export function commandFindings(deconf: string): Finding[] {
  const out: Finding[] = [];
  const push = (label: string, excerpt: string): void => {
    out.push({ kind: "exfiltration", label, excerpt });
  };
  for (const line of logicalLines(deconf)) {
    NET_TOOL.lastIndex = 0;
    const tool = NET_TOOL.exec(line);
    if (tool) {
      // Inside a markdown `code span` the command ends at the closing backtick.
      const ticksBefore = (line.slice(0, tool.index).match(/`/g) ?? []).length;
      let cmd = line.slice(tool.index);
      if (ticksBefore % 2 === 1 && cmd.includes("`")) cmd = cmd.slice(0, cmd.indexOf("`"));
      // A code call (`fetch(`...) uses `${x}` for its own variables; only shell `$VAR` is the environment.
      const isCodeCall = tool[0].trimEnd().endsWith("(");
      const envVars = isCodeCall ? [] : [...cmd.matchAll(/\$(?:env:)?\{?([A-Za-z_][A-Za-z0-9_]*)/gi)].map((m) => m[1] ?? "");
      if (envVars.some((v) => !HARMLESS_VARS.has(v.toUpperCase()))) push("network command carrying an environment variable", cmd);
      else if (!isCodeCall && SUBSTITUTION.test(cmd)) push("network command with command substitution", cmd);
      else if (ENV_DATA.test(cmd)) push("network call carrying environment data or cookies", cmd);
      else if (SENSITIVE_UPPER.test(cmd)) push("network command carrying a secret", cmd);
      else if (UPLOAD_FILE.test(cmd)) push("network command uploading a local file", cmd);
      else if (PIPE_TO_SHELL.test(cmd)) push("downloads a script and pipes it into a shell", cmd);
    }
    const pipeOut = /\|\s*(?:curl|wget|nc|ncat|netcat|socat)(?![\w-])/i.exec(line);
    if (pipeOut) push("pipes data into a network command", line.slice(Math.max(0, pipeOut.index - 40)));
    const run = /(?<![\w-])(?:iex|invoke-expression)(?![\w-])[^\n]*(?:downloadstring|iwr|invoke-webrequest|irm|invoke-restmethod)|downloadstring[^\n]*\|\s*(?:iex|invoke-expression)|(?<![\w-])(?:ba|z)?sh\s+(?:-c\s+)?["']?(?:\$\(|<\()\s*(?:curl|wget)/i.exec(line);
    if (run) push("downloads a script and runs it", run[0]);
  }
  return out;
}
