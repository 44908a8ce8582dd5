"""memd client library (placeholder until the client lands)."""
