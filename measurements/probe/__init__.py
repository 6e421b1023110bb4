"""The on-box probe: what to sweep (request, config, workloads), how one request is sent and
timed (send, sse), the sweep and its levels (sweep, records, saturation), and the session around
it (engines to launch or attach, GPU facts, capabilities, redaction of secrets)."""
