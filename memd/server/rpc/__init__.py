"""JSON-RPC over the socket: one connection's frames (`connection`), whose peer it is (`peer`),
envelopes, batches and the handler stage (`dispatch`), a connection's subscriptions and outbox
(`session`), and every conversion of the core's values to wire Structs with the sentences users
read (`wire`). Imports nothing else of the server: the plumbing every part above may use."""
