"""The loaded workspaces and everything that keeps their state: the registry and its path
spellings, one workspace's actors (one writer per category file, `actor`, `envelope`), the write
lock they commit under (`write_lock`, `lock_wait`), the snapshots readers see, the usage
sidecar, the read-only sources' index (`source_index`) and the user-wide memory beside each
project (`scopes`)."""
