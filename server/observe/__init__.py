"""What the server reports: a log line, metrics and spans for each request, the process's logging
and OpenTelemetry."""
