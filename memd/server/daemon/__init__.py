"""The daemon's lifecycle: bind or inherit the socket (`activation`), hold the single-instance
lock (`instance`), accept and serve connections, reload, drain and shut down by an absolute
deadline (`exit_deadline`), and tell the service manager (`notify`). The top of the server: it
may import every other part of it."""
