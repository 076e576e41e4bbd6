/** The tests' Prometheus text parser: it reads the format, and refuses what a scraper would. */
import { describe, expect, it } from "vitest";
import { parsePrometheusText, sumOf } from "../support/prom-text.ts";

const VALID = `# HELP http_requests_total The total number of HTTP requests.
# TYPE http_requests_total counter
http_requests_total{method="post",code="200"} 1027 1395066363000
http_requests_total{method="post",code="400"}    3 1395066363000

# Escaping in label values:
msdos_file_access_time_seconds{path="C:\\\\DIR\\\\FILE.TXT",error="Cannot find file:\\n\\"FILE.TXT\\""} 1.458255915e9

# A histogram:
# HELP latency_seconds A histogram of latencies.
# TYPE latency_seconds histogram
latency_seconds_bucket{le="0.05"} 24054
latency_seconds_bucket{le="0.1"} 33444
latency_seconds_bucket{le="+Inf"} 144320
latency_seconds_sum 53423
latency_seconds_count 144320
# TYPE up gauge
up NaN
temperature -Inf
`;

describe("parsePrometheusText", () => {
  it("reads samples, labels with escapes, types, help, timestamps and special floats", () => {
    const f = parsePrometheusText(VALID);
    expect(f.get("http_requests_total")).toMatchObject({ type: "counter", help: "The total number of HTTP requests." });
    expect(sumOf(f, "http_requests_total")).toBe(1030);
    expect(f.get("http_requests_total")?.samples[0]?.timestamp).toBe(1395066363000);
    expect(f.get("msdos_file_access_time_seconds")?.samples[0]?.labels).toEqual({ path: "C:\\DIR\\FILE.TXT", error: 'Cannot find file:\n"FILE.TXT"' });
    expect(f.get("latency_seconds")?.samples).toHaveLength(5);
    expect(Number.isNaN(f.get("up")?.samples[0]?.value)).toBe(true);
    expect(f.get("temperature")).toMatchObject({ type: "untyped", samples: [{ value: -Infinity }] });
  });

  it.each([
    ["a missing final line feed", "up 1"],
    ["a bad metric name", "1up 1\n"],
    ["a value that is not a float", "up one\n"],
    ["text after the timestamp", "up 1 2 3\n"],
    ["an unterminated label value", 'up{a="1} 1\n'],
    ["a bad escape", 'up{a="\\t"} 1\n'],
    ["a label twice", 'up{a="1",a="2"} 1\n'],
    ["a series twice", "up 1\nup 2\n"],
    ["a TYPE twice", "# TYPE up gauge\n# TYPE up gauge\n"],
    ["a TYPE after samples", "up 1\n# TYPE up gauge\n"],
    ["an unknown type", "# TYPE up meter\n"],
    ["interleaved families", 'a{x="1"} 1\nb 1\na{x="2"} 1\n'],
    ["a negative counter", "# TYPE c_total counter\nc_total -1\n"],
    ["a histogram without +Inf", '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n'],
    ["buckets that are not cumulative", '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="2"} 1\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 2\n'],
    ["a count that is not the +Inf bucket", '# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 3\n'],
  ])("refuses %s", (_, text) => {
    expect(() => parsePrometheusText(text)).toThrow();
  });
});
