-- wrk script: POST the body file given as the first argument with the API key given as the
-- second; at the end print one JSON line of figures for bench/ingest.py to read.
function init(args)
  local file = assert(io.open(args[1], "rb"))
  wrk.body = file:read("*a")
  file:close()
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["X-API-Key"] = args[2]
end

function done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    '{"requests": %d, "seconds": %.3f, "non_2xx": %d, "socket_errors": %d, ' ..
    '"p50_ms": %.2f, "p99_ms": %.2f, "max_ms": %.2f}\n',
    summary.requests, summary.duration / 1e6, errors.status,
    errors.connect + errors.read + errors.write + errors.timeout,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
end
